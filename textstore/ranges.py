"""Ranges of stored texts without rebuilding them whole (selectors re-exports the public ones).

A range of a text whose chain rests on a chunked snapshot in object storage is mapped through the
chain's deltas down to the snapshot and read with ranged GETs of the chunks it covers, each chunk
verified by its SHA-256. On top of that: the common start and end of two texts (what a diff of
two long texts can skip), counting a character, and streaming a whole text a window at a time.
"""

import bisect
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import unquote

from common.textdiff import common_prefix, common_suffix

from . import objects
from .cache import delta_ops_cache, text_cache
from .chains import ChainRow, cached_text, chain_read, delta_text, integrity_error, rows_rebuild
from .chunks import chunk_index_parse, chunks_decode
from .exceptions import InvalidRange, ObjectNotFound
from .models import Blob


@dataclass(frozen=True)
class BlobRange:
    """Characters `[offset, offset + len(text))` of a text of `total` characters."""

    offset: int
    text: str
    total: int


def blob_read_range(*, sha: str, offset: int, length: int) -> str:
    """Characters `[offset, offset + length)` of the text, clipped to its end (see blob_range)."""
    return blob_range(sha=sha, offset=offset, length=length).text


def blob_range(*, sha: str, offset: int, length: int) -> BlobRange:
    """Characters `[offset, offset + length)` of the text, clipped to its end, with its length.

    A text whose chain rests on a full snapshot kept in object storage is never rebuilt whole:
    the range is mapped through the chain's deltas (each a list of copies from its base and
    inserted text) down to the snapshot, and only the chunks those copies touch are fetched,
    with ranged GETs, each verified by its SHA-256. So a screenful of a 50 MB text, or of a
    one-line edit of it, costs one query and a chunk or two. Each delta is checked to span its
    base exactly and to produce the recorded length; one that does not (or a base holding
    characters outside the BMP, where diff-match-patch counts UTF-16 units) falls back to the
    full, hash-verified rebuild. Texts on inline snapshots are small: read whole, verified.
    """
    if offset < 0 or length < 0:
        raise InvalidRange("offset and length must not be negative")
    cached = text_cache.get(sha)
    if cached is not None:
        return BlobRange(offset=offset, text=cached[offset : offset + length], total=len(cached))
    rows = chain_read(sha)
    total = rows[0].char_length
    end = min(offset + length, total)
    if offset >= end:
        return BlobRange(offset=offset, text="", total=total)
    snapshot = rows[-1]
    if snapshot.kind == Blob.Kind.FULL and snapshot.object_key:
        try:
            text = "".join(_chain_range(rows, 0, offset, end))
            return BlobRange(offset=offset, text=text, total=total)
        except _Unmappable:
            pass
    return BlobRange(offset=offset, text=rows_rebuild(sha, rows)[offset:end], total=total)


class _Unmappable(Exception):
    """A delta whose counts cannot be read as code points of its base (see blob_read_range)."""


@dataclass(frozen=True)
class _Op:
    """One operation of a delta, placed in the target: a copy of the base from `source`, or
    inserted `text`."""

    start: int
    end: int
    source: int | None
    text: str


# Characters scanned at a time when translating UTF-16 offsets in a base with astral characters.
_SCAN_CHARS = 1 << 20


def _delta_ops(rows: list[ChainRow], level: int) -> list[_Op]:
    """The copies and insertions of `rows[level]`'s delta, in target order and in code points.

    diff-match-patch counts copies and deletions in UTF-16 units. When the delta spans exactly
    the base's length in code points, the base is all BMP and units are code points; otherwise
    the operations' boundaries are translated by scanning the base a window at a time (once per
    process per delta: the result is cached). Raises _Unmappable if the delta does not fit.
    """
    row = rows[level]
    cached: list[_Op] | None = delta_ops_cache.get(row.sha256)
    if cached is not None:
        return cached
    tokens: list[tuple[str, int, str]] = []
    pointer = 0
    for token in delta_text(row).split("\t"):
        if not token:
            continue
        op, param = token[0], token[1:]
        if op == "+":
            tokens.append((op, 0, unquote(param) if "%" in param else param))
            continue
        if op not in "=-" or not (param.isascii() and param.isdigit()):
            raise integrity_error(row, f"invalid delta operation {token[:20]!r}")
        tokens.append((op, int(param), ""))
        pointer += int(param)
    base_length = rows[level + 1].char_length
    if pointer == base_length:
        points = None
    else:
        units = sorted({0, pointer, *_unit_boundaries(tokens)})
        points = _units_to_points(rows, level + 1, units)
        if points[pointer] != base_length:
            raise _Unmappable
    ops: list[_Op] = []
    target = unit = 0
    for op, count, text in tokens:
        if op == "+":
            ops.append(_Op(start=target, end=target + len(text), source=None, text=text))
            target += len(text)
            continue
        start = unit if points is None else points[unit]
        unit += count
        stop = unit if points is None else points[unit]
        if op == "=" and stop > start:
            ops.append(_Op(start=target, end=target + stop - start, source=start, text=""))
            target += stop - start
    if target != row.char_length:
        raise _Unmappable
    delta_ops_cache.put(row.sha256, ops)
    return ops


