"""Reads of stored texts. Blobs are content-addressed and carry no owner: callers scope access
through the rows that reference a blob (a prompt version, a document revision) before asking
for its text here.

Every full read verifies the SHA-256 of what it rebuilt; a ranged read of a chunked snapshot
verifies the SHA-256 of each chunk it touches. Damage raises `TextstoreIntegrityError`, never
returns wrong text.
"""

import functools
import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection

from . import objects
from .cache import base_cache, text_cache
from .chunks import chunk_index_parse, chunks_decode
from .compression import payload_decompress
from .delta import delta_apply, delta_apply_many
from .exceptions import (
    BlobNotFound,
    ObjectNotFound,
    TextstoreIntegrityError,
)
from .models import Blob

# Ranges, common ends, counts and streams of stored texts live in ranges.py (reading through a
# chain's deltas without rebuilding it); these names are part of this module's public face.
from .ranges import (
    BlobRange,
    blob_common_ends,
    blob_count,
    blob_range,
    blob_read_range,
    blob_stream,
)

__all__ = [
    "CHECKPOINT_EVERY",
    "BlobRange",
    "ChainRow",
    "blob_chain",
    "blob_common_ends",
    "blob_count",
    "blob_lengths",
    "blob_presign_available",
    "blob_range",
    "blob_read",
    "blob_read_range",
    "blob_sizes",
    "blob_stat",
    "blob_stream",
    "blob_verify",
    "object_orphans",
]

_SHA_RE = re.compile(r"^[0-9a-f]{64}$")
# While rebuilding along a run of plain deltas, every CHECKPOINT_EVERY-th text is verified and
# kept in the base cache, so the next read near it applies at most that many deltas.
CHECKPOINT_EVERY = 8
# A chain is bounded by the policy (≤ TEXTSTORE_MAX_CHAIN); this only stops a damaged table
# with a cycle from looping forever.
_CHAIN_GUARD = 100_000


def _check_sha(sha: str) -> str:
    if not isinstance(sha, str) or not _SHA_RE.match(sha):
        raise BlobNotFound(str(sha))
    return sha


def blob_stat(*, sha: str) -> Blob:
    """The blob's row without its payload: lengths, kind, chain position, stored size."""
    blob = Blob.objects.defer("payload", "chunk_index").filter(pk=_check_sha(sha)).first()
    if blob is None:
        raise BlobNotFound(sha)
    return blob


def blob_chain(*, sha: str) -> list[Blob]:
    """The rows needed to rebuild `sha`: the blob first, its full snapshot last (one query)."""
    table = connection.ops.quote_name(Blob._meta.db_table)
    # Table name from model metadata, values as parameters.
    sql = (
        f"WITH RECURSIVE chain(sha, step) AS ("  # noqa: S608
        f" SELECT sha256, 0 FROM {table} WHERE sha256 = %s"
        f" UNION ALL"
        f" SELECT b.base_id, c.step + 1 FROM {table} b JOIN chain c ON b.sha256 = c.sha"
        f" WHERE b.base_id IS NOT NULL AND c.step < %s"
        f") SELECT b.* FROM chain c JOIN {table} b ON b.sha256 = c.sha ORDER BY c.step"
    )
    rows = list(Blob.objects.raw(sql, [_check_sha(sha), _CHAIN_GUARD]))
    if not rows:
        raise BlobNotFound(sha)
    return rows


@dataclass(frozen=True)
class ChainRow:
    """What a read needs of one row of a chain (no bookkeeping columns, no model instance)."""

    sha256: str
    kind: str
    codec: str
    payload: bytes | None
    object_key: str
    chunk_index: bytes | None
    run: int
    snapshot_level: int | None


_READ_COLUMNS = (
    "sha256",
    "kind",
    "codec",
    "payload",
    "object_key",
    "chunk_index",
    "run",
    "snapshot_level",
)


