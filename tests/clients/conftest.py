"""A live Redline server for the Python client, with a log kept on the server side.

`redline_server` wraps the live server's WSGI application (pytest-django's `live_server`) in
`ServerLog` for one test: every request the client makes is recorded as the server answered it
(status, body size, the `If-None-Match` it carried), so revalidation is counted where it
happens. `ServerLog.fail_next` makes the server answer the next requests with an error status
(503 or 429 with `Retry-After`) before the app sees them, and `ServerLog.rewrite` changes the
app's answers to one path (a server that sends long texts as a head plus `text_url`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from accounts.services import api_token_create
from tests.factories import make_user
from tests.playground.exportkit.providers import FakeProviders


@dataclass(frozen=True)
class Served:
    method: str
    path: str
    query: str
    status: int
    body_bytes: int
    if_none_match: str | None
    authorization: str | None


@dataclass(frozen=True)
class Fault:
    status: int
    retry_after: str | None


Rewrite = Callable[[int, bytes], bytes]

_REASONS = {429: "Too Many Requests", 503: "Service Unavailable"}


@dataclass
class ServerLog:
    app: Callable[..., Any]
    served: list[Served] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    rewrites: dict[str, Rewrite] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def fail_next(self, count: int, *, status: int = 503, retry_after: str | None = "0") -> None:
        with self.lock:
            self.faults.extend(Fault(status, retry_after) for _ in range(count))

    def rewrite(self, path: str, change: Rewrite) -> None:
        """Pass 200 answers to `path` through `change(status, body) -> body`."""
        with self.lock:
            self.rewrites[path] = change

    def requests(self, path_part: str = "/api/") -> list[Served]:
        with self.lock:
            return [s for s in self.served if path_part in s.path]

    def clear(self) -> None:
        with self.lock:
            self.served.clear()

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        with self.lock:
            fault = self.faults.pop(0) if self.faults else None
            change = self.rewrites.get(environ["PATH_INFO"])
        if fault is not None:
            body = b'{"detail": "Try again shortly."}'
            headers = [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
            if fault.retry_after is not None:
                headers.append(("Retry-After", fault.retry_after))
            start_response(f"{fault.status} {_REASONS[fault.status]}", headers)
            self._record(environ, fault.status, body)
            return [body]
        answer: dict[str, Any] = {}

        def start(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            answer["status"], answer["headers"] = status, headers
            return lambda data: None  # the app returns its body; nothing writes directly

        result = self.app(environ, start)
        try:
            body = b"".join(result)
        finally:
            if hasattr(result, "close"):
                result.close()  # Django's request_finished: closes the request's connections
        status = int(answer["status"].split()[0])
        headers = answer["headers"]
        if change is not None and status == 200:
            body = change(status, body)
            headers = [(k, v) for k, v in headers if k.lower() != "content-length"]
            headers.append(("Content-Length", str(len(body))))
        start_response(answer["status"], headers)
        self._record(environ, status, body)
        return [body]

    def _record(self, environ: dict[str, Any], status: int, body: bytes) -> None:
        served = Served(
            method=environ["REQUEST_METHOD"],
            path=environ["PATH_INFO"],
            query=environ.get("QUERY_STRING", ""),
            status=status,
            body_bytes=len(body),
            if_none_match=environ.get("HTTP_IF_NONE_MATCH"),
            authorization=environ.get("HTTP_AUTHORIZATION"),
        )
        with self.lock:
            self.served.append(served)


@dataclass(frozen=True)
class RedlineServer:
    url: str
    log: ServerLog


@pytest.fixture
def redline_server(live_server) -> Iterator[RedlineServer]:
    """The live Redline server with this test's `ServerLog` in front of it."""
    httpd = live_server.thread.httpd
    app = httpd.get_app()
    log = ServerLog(app)
    httpd.set_app(log)
    try:
        yield RedlineServer(url=live_server.url, log=log)
    finally:
        httpd.set_app(app)


@dataclass(frozen=True)
class Account:
    user: Any
    key: str


def account(username: str) -> Account:
    user = make_user(username)
    _, key = api_token_create(actor=user)
    return Account(user=user, key=key)


@pytest.fixture
def owner() -> Account:
    return account("client-owner")


@pytest.fixture(scope="session")
def recording_providers() -> Iterator[FakeProviders]:
    """The loopback servers speaking the Anthropic and OpenAI protocols, recording requests."""
    with FakeProviders() as server:
        yield server


@pytest.fixture
def providers(recording_providers: FakeProviders) -> Iterator[FakeProviders]:
    recording_providers.clear()
    yield recording_providers
    recording_providers.clear()
