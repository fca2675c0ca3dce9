"""Streaming ingest: store a text that arrives as an object (an upload) without ever holding it
whole in memory.

`blob_put_object(key=, size=, sha256=, base=)` reads the object at `key` in windows of
`WINDOW_BYTES` and

1. checks it: the object's size, the SHA-256 of its bytes, strict UTF-8 (an incremental decoder,
   so a character split across two windows is fine and a truncated one is not) and, if asked,
   no NUL character. Nothing is written before the whole object passed (`IngestRejected`
   names what failed);
2. stores it through the one write path, `services.blob_write` (an existing row for a text
   already stored, else a delta under the snapshot policy, else a full snapshot), with bounded
   memory. What this module adds is how an object is diffed and written whole:
   - a small text is read whole and is then a text in memory like any other
     (`services.text_in_memory`: diff-match-patch against a small base, stored inline or
     chunked);
   - with a large text or base, a delta is tried: the longest common prefix and suffix of the
     two texts are found by comparing them window by window (the upload forwards and
     backwards, the base through `blob_read_range`), and the delta is
     `=prefix -removed +inserted =suffix` in diff-match-patch's format (counts in UTF-16
     units, like `delta.py`). Every character the delta copies was compared with the upload,
     and what the delta rebuilds is hashed again against the checked SHA-256 before it is
     stored (the object could change under a second PUT). A one-line edit of a 50 MB text
     is a delta of a few dozen bytes;
   - a large text stored whole is a snapshot in object storage in the chunk format of
     chunks.py, encoded chunk by chunk into a temporary file that is then moved (or streamed)
     into place.

Peak memory is a few windows and one chunk, whatever the text's size. The object at `key` is
the caller's: it is read, never deleted here.
"""

import codecs
import hashlib
import logging
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import BinaryIO
from urllib.parse import quote

from django.conf import settings

from common.exceptions import DomainError
from common.textdiff import common_prefix, common_suffix

from . import objects
from .chunks import CHUNK_LEVEL, ENTRY
from .compression import CODEC_ZLIB, FAST_CODECS, deflate, payload_compress
from .exceptions import BlobNotFound, TextstoreIntegrityError
from .models import Blob
from .selectors import blob_read_range
from .services import Delta, NewText, base_row, blob_write, text_in_memory

logger = logging.getLogger(__name__)

WINDOW_BYTES = 1 << 20
# Texts (and bases) up to this size are read whole and stored as texts in memory
# (diff-match-patch finds better deltas than a prefix and suffix; the memory is small).
IN_MEMORY_MAX_BYTES = 1 << 20
# The same characters diff-match-patch leaves unescaped in an insertion (diff_toDelta).
_DELTA_SAFE = "!~*'();/?:@&=+$,# "


