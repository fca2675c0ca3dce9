"""A blob's chain — the rows needed to rebuild it, blob first and its full snapshot last — read
in one query (the only one that walks a chain), and the rebuild of a text from those rows (the
only one: used by selectors, ranges and `blob_verify`).

Every rebuild verifies the SHA-256 of what it produced; damage raises `TextstoreIntegrityError`.
"""

import functools
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connection

from . import objects
from .cache import base_cache, text_cache
from .chunks import chunk_index_parse, chunks_decode
from .compression import payload_decompress
from .delta import delta_apply, delta_apply_many
from .exceptions import BlobNotFound, ObjectNotFound, TextstoreIntegrityError
from .models import Blob

SHA_RE = re.compile(r"^[0-9a-f]{64}$")
# While rebuilding along a run of plain deltas, every CHECKPOINT_EVERY-th text is verified and
# kept in the base cache, so the next read near it applies at most that many deltas.
CHECKPOINT_EVERY = 8
# A chain is bounded by the policy (≤ TEXTSTORE_MAX_CHAIN); this only stops a damaged table
# with a cycle from looping forever.
CHAIN_GUARD = 100_000


def check_sha(sha: str) -> str:
    if not isinstance(sha, str) or not SHA_RE.match(sha):
        raise BlobNotFound(str(sha))
    return sha


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
    char_length: int
    chunk_chars: int | None


READ_COLUMNS = (
    "sha256",
    "kind",
    "codec",
    "payload",
    "object_key",
    "chunk_index",
    "run",
    "snapshot_level",
    "char_length",
    "chunk_chars",
)


@functools.cache
def _chain_sql(vendor: str, to_checkpoint: bool, whole_rows: bool) -> str:
    """The chain query for a database vendor (built once: names quoted from model metadata);
    the only recursive walk of a chain.

    With `to_checkpoint` the walk stops, past its first row, at the first checkpoint: a row whose
    run is a multiple of CHECKPOINT_EVERY (snapshots have run 0) — the rows `blob_read` keeps in
    the base cache. With `whole_rows` it selects every column (for model instances) instead of
    READ_COLUMNS.
    """
    del vendor  # only the cache key: quoting differs between vendors
    table = connection.ops.quote_name(Blob._meta.db_table)
    columns = (
        "b.*"
        if whole_rows
        else ", ".join(f"b.{connection.ops.quote_name(c)}" for c in READ_COLUMNS)
    )
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


def chain_tuples(sha: str, *, to_checkpoint: bool = False) -> list[tuple[Any, ...]]:
    """The rows needed to rebuild `sha` as plain tuples (`READ_COLUMNS`), blob first and its
    full snapshot last (with `to_checkpoint`: down to its nearest checkpoint), in one query.

    Tuples through a cursor: a read runs on every cold fetch, and building model instances for
    a chain of up to the cap's length cost more than the query itself. `chain_row` makes the
    rows a read needs into ChainRows: on a warm server only those above the nearest cached text.
    """
    with connection.cursor() as cursor:
        sql = _chain_sql(connection.vendor, to_checkpoint, False)
        cursor.execute(sql, [check_sha(sha), CHAIN_GUARD])
        rows: list[tuple[Any, ...]] = cursor.fetchall()
    if not rows:
        raise BlobNotFound(sha)
    return rows


def chain_blobs(sha: str) -> list[Blob]:
    """The whole chain of `sha` as model instances, every column (one query): for checks of
    the bookkeeping columns, which reads do not need."""
    sql = _chain_sql(connection.vendor, False, True)
    rows = list(Blob.objects.raw(sql, [check_sha(sha), CHAIN_GUARD]))
    if not rows:
        raise BlobNotFound(sha)
    return rows


def chain_row(r: tuple[Any, ...]) -> ChainRow:
    return ChainRow(
        sha256=r[0],
        kind=r[1],
        codec=r[2],
        payload=None if r[3] is None else bytes(r[3]),
        object_key=r[4] or "",
        chunk_index=None if r[5] is None else bytes(r[5]),
        run=r[6],
        snapshot_level=r[7],
        char_length=int(r[8]),
        chunk_chars=None if r[9] is None else int(r[9]),
    )