@functools.cache
def _chain_sql(vendor: str, to_checkpoint: bool) -> str:
    """The chain query for a database vendor (built once: names quoted from model metadata).

    With `to_checkpoint` the walk stops, past its first row, at the first checkpoint: a row whose
    run is a multiple of CHECKPOINT_EVERY (snapshots have run 0) — the rows `blob_read` keeps in
    the base cache.
    """
    del vendor  # only the cache key: quoting differs between vendors
    table = connection.ops.quote_name(Blob._meta.db_table)
    columns = ", ".join(f"b.{connection.ops.quote_name(c)}" for c in _READ_COLUMNS)
    run = connection.ops.quote_name("run")
    stop = f" AND (c.step = 0 OR b.{run} %% {CHECKPOINT_EVERY} <> 0)" if to_checkpoint else ""
    # Table and column names from model metadata, values as parameters.
    return (
        f"WITH RECURSIVE chain(sha, step) AS ("  # noqa: S608
        f" SELECT sha256, 0 FROM {table} WHERE sha256 = %s"
        f" UNION ALL"
        f" SELECT b.base_id, c.step + 1 FROM {table} b JOIN chain c ON b.sha256 = c.sha"
        f" WHERE b.base_id IS NOT NULL AND c.step < %s{stop}"
        f") SELECT {columns} FROM chain c JOIN {table} b ON b.sha256 = c.sha ORDER BY c.step"
    )


def _read_chain(sha: str, *, to_checkpoint: bool = False) -> list[tuple[Any, ...]]:
    """The rows needed to rebuild `sha` as plain tuples (`_READ_COLUMNS`), blob first and its
    full snapshot last (with `to_checkpoint`: down to its nearest checkpoint), in one query.

    Tuples through a cursor: a read runs on every cold fetch, and building model instances for
    a chain of up to the cap's length cost more than the query itself. `_chain_row` makes the
    rows a read needs into ChainRows: on a warm server only those above the nearest cached text.
    """
    with connection.cursor() as cursor:
        cursor.execute(
            _chain_sql(connection.vendor, to_checkpoint), [_check_sha(sha), _CHAIN_GUARD]
        )
        rows = cursor.fetchall()
    if not rows:
        raise BlobNotFound(sha)
    return rows


def _nearest_cached(chain: list[tuple[Any, ...]]) -> tuple[int, str | None]:
    """The index of the first row of `chain` whose text is cached, and that text (else the last
    index and None)."""
    for index, r in enumerate(chain):
        text = _cached(r[0])
        if text is not None:
            return index, text
    return len(chain) - 1, None


def _chain_row(r: tuple[Any, ...]) -> ChainRow:
    return ChainRow(
        sha256=r[0],
        kind=r[1],
        codec=r[2],
        payload=None if r[3] is None else bytes(r[3]),
        object_key=r[4] or "",
        chunk_index=None if r[5] is None else bytes(r[5]),
        run=r[6],
        snapshot_level=r[7],
    )


def _integrity(row: Blob | ChainRow, reason: str) -> TextstoreIntegrityError:
    return TextstoreIntegrityError(row.sha256, reason)


def _snapshot_text(row: Blob | ChainRow) -> str:
    """The text of a full snapshot, inline or chunked in object storage."""
    try:
        if row.object_key:
            entries = chunk_index_parse(bytes(row.chunk_index or b""))
            data = objects.object_get(key=row.object_key)
            return "".join(chunks_decode(data, entries))
        return payload_decompress(row.codec, bytes(row.payload or b"")).decode("utf-8")
    except ObjectNotFound as exc:
        raise _integrity(row, f"snapshot object is missing: {exc}") from exc
    except ValueError as exc:  # CodecError, ChunkError, UnicodeDecodeError
        raise _integrity(row, f"snapshot does not decode: {exc}") from exc


def _delta_text(row: Blob | ChainRow) -> str:
    try:
        return payload_decompress(row.codec, bytes(row.payload or b"")).decode("utf-8")
    except ValueError as exc:
        raise _integrity(row, f"delta does not decode: {exc}") from exc


def _cached(sha: str) -> str | None:
    return text_cache.get(sha) or base_cache.get(sha)


