"""Redline's ASGI handler: Django's, with a request thread that a long response can let go.

Under ASGI, Django runs a request's sync code (the sync middleware, the view, the
`request_finished` signal) on one thread of the request's own: asgiref's thread-sensitive
context. Django's stock handler keeps that thread until the response has been sent, so an open
server-sent-events stream parked one idle thread for its whole life (500 open streams: 508
threads in the server, docs/operations.md "Run streams").

Here each request's thread-sensitive context runs on a `RequestExecutor`: the same one thread for
every sync call of the request, as before, but `request_thread_release()` lets that thread end.
An async response body calls it once the sync part is over (after closing the request's
database connections); a later sync call of the same request (closing the response) gets a
fresh thread. A stream then holds no thread while it waits, only a coroutine.

It also limits request bodies before Django reads them (common/bodylimit.py): a declared length
past the limit is a 413 before a byte is read, and a body without one is counted as it arrives
and refused as soon as it passes the limit.
"""

from __future__ import annotations

import tempfile
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from contextvars import ContextVar
from typing import Any, ParamSpec, TypeVar

from asgiref.sync import ThreadSensitiveContext
from django.conf import settings
from django.core.exceptions import RequestAborted
from django.core.handlers.asgi import ASGIHandler

from common.bodylimit import body_declared_too_large, body_limit, body_refusal_json

P = ParamSpec("P")
T = TypeVar("T")

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[Mapping[str, Any]]]
Send = Callable[[Mapping[str, Any]], Awaitable[None]]


class RequestExecutor(Executor):
    """One call at a time, on one thread, started on first use; `release` lets the thread end
    (after its current call) and the next call starts another."""

    def __init__(self) -> None:
        self._pool: ThreadPoolExecutor | None = None

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="redline-request")
        return self._pool.submit(fn, *args, **kwargs)

    def release(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False)
            self._pool = None

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=wait, cancel_futures=cancel_futures)
            self._pool = None


_request_executor: ContextVar[RequestExecutor | None] = ContextVar(
    "redline_request_executor", default=None
)


def request_thread_release() -> bool:
    """Let the current request's sync thread end; False outside a request of this handler
    (WSGI, tests' in-process client)."""
    executor = _request_executor.get()
    if executor is None:
        return False
    executor.release()
    return True


class BodyTooLarge(Exception):
    """A body without a declared length went past its limit while being read."""

    def __init__(self, limit: int) -> None:
        super().__init__(limit)
        self.limit = limit


_body_limit: ContextVar[int] = ContextVar("redline_body_limit", default=0)


async def _refuse_body(send: Send, limit: int) -> None:
    """413 straight from the handler (nothing has been sent yet); the connection is closed, so
    the server reads no more of the body."""
    body = body_refusal_json(limit)
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class RedlineASGIHandler(ASGIHandler):
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            # As Django's handler: only HTTP (the server answers lifespan events itself).
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not {scope['type']}.")
        # A body is limited before Django reads any of it (common/bodylimit.py).
        path = scope.get("path", "")
        headers = dict(scope.get("headers") or [])
        length = headers.get(b"content-length")
        declared_limit = body_declared_too_large(path, length.decode("latin-1") if length else None)
        if declared_limit is not None:
            await _refuse_body(send, declared_limit)
            return
        limit_token = _body_limit.set(body_limit(path))
        executor = RequestExecutor()
        token = _request_executor.set(executor)
        try:
            async with ThreadSensitiveContext(executor=executor):
                await self.handle(scope, receive, send)
        except BodyTooLarge as error:
            await _refuse_body(send, error.limit)
        finally:
            _request_executor.reset(token)
            _body_limit.reset(limit_token)
            # No call is left: Django awaited every task of the request. Don't block the loop.
            executor.shutdown(wait=False)

    async def read_body(self, receive: Receive) -> Any:
        """Django's `read_body`, counting: past the request's limit the part read is dropped and
        BodyTooLarge ends the request (a 413) before anything more is read or written."""
        limit = _body_limit.get()
        body_file = tempfile.SpooledTemporaryFile(
            max_size=settings.FILE_UPLOAD_MAX_MEMORY_SIZE, mode="w+b"
        )
        received = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                body_file.close()
                raise RequestAborted()
            chunk = message.get("body", b"")
            received += len(chunk)
            if limit and received > limit:
                body_file.close()
                raise BodyTooLarge(limit)
            if chunk:
                body_file.write(chunk)
            if not message.get("more_body", False):
                break
        body_file.seek(0)
        return body_file
