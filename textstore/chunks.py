"""Chunked snapshots: the format of full texts kept in object storage.

A text is cut into chunks of `chunk_chars` characters (the last may be shorter); each chunk's
UTF-8 bytes are deflated on their own and the object is the concatenation of those payloads.
The index, kept in the database beside the blob, holds one fixed-size entry per chunk: the
payload's length and the SHA-256 of the chunk's UTF-8 bytes. So character offset `o` lives in
chunk `o // chunk_chars`, its bytes are found by summing lengths, and a range read fetches
only the chunks it needs with one ranged GET and verifies each of them.
"""

import hashlib
import os
import struct
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

from .compression import CODEC_ZLIB, CodecError, deflate, payload_decompress

ENTRY = struct.Struct(">I32s")  # payload length, sha256 of the chunk's UTF-8 bytes
CHUNK_LEVEL = 6  # deflate level: a 10 MB text compresses in well under a second
T = TypeVar("T")
R = TypeVar("R")
_THREADS = max(1, min(4, os.cpu_count() or 1))  # zlib and hashlib release the GIL


class ChunkError(ValueError):
    """A chunk or the index does not match what was stored."""


@dataclass(frozen=True)
class ChunkEntry:
    start: int  # byte offset of the payload in the object
    end: int
    sha256: bytes


def _map(function: Callable[[T], R], items: Sequence[T]) -> list[R]:
    if len(items) < 4 or _THREADS == 1:
        return [function(item) for item in items]
    with ThreadPoolExecutor(max_workers=_THREADS) as pool:
        return list(pool.map(function, items))


def _encode_chunk(piece: str) -> tuple[bytes, bytes]:
    data = piece.encode("utf-8")
    return deflate(data, level=CHUNK_LEVEL), hashlib.sha256(data).digest()


def chunks_encode(text: str, *, chunk_chars: int) -> tuple[bytes, bytes]:
    """(object bytes, index bytes) for `text`. An empty text has no chunks."""
    if chunk_chars <= 0:
        raise ValueError("chunk_chars must be positive")
    pieces = [text[i : i + chunk_chars] for i in range(0, len(text), chunk_chars)]
    encoded = _map(_encode_chunk, pieces)
    index = b"".join(ENTRY.pack(len(payload), digest) for payload, digest in encoded)
    return b"".join(payload for payload, _ in encoded), index


def chunk_index_parse(index: bytes) -> list[ChunkEntry]:
    if len(index) % ENTRY.size:
        raise ChunkError("chunk index has a partial entry")
    entries = []
    offset = 0
    for length, digest in ENTRY.iter_unpack(index):
        entries.append(ChunkEntry(start=offset, end=offset + length, sha256=digest))
        offset += length
    return entries


def _decode_chunk(item: tuple[bytes, bytes]) -> str:
    payload, digest = item
    try:
        data = payload_decompress(CODEC_ZLIB, payload)
    except CodecError as exc:
        raise ChunkError(str(exc)) from exc
    if hashlib.sha256(data).digest() != digest:
        raise ChunkError("chunk does not match its SHA-256")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ChunkError(f"chunk is not UTF-8: {exc}") from exc


def chunks_decode(data: bytes, entries: Sequence[ChunkEntry]) -> list[str]:
    """Decode consecutive chunks from `data`, which starts at `entries[0].start`.

    Every chunk is checked against its SHA-256; ChunkError names the first that fails.
    """
    if not entries:
        return []
    base = entries[0].start
    if len(data) != entries[-1].end - base:
        raise ChunkError(f"expected {entries[-1].end - base} bytes of chunks, got {len(data)}")
    items = [(data[e.start - base : e.end - base], e.sha256) for e in entries]
    return _map(_decode_chunk, items)