def _rebuild(rows: list[Blob], *, use_cache: bool) -> str:
    """Apply the chain's deltas to its snapshot, starting from the nearest cached text."""
    start = len(rows) - 1
    text: str | None = None
    if use_cache:
        for index, row in enumerate(rows):
            text = _cached(row.sha256)
            if text is not None:
                start = index
                break
    if text is None:
        snapshot = rows[-1]
        if snapshot.kind != Blob.Kind.FULL:
            raise _integrity(rows[0], f"chain ends at {snapshot.sha256}, which is not full")
        text = _snapshot_text(snapshot)
    for row in reversed(rows[:start]):
        text = _apply(row, text)
    return text


def _apply(row: Blob | ChainRow, source: str) -> str:
    try:
        return delta_apply(source=source, delta=_delta_text(row))
    except ValueError as exc:
        raise _integrity(row, f"delta does not apply to its base: {exc}") from exc


def _apply_run(rows: list[ChainRow], source: str) -> str:
    """The deltas of `rows` (oldest first) applied to `source` in one pass."""
    if len(rows) == 1:
        return _apply(rows[0], source)
    try:
        return delta_apply_many(source=source, deltas=[_delta_text(row) for row in rows])
    except ValueError:
        pass  # name the delta that does not apply: one by one
    for row in rows:
        source = _apply(row, source)
    return source


def _verified(rows: list[Blob], *, use_cache: bool) -> str:
    text = _rebuild(rows, use_cache=use_cache)
    _check(rows[0], text)
    return text


def _check(row: Blob | ChainRow, text: str) -> None:
    if hashlib.sha256(text.encode("utf-8")).hexdigest() != row.sha256:
        raise _integrity(row, "rebuilt text does not match its SHA-256")


def blob_read(*, sha: str) -> str:
    """The text stored under `sha`, verified against it (or from the LRU of verified texts).

    One query fetches the chain down to its nearest checkpoint (a snapshot, or every
    CHECKPOINT_EVERY-th plain delta of a run, which reads keep in the base cache): at most that
    many rows, and none of the snapshot's payload, however long the run below is. The rebuild
    starts from the nearest cached text on them and applies the deltas above it all at once
    (`delta_apply_many`: the texts in between are never built). A read whose checkpoint is not
    cached yet needs a second query for the chain down to its full snapshot; with an empty base
    cache (a process's first reads) the whole chain is fetched at once.
    Texts enter the base cache only once their own SHA-256 has been checked, so a cached base
    is never wrong.
    """
    cached = text_cache.get(sha)
    if cached is not None:
        return cached
    # Warm (a server that has read near here): the rows down to the nearest checkpoint, whose
    # text is cached. When it is not (yet), a second query reads the whole chain; with nothing
    # in the base cache no checkpoint can be cached, so the whole chain comes at once.
    warm = len(base_cache) > 0
    chain = _read_chain(sha, to_checkpoint=warm)
    start, text = _nearest_cached(chain)
    if text is None and warm and chain[-1][1] != Blob.Kind.FULL:
        chain = _read_chain(sha)
        start, text = _nearest_cached(chain)
    # Only the rows above the nearest cached text are decoded (all of them on a cold read).
    rows = [_chain_row(r) for r in chain[: start + 1]]
    if text is None:
        snapshot = rows[-1]
        if snapshot.kind != Blob.Kind.FULL:
            raise _integrity(rows[0], f"chain ends at {snapshot.sha256}, which is not full")
        text = _snapshot_text(snapshot)
        _check(snapshot, text)
        base_cache.put(snapshot.sha256, text)
    pending: list[ChainRow] = []
    for index in range(start - 1, -1, -1):
        row = rows[index]
        pending.append(row)
        checkpoint = row.snapshot_level is not None or row.run % CHECKPOINT_EVERY == 0
        if index and not checkpoint:
            continue
        # The deltas since the last checkpoint at once: the texts between are never built.
        text = _apply_run(pending, text)
        pending = []
        if index:
            _check(row, text)
            base_cache.put(row.sha256, text)
    if start:
        _check(rows[0], text)
    text_cache.put(sha, text)
    return text


