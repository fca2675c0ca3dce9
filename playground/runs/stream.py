"""Server-sent events for one run (docs/operations.md, "Run streams").

The run's row is the source of truth: its `output` column (appended by the worker) and its
status, read together. Under the ASGI server (`make serve`) the response body is an async
iterator, so an open stream holds no thread and no database connection while it waits: it
awaits the run's notification channel (Redis pub/sub, `notify.py`) or, without one, a timer,
and reads the row on a small thread pool of its own (RUN_STREAM_DB_THREADS). Under a WSGI
server (`make run`'s runserver, tests' live server) the same stream runs as a plain generator
that polls.

Either way a stream
- resumes exactly from a character offset (`Last-Event-ID` / `?offset=`),
- re-checks the caller's access every RUN_STREAM_RECHECK_SECONDS and ends with an `error`
  event once it is gone,
- holds one of the caller's RUN_STREAMS_PER_USER slots (a lease in the cache) until it ends.

Events: `token` `{"text", "offset"}` (id = the offset after it), then one `done` with the run;
`error` `{"detail"}` when the run or the access to it is gone.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connections

from common.asgi import request_thread_release
from common.exceptions import NotFound, RateLimited
from common.leases import Lease, lease_acquire, lease_release, lease_renew

from ..exceptions import PlaygroundError
from ..models import Run
from .notify import InboxLost, Notice, RunInbox, run_channel, run_join, run_leave
from .selectors import run_stream_chunk

KEEPALIVE_SECONDS = 15.0
RETRY = b"retry: 1000\n\n"  # EventSource reconnects after 1 s, resuming from its last id
GONE = {"detail": "Not found."}
# Without a notification channel a stream polls the row, backing off from the first to the
# second while nothing changes (seconds).
POLL_MIN_SECONDS = 0.010
POLL_MAX_SECONDS = 0.250
# A stream's slot lease lives this long unless renewed at an access re-check: at least two
# re-checks and a margin, so an open stream keeps its slot and a crashed process's slots free
# themselves.
LEASE_MIN_SECONDS = 90

T = TypeVar("T")


def sse(event: str, data: Any, *, event_id: int | None = None) -> bytes:
    lines = [f"event: {event}"]
    if event_id is not None:
        lines.append(f"id: {event_id}")
    lines.append("data: " + json.dumps(data, ensure_ascii=False, separators=(",", ":")))
    return ("\n".join(lines) + "\n\n").encode("utf-8")


@dataclass
class RunStream:
    """One open stream: where it is in the output, and the sync steps both drivers share.

    `check` raises NotFound when the caller may no longer see the run; `final` is the `done`
    event's body. Both run against the database, like `read`.
    """

    run_id: int
    offset: int
    check: Callable[[], None]
    final: Callable[[], dict[str, Any]]
    lease: Lease | None
    channel: str = ""

    def read(self) -> tuple[list[bytes], bool]:
        """The events for what the row holds after `offset`; True once the stream is over."""
        chunk = run_stream_chunk(run_id=self.run_id, offset=self.offset)
        if chunk.missing:
            return [sse("error", GONE)], True
        events = []
        if chunk.text:
            events.append(self._token(chunk.text))
        # Status and tail come from one read, and the final write sets both at once, so no
        # text can arrive after the status says finished.
        if chunk.status in Run.FINISHED:
            events.append(sse("done", self.final(), event_id=self.offset))
            return events, True
        return events, False

    def recheck(self) -> list[bytes]:
        """[] while the caller may still see the run (and the lease is renewed), else the
        `error` event that ends the stream."""
        try:
            self.check()
        except NotFound:
            return [sse("error", GONE)]
        if self.lease is not None:
            lease_renew(lease=self.lease)
        return []

    def recheck_and_read(self) -> tuple[list[bytes], bool]:
        ended = self.recheck()
        return (ended, True) if ended else self.read()

    def release(self) -> None:
        if self.lease is not None:
            lease_release(lease=self.lease)
            self.lease = None

    def take(self, notice: Notice) -> bytes | None:
        """The token event for a notified piece that continues exactly where the stream is;
        b"" when it is all old; None when the row must be read (a gap, a status change)."""
        if notice.offset is None:
            return None
        end = notice.offset + len(notice.text)
        if end <= self.offset:
            return b""
        if notice.offset > self.offset:
            return None
        return self._token(notice.text[self.offset - notice.offset :])

    def _token(self, text: str) -> bytes:
        self.offset += len(text)
        return sse("token", {"text": text, "offset": self.offset}, event_id=self.offset)


# A reconnecting client retries after this many seconds when all its slots are taken.
CAP_RETRY_AFTER = 5
OFFSET_MAX_DIGITS = 12


def stream_offset_parse(*, name: str, raw: str, length: int) -> int:
    """A client's resume point: a whole number of characters from 0 to the output's `length`
    (ids this stream sent never exceed it). Anything else is a 400 naming `name`."""
    value = raw.strip()
    if not value.isascii() or not value.isdigit() or len(value) > OFFSET_MAX_DIGITS:
        raise PlaygroundError(
            f"{name}: must be a whole number of characters (0 to {length}).", field=name
        )
    offset = int(value)
    if offset > length:
        raise PlaygroundError(
            f"{name}: {offset} is past the end of the run's output ({length} characters so far).",
            field=name,
        )
    return offset


def run_stream_open(
    *,
    user_id: int,
    run_id: int,
    offset: int,
    check: Callable[[], None],
    final: Callable[[], dict[str, Any]],
) -> RunStream:
    """A stream holding one of the user's RUN_STREAMS_PER_USER slots, or RateLimited (429)."""
    limit = settings.RUN_STREAMS_PER_USER
    lease = lease_acquire(scope="run-stream", ident=str(user_id), limit=limit, ttl=_lease_seconds())
    if lease is None:
        raise RateLimited(
            f"Too many open run streams: at most {limit} per account at once. Close one (or"
            " let it finish) and retry.",
            retry_after=CAP_RETRY_AFTER,
        )
    return RunStream(
        run_id=run_id,
        offset=offset,
        check=check,
        final=final,
        lease=lease,
        channel=run_channel(run_id),
    )


