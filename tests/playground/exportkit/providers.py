"""A loopback HTTP server that answers like the Anthropic and OpenAI APIs and records requests.

It speaks just enough of each wire protocol for the official SDKs to accept the reply:
`POST /v1/messages` returns a Messages API `message`, `POST /v1/chat/completions` a
`chat.completion`. Every request is kept with its path, headers (lower-cased) and parsed body.

A request with `"stream": true` is answered with server-sent events in the API's streaming
format (chunked transfer encoding): text deltas, a tool call when the request offers tools, the
stop reason and usage. `FakeProviders.plan(...)` queues `Behaviour`s for the next requests:
slow tokens, a timeout, an error status (429 with `retry-after`, 5xx), a malformed event or a
stream cut off mid-reply.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
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
    at: float = 0.0  # time.monotonic() when its body had arrived: when the call started


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


STREAM_TEXT = "Hello from the fake provider, streamed token by token."
TOOL_ARGUMENTS = {"query": "cache hit ratio", "limit": 3}


@dataclass(frozen=True)
class Behaviour:
    """How to answer one request. `kind`: "ok", "status" (an error answer), "sleep" (answer
    after `seconds`: a timeout for a client with a shorter one), "malformed" (a stream with
    an event that is not JSON), "cut" (a stream that stops mid-reply, connection dropped)."""

    kind: str = "ok"
    status: int = 200
    retry_after: str | None = None
    seconds: float = 0.0
    token_delay: float = 0.0
    text: str = STREAM_TEXT  # what a streamed reply says


def _tokens(text: str = STREAM_TEXT) -> list[str]:
    words = text.split(" ")
    return [w if i == 0 else " " + w for i, w in enumerate(words)]


def _anthropic_events(request: dict[str, Any], behaviour: Behaviour) -> Iterator[tuple[str, Any]]:
    model = request.get("model", "unknown")
    yield (
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": MESSAGE_ID,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 11, "output_tokens": 1},
            },
        },
    )
    yield (
        "content_block_start",
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    )
    for n, token in enumerate(_tokens(behaviour.text)):
        if behaviour.kind == "malformed" and n == 2:
            yield "content_block_delta", "{this is not json"
            return
        if behaviour.kind == "cut" and n == 3:
            return
        yield (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": token},
            },
        )
    yield "content_block_stop", {"type": "content_block_stop", "index": 0}
    stop = "end_turn"
    if request.get("tools"):
        stop = "tool_use"
        name = request["tools"][0]["name"]
        yield (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 1,
                "content_block": {
                    "type": "tool_use",
                    "id": "toolu_fake_1",
                    "name": name,
                    "input": {},
                },
            },
        )
        encoded = json.dumps(TOOL_ARGUMENTS)
        for part in (encoded[:10], encoded[10:]):
            yield (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 1,
                    "delta": {"type": "input_json_delta", "partial_json": part},
                },
            )
        yield "content_block_stop", {"type": "content_block_stop", "index": 1}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": len(_tokens(behaviour.text))},
        },
    )
    yield "message_stop", {"type": "message_stop"}


def _openai_chunks(request: dict[str, Any], behaviour: Behaviour) -> Iterator[tuple[str, Any]]:
    model = request.get("model", "unknown")

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": COMPLETION_ID,
            "object": "chat.completion.chunk",
            "created": 1_700_000_000,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
        }

    yield "", chunk({"role": "assistant", "content": ""})
    for n, token in enumerate(_tokens(behaviour.text)):
        if behaviour.kind == "malformed" and n == 2:
            yield "", "{this is not json"
            return
        if behaviour.kind == "cut" and n == 3:
            return
        yield "", chunk({"content": token})
    finish = "stop"
    if request.get("tools"):
        finish = "tool_calls"
        name = request["tools"][0]["function"]["name"]
        encoded = json.dumps(TOOL_ARGUMENTS)
        yield (
            "",
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_fake_1",
                            "type": "function",
                            "function": {"name": name, "arguments": encoded[:10]},
                        }
                    ]
                }
            ),
        )
        yield "", chunk({"tool_calls": [{"index": 0, "function": {"arguments": encoded[10:]}}]})
    yield "", chunk({}, finish)
    if (request.get("stream_options") or {}).get("include_usage"):
        yield (
            "",
            {
                "id": COMPLETION_ID,
                "object": "chat.completion.chunk",
                "created": 1_700_000_000,
                "model": model,
                "choices": [],
                "usage": {"prompt_tokens": 11, "completion_tokens": 9, "total_tokens": 20},
            },
        )
    yield "", "[DONE]"


_STREAMS = {"/v1/messages": _anthropic_events, "/v1/chat/completions": _openai_chunks}


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
        self.server.record(RecordedRequest("POST", path, headers, body, time.monotonic()))
        route = _ROUTES.get(path)
        if route is None:
            self._reply(404, {"type": "error", "error": {"message": f"no route {path}"}})
            return
        behaviour = self.server.next_behaviour()
        if behaviour.kind == "sleep":
            time.sleep(behaviour.seconds)
        if behaviour.kind == "status":
            error = {"type": "error", "error": {"type": "fake_error", "message": "planned failure"}}
            extra = {"retry-after": behaviour.retry_after} if behaviour.retry_after else {}
            self._reply(behaviour.status, error, extra)
            return
        if isinstance(body, dict) and body.get("stream"):
            self._stream(_STREAMS[path](body, behaviour), behaviour)
            return
        self._reply(200, route(body))

    def _stream(self, events: Iterator[tuple[str, Any]], behaviour: Behaviour) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("request-id", "req_redline_export_test")
        self.end_headers()
        self.close_connection = True
        try:
            self._write_events(events, behaviour)
        except (BrokenPipeError, ConnectionResetError):
            return  # the client hung up (a cancelled run closes its stream)

    def _write_events(self, events: Iterator[tuple[str, Any]], behaviour: Behaviour) -> None:
        for name, data in events:
            payload = data if isinstance(data, str) else json.dumps(data)
            text = (f"event: {name}\n" if name else "") + f"data: {payload}\n\n"
            raw = text.encode()
            self.wfile.write(f"{len(raw):x}\r\n".encode() + raw + b"\r\n")
            self.wfile.flush()
            if behaviour.token_delay:
                time.sleep(behaviour.token_delay)
        if behaviour.kind == "cut":
            return  # no terminating chunk: the connection drops mid-body
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

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

    def _reply(
        self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", "req_redline_export_test")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # quiet test output
        return


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[RecordedRequest] = []
        self.behaviours: list[Behaviour] = []
        self._lock = threading.Lock()

    def record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def next_behaviour(self) -> Behaviour:
        with self._lock:
            return self.behaviours.pop(0) if self.behaviours else Behaviour()


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
            self._server.behaviours.clear()

    def plan(self, *behaviours: Behaviour) -> None:
        """Answer the next requests with these behaviours, in order; then normally."""
        with self._server._lock:
            self._server.behaviours.extend(behaviours)
