"""A loopback HTTP server that answers like the Anthropic and OpenAI APIs and records requests.

It speaks just enough of each wire protocol for the official SDKs to accept the reply:
`POST /v1/messages` returns a Messages API `message`, `POST /v1/chat/completions` a
`chat.completion`. Every request is kept with its path, headers (lower-cased) and parsed body.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MESSAGE_ID = "msg_redline_export_test"
COMPLETION_ID = "chatcmpl-redline-export-test"


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


def _anthropic_message(request: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": MESSAGE_ID,
        "type": "message",
        "role": "assistant",
        "model": request.get("model", "unknown"),
        "content": [{"type": "text", "text": "ok"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 3, "output_tokens": 1},
    }


def _openai_completion(request: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": COMPLETION_ID,
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": request.get("model", "unknown"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "ok", "refusal": None},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
    }


_ROUTES = {
    "/v1/messages": _anthropic_message,
    "/v1/chat/completions": _openai_completion,
}


class _Handler(BaseHTTPRequestHandler):
    # HTTP/1.1 so that curl's `Expect: 100-continue` (sent for large bodies) is answered at once.
    protocol_version = "HTTP/1.1"
    server: _Server

    def do_POST(self) -> None:  # noqa: N802 - the name http.server dispatches to
        raw = self._read_body()
        path = self.path.split("?", 1)[0]
        try:
            body = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            self._reply(400, {"type": "error", "error": {"message": f"bad JSON: {exc}"}})
            return
        headers = {name.lower(): value for name, value in self.headers.items()}
        self.server.record(RecordedRequest("POST", path, headers, body))
        route = _ROUTES.get(path)
        if route is None:
            self._reply(404, {"type": "error", "error": {"message": f"no route {path}"}})
            return
        self._reply(200, route(body))

    def _read_body(self) -> bytes:
        if self.headers.get("transfer-encoding", "").lower() == "chunked":
            chunks: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";", 1)[0].strip(), 16)
                if size == 0:
                    self.rfile.readline()
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("content-length", "0")))

    def _reply(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", "req_redline_export_test")
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # quiet test output
        return


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()

    def record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)


class FakeProviders:
    """Start with `with FakeProviders() as providers:`; read `providers.requests`."""

    def __init__(self) -> None:
        self._server = _Server()
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> FakeProviders:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    @property
    def origin(self) -> str:
        host, port = self._server.server_address[:2]
        assert isinstance(host, str)  # an AF_INET server: (host, port)
        return f"http://{host}:{port}"

    def base_urls(self) -> dict[str, str]:
        """The SDKs' base-URL variables, pointed here (OpenAI's includes `/v1`, as its default)."""
        return {"ANTHROPIC_BASE_URL": self.origin, "OPENAI_BASE_URL": f"{self.origin}/v1"}

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._server._lock:
            return list(self._server.requests)

    def clear(self) -> None:
        with self._server._lock:
            self._server.requests.clear()
