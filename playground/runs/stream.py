"""Server-sent events for one run, read from the run's row (a polled column).

Why a polled column and not Redis pub/sub: it works unchanged in the embedded default (SQLite,
no Redis) and with real workers, a reconnecting reader resumes exactly from its character
offset (`Last-Event-ID`), and a reader that connects late or after the end still gets all of
it. The price is one small query per poll per open stream; polls back off from
RUN_STREAM_POLL_MIN_MS to RUN_STREAM_POLL_MAX_MS while nothing changes.

Events: `token` `{"text", "offset"}` (id = the offset after it), then one `done` with the run.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

from django.conf import settings

from ..models import Run
from .selectors import run_stream_chunk

KEEPALIVE_SECONDS = 15.0


def sse(event: str, data: Any, *, event_id: int | None = None) -> bytes:
    lines = [f"event: {event}"]
    if event_id is not None:
        lines.append(f"id: {event_id}")
    lines.append("data: " + json.dumps(data, ensure_ascii=False, separators=(",", ":")))
    return ("\n".join(lines) + "\n\n").encode("utf-8")


def run_events(*, run_id: int, offset: int, final: Callable[[], dict[str, Any]]) -> Iterator[bytes]:
    """Tokens from `offset` on, then `done` with `final()` once the run is finished."""
    low = settings.RUN_STREAM_POLL_MIN_MS / 1000
    high = max(low, settings.RUN_STREAM_POLL_MAX_MS / 1000)
    deadline = time.monotonic() + settings.RUN_STREAM_MAX_SECONDS
    # Tell EventSource to reconnect after 1 s if the connection drops; it resumes from its id.
    yield b"retry: 1000\n\n"
    poll = low
    quiet_since = time.monotonic()
    while True:
        chunk = run_stream_chunk(run_id=run_id, offset=offset)
        if chunk.missing:
            yield sse("error", {"detail": "Not found."})
            return
        if chunk.text:
            offset += len(chunk.text)
            yield sse("token", {"text": chunk.text, "offset": offset}, event_id=offset)
            poll = low
            quiet_since = time.monotonic()
        # Status and tail come from one read, and the final write sets both at once, so no
        # text can arrive after the status says finished.
        if chunk.status in Run.FINISHED:
            yield sse("done", final(), event_id=offset)
            return
        now = time.monotonic()
        if now >= deadline:
            yield b": stream time limit reached; reconnect to resume\n\n"
            return
        if now - quiet_since >= KEEPALIVE_SECONDS:
            yield b": keep-alive\n\n"
            quiet_since = now
        time.sleep(poll)
        if not chunk.text:
            poll = min(high, poll * 1.5)