class IngestRejected(DomainError, ValueError):
    """The object is not the text it was declared to be: `reason` is one of "size",
    "sha256", "utf8", "nul"."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class _Scan:
    sha256: str
    byte_length: int
    char_length: int


def _windows(key: str, start: int, end: int) -> Iterator[bytes]:
    for offset in range(start, end, WINDOW_BYTES):
        stop = min(end, offset + WINDOW_BYTES)
        data = objects.object_get_range(key=key, start=offset, end=stop)
        if len(data) != stop - offset:
            raise IngestRejected("size", "the object changed size while it was read")
        yield data


def _decoded(key: str, start: int, end: int) -> Iterator[str]:
    """The text of bytes [start, end) of the object, which must start and end on a character
    boundary, in pieces."""
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    for data in _windows(key, start, end):
        piece = decoder.decode(data)
        if piece:
            yield piece
    tail = decoder.decode(b"", final=True)
    if tail:
        yield tail


class _ChunkWriter:
    """Cuts a stream of text pieces into chunks of `chunk_chars` characters, writes each one
    deflated to `handle` and keeps the index (chunks.py's format)."""

    def __init__(self, handle: BinaryIO, chunk_chars: int) -> None:
        self.handle = handle
        self.chunk_chars = chunk_chars
        self.pending = ""  # fewer than chunk_chars characters
        self.index = bytearray()
        self.size = 0

    def feed(self, piece: str) -> None:
        text = self.pending + piece if self.pending else piece
        start = 0
        while len(text) - start >= self.chunk_chars:
            self._emit(text[start : start + self.chunk_chars])
            start += self.chunk_chars
        self.pending = text[start:]

    def close(self) -> None:
        if self.pending:
            self._emit(self.pending)
        self.pending = ""

    def _emit(self, piece: str) -> None:
        data = piece.encode("utf-8")
        payload = deflate(data, level=CHUNK_LEVEL)
        self.handle.write(payload)
        self.index += ENTRY.pack(len(payload), hashlib.sha256(data).digest())
        self.size += len(payload)


def _scan(
    *, key: str, size: int, sha256: str, forbid_nul: bool, writer: _ChunkWriter | None = None
) -> _Scan:
    """Check the object (size, SHA-256, UTF-8, NUL), feeding its text to `writer` if given."""
    actual = objects.object_size(key=key)
    if actual != size:
        raise IngestRejected("size", f"the upload is {actual} bytes, not the declared {size}")
    digest = hashlib.sha256()
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    chars = 0
    offset = 0
    for data in _windows(key, 0, size):
        digest.update(data)
        if forbid_nul and b"\x00" in data:
            at = offset + data.index(b"\x00")
            raise IngestRejected("nul", f"the text contains a NUL character (byte {at})")
        try:
            piece = decoder.decode(data, final=offset + len(data) == size)
        except UnicodeDecodeError as exc:
            raise IngestRejected(
                "utf8", f"the upload is not valid UTF-8 (near byte {offset + exc.start})"
            ) from None
        offset += len(data)
        chars += len(piece)
        if writer is not None and piece:
            writer.feed(piece)
    if size == 0:
        decoder.decode(b"", final=True)
    if digest.hexdigest() != sha256:
        raise IngestRejected("sha256", "the upload does not match its declared SHA-256")
    return _Scan(sha256=sha256, byte_length=size, char_length=chars)


def _utf8_length(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def _astral(text: str) -> int:
    """Characters outside the BMP: each is two UTF-16 units (diff-match-patch's counts)."""
    return 0 if text.isascii() else len(text.encode("utf-16-le")) // 2 - len(text)


def _base_step(base: Blob) -> int:
    return int(base.chunk_chars or settings.TEXTSTORE_CHUNK_CHARS)


def _base_forward(base: Blob, start: int, end: int) -> Iterator[str]:
    step = _base_step(base)
    offset = start
    while offset < end:
        stop = min(end, (offset // step + 1) * step)
        piece = blob_read_range(sha=base.sha256, offset=offset, length=stop - offset)
        if len(piece) != stop - offset:
            raise TextstoreIntegrityError(base.sha256, "a range read came back short")
        yield piece
        offset = stop


def _base_backward(base: Blob, start: int, end: int) -> Iterator[str]:
    step = _base_step(base)
    stop = end
    while stop > start:
        offset = max(start, ((stop - 1) // step) * step)
        piece = blob_read_range(sha=base.sha256, offset=offset, length=stop - offset)
        if len(piece) != stop - offset:
            raise TextstoreIntegrityError(base.sha256, "a range read came back short")
        yield piece
        stop = offset


def _upload_backward(key: str, start: int, end: int) -> Iterator[str]:
    """The text of bytes [start, end) from its end, in pieces (`start` is a char boundary)."""
    stop = end
    while stop > start:
        offset = max(start, stop - WINDOW_BYTES)
        data = objects.object_get_range(key=key, start=offset, end=stop)
        skip = 0
        if offset > start:
            while skip < len(data) and (data[skip] & 0xC0) == 0x80:
                skip += 1  # a continuation byte: the character began in the previous window
        yield data[skip:].decode("utf-8")
        stop = offset + skip


@dataclass(frozen=True)
class _Match:
    chars: int
    bytes: int
    astral: int


def _match(target: Iterator[str], source: Iterator[str], *, backward: bool) -> _Match:
    """How far two streams of pieces agree, from their start (or their end if `backward`)."""
    common = common_suffix if backward else common_prefix
    chars = size = astral = 0
    a = b = ""
    while True:
        if not a:
            a = next(target, "")
        if not b:
            b = next(source, "")
        if not a or not b:
            break
        n = common(a, b)
        same = a[len(a) - n :] if backward else a[:n]
        chars += n
        size += _utf8_length(same)
        astral += _astral(same)
        if n < len(a) and n < len(b):
            break
        a = a[: len(a) - n] if backward else a[n:]
        b = b[: len(b) - n] if backward else b[n:]
    return _Match(chars=chars, bytes=size, astral=astral)


def _stream_delta(*, key: str, scan: _Scan, base: Blob) -> Delta | None:
    """A prefix/suffix delta from `base`'s text to the upload's, or None if the changed middle
    is too large to be worth a delta."""
    inline_max = int(settings.TEXTSTORE_INLINE_MAX)
    total = base.char_length
    try:
        head = _match(
            _decoded(key, 0, scan.byte_length), _base_forward(base, 0, total), backward=False
        )
        tail = _match(
            _upload_backward(key, head.bytes, scan.byte_length),
            _base_backward(base, head.chars, total),
            backward=True,
        )
        inserted_bytes = scan.byte_length - head.bytes - tail.bytes
        if inserted_bytes > inline_max:
            return None
        inserted = "".join(_decoded(key, head.bytes, head.bytes + inserted_bytes))
        removed = total - head.chars - tail.chars
        removed_astral = sum(
            _astral(piece) for piece in _base_forward(base, head.chars, head.chars + removed)
        )
    except (TextstoreIntegrityError, BlobNotFound):
        logger.exception("textstore.base_damaged", extra={"base": base.sha256})
        return None
    if not _rebuilds(base=base, head=head.chars, inserted=inserted, tail=tail.chars, scan=scan):
        # The object changed while it was read (a second PUT to its URL): no delta from it.
        logger.warning("textstore.ingest_changed", extra={"sha256": scan.sha256})
        return None
    tokens = []
    if head.chars:
        tokens.append(f"={head.chars + head.astral}")
    if removed:
        tokens.append(f"-{removed + removed_astral}")
    if inserted:
        tokens.append("+" + quote(inserted.encode("utf-8"), _DELTA_SAFE))
    if tail.chars:
        tokens.append(f"={tail.chars + tail.astral}")
    # Deflate only: LZMA's encoder state alone is ~13 MB, more than everything else here.
    codec, payload = payload_compress("\t".join(tokens).encode("utf-8"), codecs=FAST_CODECS)
    return Delta(codec=codec, payload=payload)


def _rebuilds(*, base: Blob, head: int, inserted: str, tail: int, scan: _Scan) -> bool:
    """Does `base[:head] + inserted + base[-tail:]` hash to the checked upload's SHA-256? The
    delta is built from reads of the object; this ties it to the bytes that were checked."""
    digest = hashlib.sha256()
    pieces = [
        _base_forward(base, 0, head),
        iter([inserted]),
        _base_forward(base, base.char_length - tail, base.char_length),
    ]
    for stream in pieces:
        for piece in stream:
            digest.update(piece.encode("utf-8"))
    return digest.hexdigest() == scan.sha256


def _full_row(*, key: str, scan: _Scan, forbid_nul: bool) -> Blob:
    """Encode the upload as a chunked snapshot under blobs/<sha>, one chunk at a time."""
    chunk_chars = int(settings.TEXTSTORE_CHUNK_CHARS)
    fd, tmp = tempfile.mkstemp(prefix="redline-ingest-")
    try:
        with os.fdopen(fd, "wb") as handle:
            writer = _ChunkWriter(handle, chunk_chars)
            # A second pass, checked again: the object may have changed since the first.
            _scan(
                key=key,
                size=scan.byte_length,
                sha256=scan.sha256,
                forbid_nul=forbid_nul,
                writer=writer,
            )
            writer.close()
        object_key = f"blobs/{scan.sha256}"
        # The object goes first: a row never points at a missing object (as in services.py).
        objects.object_put_file(key=object_key, path=Path(tmp))
    finally:
        Path(tmp).unlink(missing_ok=True)
    size = writer.size + len(writer.index)
    return Blob(
        sha256=scan.sha256,
        char_length=scan.char_length,
        byte_length=scan.byte_length,
        kind=Blob.Kind.FULL,
        snapshot_level=0,
        depth=0,
        run=0,
        delta_bytes=0,
        codec=CODEC_ZLIB,
        payload=None,
        object_key=object_key,
        chunk_chars=chunk_chars,
        chunk_index=bytes(writer.index),
        stored_size=size,
        snapshot_bytes=size,
    )


def blob_put_object(
    *,
    key: str,
    size: int,
    sha256: str,
    base: Blob | str | None = None,
    forbid_nul: bool = False,
) -> Blob:
    """Check the object at `key` against `size` and `sha256` and store its text once.

    Invariants: nothing is stored unless the whole object is `size` bytes of strict UTF-8
    hashing to `sha256` (else IngestRejected, naming the reason); the result is the same row
    `blob_put` would return for that text (an existing one if stored already), written under
    the same snapshot policy (`services.blob_write`); memory stays bounded by a few windows and
    one chunk. `base` is a hint of a similar stored text (BlobNotFound if it does not exist).
    """
    sha256 = sha256.lower()
    base_blob = base_row(base) if base is not None else None
    scan = _scan(key=key, size=size, sha256=sha256, forbid_nul=forbid_nul)

    def streamed_delta(source: Blob) -> Delta | None:
        return _stream_delta(key=key, scan=scan, base=source)

    if size <= IN_MEMORY_MAX_BYTES:
        new = text_in_memory(_small_text(key, scan.sha256))
        if base_blob is not None and base_blob.byte_length > IN_MEMORY_MAX_BYTES:
            new = replace(new, delta_from=streamed_delta)  # the base is read a window at a time
    else:
        new = NewText(
            sha256=scan.sha256,
            char_length=scan.char_length,
            byte_length=scan.byte_length,
            delta_from=streamed_delta,
            full_row=lambda: _full_row(key=key, scan=scan, forbid_nul=forbid_nul),
        )
    return blob_write(new, base=base_blob)


def _small_text(key: str, sha256: str) -> str:
    """The checked object's text, read whole (only for texts up to IN_MEMORY_MAX_BYTES)."""
    text = objects.object_get(key=key).decode("utf-8")
    if hashlib.sha256(text.encode("utf-8")).hexdigest() != sha256:
        raise IngestRejected("sha256", "the upload changed while it was read")
    return text