def blob_lengths(*, shas: list[str]) -> dict[str, int]:
    """Length in characters of each stored text among `shas` (one query; unknown ones absent)."""
    wanted = {sha for sha in shas if isinstance(sha, str) and _SHA_RE.match(sha)}
    rows = Blob.objects.filter(pk__in=wanted).values_list("sha256", "char_length")
    return {sha: int(length) for sha, length in rows}


def blob_sizes(*, shas: list[str]) -> dict[str, tuple[int, int]]:
    """(characters, UTF-8 bytes) of each stored text among `shas` (one query; unknown absent)."""
    wanted = {sha for sha in shas if isinstance(sha, str) and _SHA_RE.match(sha)}
    rows = Blob.objects.filter(pk__in=wanted).values_list("sha256", "char_length", "byte_length")
    return {sha: (int(chars), int(size)) for sha, chars, size in rows}


def blob_presign_available() -> bool:
    """Whether texts can be handed out as presigned object-storage URLs (S3 is configured);
    see services.blob_export_url."""
    return objects.object_presign_available()


def blob_verify(*, sha: str) -> None:
    """Rebuild `sha` from storage (never from the cache) and check it and its bookkeeping.

    Raises TextstoreIntegrityError describing the first problem found.
    """
    rows = blob_chain(sha=sha)
    blob = rows[0]
    text = _verified(rows, use_cache=False)
    if len(text) != blob.char_length or len(text.encode("utf-8")) != blob.byte_length:
        raise _integrity(blob, "recorded lengths do not match the text")
    if blob.kind == Blob.Kind.FULL:
        expected = blob.stored_size
        actual = (
            objects.object_size(key=blob.object_key) + len(bytes(blob.chunk_index or b""))
            if blob.object_key
            else len(bytes(blob.payload or b""))
        )
        if actual != expected or blob.snapshot_bytes != blob.stored_size:
            raise _integrity(blob, "recorded stored size does not match the payload")
        return
    base = rows[1]
    problems = []
    if blob.stored_size != len(bytes(blob.payload or b"")):
        problems.append("stored size")
    if blob.depth != base.depth + 1:
        problems.append("depth")
    if blob.delta_bytes != base.delta_bytes + blob.stored_size:
        problems.append("delta bytes")
    if blob.snapshot_bytes != base.snapshot_bytes:
        problems.append("snapshot bytes")
    if blob.is_snapshot:
        if not base.is_snapshot or blob.snapshot_level != (base.snapshot_level or 0) + 1:
            problems.append("snapshot level")
    else:
        anchor = base.sha256 if base.is_snapshot else base.anchor_id
        if blob.run != base.run + 1 or blob.anchor_id != anchor:
            problems.append("run or anchor")
    if problems:
        raise _integrity(blob, "bookkeeping does not match its base: " + ", ".join(problems))


BLOB_PREFIX = "blobs"
_ORPHAN_BATCH = 1000


def object_orphans(*, older_than: datetime | None = None) -> Iterator[objects.ObjectInfo]:
    """Objects under blobs/ that no blob row references (optionally: modified before
    `older_than`). A save writes its object before its row, so a young orphan may be a save
    still in flight: callers that delete pass a grace period."""

    def unreferenced(batch: list[objects.ObjectInfo]) -> Iterator[objects.ObjectInfo]:
        known = set(
            Blob.objects.filter(object_key__in=[o.key for o in batch]).values_list(
                "object_key", flat=True
            )
        )
        yield from (o for o in batch if o.key not in known)

    batch: list[objects.ObjectInfo] = []
    for info in objects.object_list(prefix=BLOB_PREFIX):
        if older_than is not None and info.modified >= older_than:
            continue
        batch.append(info)
        if len(batch) >= _ORPHAN_BATCH:
            yield from unreferenced(batch)
            batch = []
    if batch:
        yield from unreferenced(batch)
