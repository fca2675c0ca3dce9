"""JSON exactly as the API renders it, whole or written a piece at a time.

`json_dumps` gives the bytes DRF's JSONRenderer gives under the project's settings (compact,
UTF-8, `\\u2028`/`\\u2029` escaped, DRF's encoder for datetimes and decimals), so a plain Django
view answers byte for byte what an APIView would. `json_stream` writes the same bytes for a
value holding `StreamedString`s — strings too long to build whole (a 50 MB prompt text) — by
writing everything around them with `json_dumps` and each of them one piece at a time, escaped
piecewise (JSON escapes one character at a time, so the pieces join to the whole string's
encoding).
"""

import json
from collections.abc import Iterator
from typing import Any, Protocol, runtime_checkable

from rest_framework.utils.encoders import JSONEncoder

# What the response writes at a time: pieces are gathered up to this many bytes.
STREAM_FLUSH_BYTES = 64 * 1024


@runtime_checkable
class StreamedString(Protocol):
    """A JSON string value produced a piece at a time."""

    def pieces(self) -> Iterator[str]: ...


def json_dumps(value: Any) -> str:
    text = json.dumps(
        value, cls=JSONEncoder, ensure_ascii=False, allow_nan=False, separators=(",", ":")
    )
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _streams(value: Any) -> bool:
    if isinstance(value, StreamedString):
        return True
    if isinstance(value, dict):
        return any(_streams(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_streams(v) for v in value)
    return False


def _pieces(value: Any) -> Iterator[str]:
    if not _streams(value):
        yield json_dumps(value)
    elif isinstance(value, StreamedString):
        yield '"'
        for piece in value.pieces():
            yield json_dumps(piece)[1:-1]
        yield '"'
    elif isinstance(value, dict):
        yield "{"
        for index, (key, item) in enumerate(value.items()):
            yield ("," if index else "") + json_dumps(str(key)) + ":"
            yield from _pieces(item)
        yield "}"
    else:
        yield "["
        for index, item in enumerate(value):
            if index:
                yield ","
            yield from _pieces(item)
        yield "]"


def json_stream(value: Any, *, flush_bytes: int = STREAM_FLUSH_BYTES) -> Iterator[bytes]:
    """`json_dumps(value)` as UTF-8, in pieces of about `flush_bytes`, reading each
    StreamedString as it goes (so no piece holds more than one of its pieces)."""
    buffer: list[bytes] = []
    size = 0
    for piece in _pieces(value):
        data = piece.encode("utf-8")
        buffer.append(data)
        size += len(data)
        if size >= flush_bytes:
            yield b"".join(buffer)
            buffer, size = [], 0
    if buffer:
        yield b"".join(buffer)