def _unit_boundaries(tokens: list[tuple[str, int, str]]) -> Iterator[int]:
    unit = 0
    for op, count, _ in tokens:
        if op != "+":
            unit += count
            yield unit


def _units_to_points(rows: list[ChainRow], level: int, units: list[int]) -> dict[int, int]:
    """Code-point offsets in the text of `rows[level]` of the given UTF-16 offsets (sorted)."""
    total = rows[level].char_length
    found: dict[int, int] = {}
    pending = iter(units)
    want = next(pending, None)
    unit_at = point_at = 0
    while want is not None:
        if want == unit_at:
            found[want] = point_at
            want = next(pending, None)
            continue
        if point_at >= total:
            raise _Unmappable
        window = "".join(_chain_range(rows, level, point_at, min(point_at + _SCAN_CHARS, total)))
        encoded = window.encode("utf-16-le")
        window_units = len(encoded) // 2
        while want is not None and want <= unit_at + window_units:
            try:
                inside = len(encoded[: 2 * (want - unit_at)].decode("utf-16-le"))
            except UnicodeDecodeError:
                raise _Unmappable from None  # a boundary inside a surrogate pair
            found[want] = point_at + inside
            want = next(pending, None)
        unit_at += window_units
        point_at += len(window)
    return found


def _chain_range(rows: list[ChainRow], level: int, start: int, end: int) -> list[str]:
    """Pieces of characters `[start, end)` of the text of `rows[level]`."""
    row = rows[level]
    cached = cached_text(row.sha256)
    if cached is not None:
        return [cached[start:end]]
    if level == len(rows) - 1:
        if row.kind != Blob.Kind.FULL:
            raise integrity_error(rows[0], f"chain ends at {row.sha256}, which is not full")
        return [_chunked_range(row, start, end)]
    ops = _delta_ops(rows, level)
    pieces: list[str] = []
    first = bisect.bisect_right([op.start for op in ops], start) - 1
    for op in ops[max(first, 0) :]:
        if op.start >= end:
            break
        lo, hi = max(start, op.start), min(end, op.end)
        if lo >= hi:
            continue
        if op.source is None:
            pieces.append(op.text[lo - op.start : hi - op.start])
        else:
            shift = op.source - op.start
            pieces.extend(_chain_range(rows, level + 1, lo + shift, hi + shift))
    return pieces


# Characters compared at a time when looking for where two long texts start to differ.
_COMPARE_CHARS = 1 << 20


def _rows_range(rows: list[ChainRow], start: int, end: int) -> str:
    """Characters `[start, end)` of the text of `rows[0]` (see blob_range)."""
    end = min(end, rows[0].char_length)
    if start >= end:
        return ""
    cached = cached_text(rows[0].sha256)
    if cached is not None:
        return cached[start:end]
    if rows[-1].kind == Blob.Kind.FULL and rows[-1].object_key:
        try:
            return "".join(_chain_range(rows, 0, start, end))
        except _Unmappable:
            pass
    return rows_rebuild(rows[0].sha256, rows)[start:end]


def _delta_ends(child: list[ChainRow], parent_length: int) -> tuple[int, int] | None:
    """Unchanged prefix and suffix of a text stored as a delta on the other one, read off the
    delta's first and last copies (at least that much is common), or None if not mappable."""
    try:
        ops = _delta_ops(child, 0)
    except _Unmappable:
        return None
    if not ops:
        return 0, 0
    first, last = ops[0], ops[-1]
    prefix = first.end if first.source == 0 and first.start == 0 else 0
    suffix = 0
    if last.source is not None and last.end == child[0].char_length:
        if last.source + (last.end - last.start) == parent_length:
            suffix = last.end - last.start
    return prefix, suffix


