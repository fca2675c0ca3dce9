"""A real HTTP receiver on loopback for webhook tests: records every request, answers the
statuses it is told in turn (then 200), or hangs until released."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    url: str
    statuses: list[int] = field(default_factory=list)
    hang: bool = False
    requests: list[Received] = field(default_factory=list)
    answered: int = 0
    release: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def wait_for(self, count: int, timeout: float = 30.0) -> list[Received]:
        """The first `count` requests, once they have arrived (a bound, not a timing claim)."""
        wait_until(lambda: len(self.requests) >= count, timeout)
        return self.requests[:count]


def wait_until(condition: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("the condition did not come true in time")
        time.sleep(0.02)


@contextmanager
def receiver_running() -> Iterator[Receiver]:
    state: dict[str, Receiver] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            me = state["receiver"]
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            with me.lock:
                me.requests.append(Received(self.path, dict(self.headers.items()), body))
                status = me.statuses.pop(0) if me.statuses else 200
            if me.hang:
                me.release.wait(120)
                return
            self.send_response(status)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            self.wfile.write(b"ok" if status < 300 else b"nope")
            with me.lock:
                me.answered += 1

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state["receiver"] = Receiver(url=f"http://127.0.0.1:{server.server_port}/hooks/redline")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state["receiver"]
    finally:
        state["receiver"].release.set()
        server.shutdown()
        server.server_close()