def _lease_seconds() -> int:
    return max(LEASE_MIN_SECONDS, 2 * settings.RUN_STREAM_RECHECK_SECONDS + 5)


def _first_recheck(now: float) -> float:
    # Spread the re-checks of streams opened together over the interval.
    return now + settings.RUN_STREAM_RECHECK_SECONDS * random.uniform(0.5, 1.0)  # noqa: S311


# --- WSGI: a generator that polls ---------------------------------------------------------------


def run_events(stream: RunStream) -> Iterator[bytes]:
    """Tokens from the stream's offset on, then `done`; polls the row, backing off from
    POLL_MIN_SECONDS to POLL_MAX_SECONDS while nothing changes."""
    low, high = POLL_MIN_SECONDS, POLL_MAX_SECONDS
    start = time.monotonic()
    deadline = start + settings.RUN_STREAM_MAX_SECONDS
    recheck_at = _first_recheck(start)
    try:
        yield RETRY
        poll = low
        quiet_since = start
        while True:
            events, over = stream.read()
            yield from events
            if over:
                return
            now = time.monotonic()
            if events:
                poll, quiet_since = low, now
            if now >= recheck_at:
                ended = stream.recheck()
                if ended:
                    yield from ended
                    return
                recheck_at = now + settings.RUN_STREAM_RECHECK_SECONDS
            if now >= deadline:
                yield b": stream time limit reached; reconnect to resume\n\n"
                return
            if now - quiet_since >= KEEPALIVE_SECONDS:
                yield b": keep-alive\n\n"
                quiet_since = now
            time.sleep(poll)
            if not events:
                poll = min(high, poll * 1.5)
    finally:
        stream.release()


# --- ASGI: an async generator that awaits ---------------------------------------------------------

_executor: ThreadPoolExecutor | None = None


def _db_executor() -> ThreadPoolExecutor:
    global _executor
    if _executor is None:
        _executor = ThreadPoolExecutor(
            max_workers=settings.RUN_STREAM_DB_THREADS, thread_name_prefix="redline-stream-db"
        )
    return _executor


def _with_connection(func: Callable[[], T]) -> T:
    # The pool's threads keep their connections (at most RUN_STREAM_DB_THREADS per process,
    # whatever the number of streams): one that broke is dropped before the next read, as
    # Django does between requests.
    for conn in connections.all(initialized_only=True):
        if conn.connection is not None and conn.errors_occurred and not conn.is_usable():
            conn.close()
    return func()


async def _db(func: Callable[[], T]) -> T:
    """`func` on the streams' own small pool: open streams share its few connections, and a
    stream that waits holds none."""
    return await sync_to_async(_with_connection, thread_sensitive=False, executor=_db_executor())(
        func
    )


async def run_events_async(stream: RunStream) -> AsyncIterator[bytes]:
    """The ASGI body: like `run_events`, but awaiting instead of sleeping, woken by the run's
    notification channel when there is one."""
    # The view ran on this request's own thread, which opened a connection (credentials,
    # access, the offset check). Close it, then let the thread go (common/asgi.py): the stream
    # waits holding neither a connection nor a thread.
    await sync_to_async(connections.close_all, thread_sensitive=True)()
    request_thread_release()
    start = time.monotonic()
    deadline = start + settings.RUN_STREAM_MAX_SECONDS
    recheck_at = _first_recheck(start)
    low, high = POLL_MIN_SECONDS, POLL_MAX_SECONDS
    channel: RunInbox | None = None
    try:
        yield RETRY
        channel = await run_join(channel=stream.channel)
        poll = low
        quiet_since = time.monotonic()
        must_read = True  # read the row first: it holds everything before the subscription
        while True:
            if must_read:
                events, over = await _db(stream.read)
                for event in events:
                    yield event
                if over:
                    return
                if events:
                    poll, quiet_since = low, time.monotonic()
                elif channel is None:
                    poll = min(high, poll * 1.5)
                must_read = False
            now = time.monotonic()
            if now >= recheck_at:
                if channel is None:  # the channel was lost (or never came): try it again
                    channel = await run_join(channel=stream.channel)
                # Access, then the row (now and then, whatever the channel), in one hop.
                events, over = await _db(stream.recheck_and_read)
                for event in events:
                    yield event
                if over:
                    return
                if events:
                    quiet_since = time.monotonic()
                recheck_at = now + settings.RUN_STREAM_RECHECK_SECONDS
            if now >= deadline:
                yield b": stream time limit reached; reconnect to resume\n\n"
                return
            if now - quiet_since >= KEEPALIVE_SECONDS:
                yield b": keep-alive\n\n"
                quiet_since = now
                continue
            wake = min(recheck_at, deadline, quiet_since + KEEPALIVE_SECONDS) - now
            if channel is None:
                await asyncio.sleep(min(poll, max(0.0, wake)))
                must_read = True
                continue
            try:
                notice = await channel.next(timeout=max(0.0, wake))
            except InboxLost:
                await run_leave(channel)
                channel, must_read = None, True
                continue
            if notice is None:
                continue
            piece = stream.take(notice)
            if piece is None:
                must_read = True
            elif piece:
                yield piece
                quiet_since = time.monotonic()
    finally:
        await run_leave(channel)
        await _db(stream.release)