def chain_read(sha: str) -> list[ChainRow]:
    """The whole chain of `sha` as ChainRows (one query)."""
    return [chain_row(r) for r in chain_tuples(sha)]


def nearest_cached(chain: list[tuple[Any, ...]]) -> tuple[int, str | None]:
    """The index of the first row of `chain` whose text is cached, and that text (else the last
    index and None)."""
    for index, r in enumerate(chain):
        text = cached_text(r[0])
        if text is not None:
            return index, text
    return len(chain) - 1, None


def integrity_error(row: Blob | ChainRow, reason: str) -> TextstoreIntegrityError:
    return TextstoreIntegrityError(row.sha256, reason)


def snapshot_text(row: Blob | ChainRow) -> str:
    """The text of a full snapshot, inline or chunked in object storage."""
    try:
        if row.object_key:
            entries = chunk_index_parse(bytes(row.chunk_index or b""))
            data = objects.object_get(key=row.object_key)
            return "".join(chunks_decode(data, entries))
        return payload_decompress(row.codec, bytes(row.payload or b"")).decode("utf-8")
    except ObjectNotFound as exc:
        raise integrity_error(row, f"snapshot object is missing: {exc}") from exc
    except ValueError as exc:  # CodecError, ChunkError, UnicodeDecodeError
        raise integrity_error(row, f"snapshot does not decode: {exc}") from exc


def delta_text(row: Blob | ChainRow) -> str:
    try:
        return payload_decompress(row.codec, bytes(row.payload or b"")).decode("utf-8")
    except ValueError as exc:
        raise integrity_error(row, f"delta does not decode: {exc}") from exc


def cached_text(sha: str) -> str | None:
    return text_cache.get(sha) or base_cache.get(sha)


def delta_apply_checked(row: Blob | ChainRow, source: str) -> str:
    try:
        return delta_apply(source=source, delta=delta_text(row))
    except ValueError as exc:
        raise integrity_error(row, f"delta does not apply to its base: {exc}") from exc


def _apply_run(rows: Sequence[Blob | ChainRow], source: str) -> str:
    """The deltas of `rows` (oldest first) applied to `source` in one pass."""
    if len(rows) == 1:
        return delta_apply_checked(rows[0], source)
    try:
        return delta_apply_many(source=source, deltas=[delta_text(row) for row in rows])
    except ValueError:
        pass  # name the delta that does not apply: one by one
    for row in rows:
        source = delta_apply_checked(row, source)
    return source


def text_check(row: Blob | ChainRow, text: str) -> None:
    if hashlib.sha256(text.encode("utf-8")).hexdigest() != row.sha256:
        raise integrity_error(row, "rebuilt text does not match its SHA-256")


def rows_rebuild(sha: str, rows: Sequence[Blob | ChainRow], *, use_cache: bool = True) -> str:
    """The text of `sha` rebuilt from its chain's rows (blob first): from the nearest cached
    text on them, else from the last row, which must then be the full snapshot. The deltas
    above it are applied a run at a time (the texts in between are never built); snapshots
    and checkpoints are verified (and enter the base cache), and the result is verified and
    cached. Without `use_cache` (`blob_verify`) the caches are neither read nor written: the
    whole chain is rebuilt from storage."""
    start, text = len(rows) - 1, None
    for index, row in enumerate(rows if use_cache else ()):
        text = cached_text(row.sha256)
        if text is not None:
            start = index
            break
    if text is None:
        snapshot = rows[start]
        if snapshot.kind != Blob.Kind.FULL:
            raise integrity_error(rows[0], f"chain ends at {snapshot.sha256}, which is not full")
        text = snapshot_text(snapshot)
        text_check(snapshot, text)
        if use_cache:
            base_cache.put(snapshot.sha256, text)
    pending: list[Blob | ChainRow] = []
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
            text_check(row, text)
            if use_cache:
                base_cache.put(row.sha256, text)
    if start:
        text_check(rows[0], text)
    if use_cache:
        text_cache.put(sha, text)
    return text