def _chunk_prefix(a: list[ChainRow], b: list[ChainRow]) -> int:
    """Characters in the leading chunks two chunked snapshots share (by the chunks' hashes)."""
    x, y = a[0], b[0]
    if len(a) > 1 or len(b) > 1 or not (x.object_key and y.object_key):
        return 0
    if x.chunk_chars != y.chunk_chars or not x.chunk_chars:
        return 0
    try:
        xs, ys = (
            chunk_index_parse(bytes(x.chunk_index or b"")),
            chunk_index_parse(bytes(y.chunk_index or b"")),
        )
    except ValueError:
        return 0
    same = 0
    # A last chunk may be short in one text only: it counts only if both texts end there.
    for ex, ey in zip(xs[:-1], ys[:-1], strict=False):
        if ex.sha256 != ey.sha256:
            break
        same += 1
    return same * x.chunk_chars


def blob_common_ends(*, a: str, b: str) -> tuple[int, int]:
    """How many characters texts `a` and `b` share at their start and at their end (the two
    never overlap), without holding either whole: what a diff of two long texts skips.

    When one text is stored as a delta on the other, the ends are read off the delta's first
    and last copies and only the region between is compared further; two chunked snapshots
    skip the leading chunks whose hashes agree; the rest is compared a window at a time
    through range reads. Two queries (the chains), then object-storage ranges as needed.
    """
    rows_a, rows_b = chain_read(a), chain_read(b)
    length_a, length_b = rows_a[0].char_length, rows_b[0].char_length
    if a == b:
        return length_a, 0
    known: tuple[int, int] | None = None
    if len(rows_b) > 1 and rows_b[1].sha256 == a:
        known = _delta_ends(rows_b, length_a)
    elif len(rows_a) > 1 and rows_a[1].sha256 == b:
        known = _delta_ends(rows_a, length_b)
    shortest = min(length_a, length_b)
    prefix, suffix = known or (_chunk_prefix(rows_a, rows_b), 0)
    prefix = min(prefix, shortest)
    while prefix < shortest:
        end = min(prefix + _COMPARE_CHARS, shortest)
        x, y = _rows_range(rows_a, prefix, end), _rows_range(rows_b, prefix, end)
        if x == y:
            prefix = end
            continue
        prefix += common_prefix(x, y)
        break
    room = shortest - prefix
    suffix = min(suffix, room)
    while suffix < room:
        size = min(_COMPARE_CHARS, room - suffix)
        x = _rows_range(rows_a, length_a - suffix - size, length_a - suffix)
        y = _rows_range(rows_b, length_b - suffix - size, length_b - suffix)
        if x == y:
            suffix += size
            continue
        suffix += common_suffix(x, y)
        break
    return prefix, suffix


def blob_count(*, sha: str, needle: str, end: int, start: int = 0) -> int:
    """Occurrences of the one-character `needle` in characters `[start, end)` of the text,
    counted a window at a time (one query; ranges as in blob_range): line numbers deep in a long
    text, or the lines of a region too long to diff."""
    rows = chain_read(sha)
    end = min(end, rows[0].char_length)
    count = 0
    start = max(0, start)
    while start < end:
        stop = min(start + _COMPARE_CHARS, end)
        count += _rows_range(rows, start, stop).count(needle)
        start = stop
    return count


def blob_stream(*, sha: str, step: int) -> Iterator[str]:
    """The whole text, `step` characters at a time, never held whole (one query, then ranges
    as in blob_range). Each chunk of a snapshot is verified as it is read."""
    rows = chain_read(sha)
    total = rows[0].char_length
    start = 0
    while start < total:
        stop = min(start + step, total)
        yield _rows_range(rows, start, stop)
        start = stop


def _chunked_range(row: Blob | ChainRow, offset: int, end: int) -> str:
    size = int(row.chunk_chars or 0)
    try:
        entries = chunk_index_parse(bytes(row.chunk_index or b""))
    except ValueError as exc:
        raise integrity_error(row, str(exc)) from exc
    if len(entries) != -(-row.char_length // size):
        raise integrity_error(row, "chunk index does not cover the text")
    first, last = offset // size, (end - 1) // size
    needed = entries[first : last + 1]
    try:
        data = objects.object_get_range(
            key=row.object_key, start=needed[0].start, end=needed[-1].end
        )
        pieces = chunks_decode(data, needed)
    except ObjectNotFound as exc:
        raise integrity_error(row, f"snapshot object is missing: {exc}") from exc
    except ValueError as exc:
        raise integrity_error(row, f"chunk {first}..{last} is damaged: {exc}") from exc
    for number, piece in enumerate(pieces, start=first):
        if len(piece) != min(size, row.char_length - number * size):
            raise integrity_error(row, f"chunk {number} has the wrong length")
    text = "".join(pieces)
    skip = offset - first * size
    return text[skip : skip + end - offset]
