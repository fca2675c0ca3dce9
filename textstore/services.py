"""Writes to the text store (blobs are immutable). Every text goes in through one path,
`blob_write`: a text already stored returns its row; else a delta against the base under the
snapshot policy (policy.py); else a full snapshot; then one insert. What differs between a text
held in memory (`blob_put`) and one streamed from an uploaded object (`ingest.blob_put_object`)
is only how it is diffed and written whole, which a `NewText` carries."""

import hashlib
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from . import objects
from .cache import text_cache
from .chunks import chunks_encode
from .compression import CODEC_ZLIB, payload_compress
from .delta import delta_apply, delta_apply_reference, delta_compute
from .exceptions import (
    BlobNotFound,
    ObjectNotFound,
    ObjectStoreError,
    TextEncodingError,
    TextstoreIntegrityError,
)
from .models import Blob
from .policy import ChainState, chain_cap, plain_delta_fits, snapshot_delta_fits
from .references import blob_references
from .selectors import (
    OrphanBlob,
    blob_read,
    blob_stat,
    blob_stream,
    export_copies_expired,
    export_key,
)

logger = logging.getLogger(__name__)

_STATE_ROWS = Blob.objects.select_related("anchor").defer(
    "payload", "chunk_index", "anchor__payload", "anchor__chunk_index"
)


@dataclass(frozen=True)
class Delta:
    codec: str
    payload: bytes


def _state(blob: Blob) -> ChainState:
    return ChainState(
        depth=blob.depth,
        run=blob.run,
        delta_bytes=blob.delta_bytes,
        snapshot_bytes=blob.snapshot_bytes,
    )


def _utf8(text: str) -> bytes:
    if not isinstance(text, str):
        raise TextEncodingError(f"text must be a str, not {type(text).__name__}")
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise TextEncodingError(
            f"text cannot be stored as UTF-8 (character {exc.start} is a lone surrogate)"
        ) from exc


def base_row(base: Blob | str) -> Blob:
    sha = base.sha256 if isinstance(base, Blob) else base
    row = _STATE_ROWS.filter(pk=sha).first() if isinstance(sha, str) else None
    if row is None:
        raise BlobNotFound(str(sha))
    return row


def _source_text(blob: Blob) -> str | None:
    """The text of a would-be base, or None if it is damaged."""
    try:
        return blob_read(sha=blob.sha256)
    except TextstoreIntegrityError:
        # A damaged base must not block new writes: the new text gets a snapshot of its own.
        logger.exception("textstore.base_damaged", extra={"base": blob.sha256})
        return None


def _delta(*, source: str, target: str) -> Delta | None:
    """A compressed exact delta, or None if it fails to rebuild `target` (then: full)."""
    delta = delta_compute(source=source, target=target)
    # Both readers must rebuild the target (see delta.py), or the text gets a snapshot.
    if (
        delta_apply_reference(source=source, delta=delta) != target
        or delta_apply(source=source, delta=delta) != target
    ):
        logger.warning("textstore.delta_mismatch", extra={"source_chars": len(source)})
        return None
    codec, payload = payload_compress(delta.encode("utf-8"))
    return Delta(codec=codec, payload=payload)


@dataclass(frozen=True)
class NewText:
    """A text on its way into the store, as `blob_write` sees it: its SHA-256 and lengths,
    `delta_from(blob)` (a checked, compressed delta from a stored text to this one, or None when
    there is none: the base is damaged, the delta does not rebuild the text, the change is too
    large) and `full_row()` (the row storing it whole; writes its object first if chunked).
    `text` is the text itself when it is held in memory: it enters the cache once committed."""

    sha256: str
    char_length: int
    byte_length: int
    delta_from: Callable[[Blob], Delta | None]
    full_row: Callable[[], Blob]
    text: str | None = None


def text_in_memory(text: str) -> NewText:
    """A text held whole: diffed with diff-match-patch, stored inline or chunked.
    Raises TextEncodingError for text that is not valid Unicode (lone surrogates)."""
    data = _utf8(text)
    sha = hashlib.sha256(data).hexdigest()

    def delta_from(source: Blob) -> Delta | None:
        source_text = _source_text(source)
        return None if source_text is None else _delta(source=source_text, target=text)

    return NewText(
        sha256=sha,
        char_length=len(text),
        byte_length=len(data),
        delta_from=delta_from,
        full_row=lambda: _full_row(sha=sha, text=text, data=data),
        text=text,
    )


def _delta_row(new: NewText, base: Blob) -> Blob | None:
    """The snapshot policy's choice for a new text: a plain delta against `base`, an
    intermediate snapshot against its anchor, or None (full)."""
    cap = chain_cap(char_length=new.char_length)
    inline_max = int(settings.TEXTSTORE_INLINE_MAX)
    plain = new.delta_from(base)
    if plain is None or len(plain.payload) > inline_max:
        return None
    lengths = {
        "sha256": new.sha256,
        "char_length": new.char_length,
        "byte_length": new.byte_length,
    }
    state = _state(base)
    if plain_delta_fits(base=state, delta_size=len(plain.payload), cap=cap):
        return Blob(
            **lengths,
            kind=Blob.Kind.DELTA,
            base=base,
            anchor_id=base.sha256 if base.is_snapshot else base.anchor_id,
            snapshot_level=None,
            codec=plain.codec,
            payload=plain.payload,
            stored_size=len(plain.payload),
            depth=base.depth + 1,
            run=base.run + 1,
            delta_bytes=base.delta_bytes + len(plain.payload),
            snapshot_bytes=base.snapshot_bytes,
        )
    anchor = base if base.is_snapshot else base.anchor
    if anchor is None or anchor.pk == base.pk:
        return None
    # Skip the second diff when even the small delta could not fit on the anchor's chain.
    if not snapshot_delta_fits(anchor=_state(anchor), delta_size=len(plain.payload), cap=cap):
        return None
    jump = new.delta_from(anchor)
    if jump is None or len(jump.payload) > inline_max:
        return None
    if not snapshot_delta_fits(anchor=_state(anchor), delta_size=len(jump.payload), cap=cap):
        return None
    return Blob(
        **lengths,
        kind=Blob.Kind.DELTA,
        base=anchor,
        anchor=None,
        snapshot_level=(anchor.snapshot_level or 0) + 1,
        codec=jump.codec,
        payload=jump.payload,
        stored_size=len(jump.payload),
        depth=anchor.depth + 1,
        run=0,
        delta_bytes=anchor.delta_bytes + len(jump.payload),
        snapshot_bytes=anchor.snapshot_bytes,
    )


def _full_row(*, sha: str, text: str, data: bytes) -> Blob:
    """A full snapshot: inline if small, else chunked in object storage under blobs/<sha>."""
    lengths = {"sha256": sha, "char_length": len(text), "byte_length": len(data)}
    chain = {"kind": Blob.Kind.FULL, "snapshot_level": 0, "depth": 0, "run": 0, "delta_bytes": 0}
    if len(data) <= int(settings.TEXTSTORE_INLINE_MAX):
        codec, payload = payload_compress(data)
        size = len(payload)
        return Blob(
            **lengths, **chain, codec=codec, payload=payload, stored_size=size, snapshot_bytes=size
        )
    chunk_chars = int(settings.TEXTSTORE_CHUNK_CHARS)
    body, index = chunks_encode(text, chunk_chars=chunk_chars)
    key = f"blobs/{sha}"
    # The object goes first: a row never points at a missing object. If the insert below loses
    # a race or rolls back, the object is identical to the winner's, or an orphan at worst.
    objects.object_put(key=key, data=body)
    size = len(body) + len(index)
    return Blob(
        **lengths,
        **chain,
        codec=CODEC_ZLIB,
        payload=None,
        object_key=key,
        chunk_chars=chunk_chars,
        chunk_index=index,
        stored_size=size,
        snapshot_bytes=size,
    )


def _insert(row: Blob, text: str | None) -> Blob:
    with transaction.atomic():
        try:
            with transaction.atomic():  # savepoint: a lost race must not poison the outer one
                row.save(force_insert=True)
        except IntegrityError:
            existing = Blob.objects.defer("payload", "chunk_index").filter(pk=row.pk).first()
            if existing is None:
                raise
            return existing
        # Only committed texts enter the cache, so it never answers for a rolled-back blob.
        if text is not None:
            transaction.on_commit(lambda: text_cache.put(row.sha256, text))
    logger.debug(
        "textstore.blob_put",
        extra={
            "sha256": row.sha256,
            "kind": row.kind,
            "snapshot_level": row.snapshot_level,
            "depth": row.depth,
            "stored_size": row.stored_size,
            "char_length": row.char_length,
        },
    )
    return row


def blob_write(new: NewText, *, base: Blob | str | None = None) -> Blob:
    """Store `new` once, keyed by its SHA-256, and return its row: the one write path.

    Invariants: a text that is already stored returns the existing row (also when concurrent
    callers race); a delta is stored only if it was checked to rebuild the text exactly, and
    only within the snapshot policy's bounds (policy.py); otherwise the text is stored as a
    full snapshot. `base` (a Blob or its sha) is only a hint of which text is similar, and must
    exist (BlobNotFound otherwise).
    """
    existing = Blob.objects.defer("payload", "chunk_index").filter(pk=new.sha256).first()
    if existing is not None:
        return existing
    row = None
    if base is not None:
        row = _delta_row(new, base_row(base))
    if row is None:
        row = new.full_row()
    return _insert(row, new.text)


def blob_put(*, text: str, base: Blob | str | None = None) -> Blob:
    """Store `text` once, keyed by the SHA-256 of its UTF-8 bytes, and return its row
    (`blob_write`'s invariants). Raises TextEncodingError for text that is not valid Unicode
    (lone surrogates)."""
    return blob_write(text_in_memory(text), base=base)


def object_orphan_delete(*, key: str) -> bool:
    """Delete an object no blob row references; re-checked right before deleting, so an object
    that a save has meanwhile committed a row for is kept. Returns whether it was deleted."""
    if Blob.objects.filter(object_key=key).exists():
        return False
    objects.object_delete(key=key)
    logger.info("textstore.orphan_deleted", extra={"key": key})
    return True


@dataclass(frozen=True)
class BlobsDeleted:
    rows: int
    bytes: int
    objects: int


def blob_orphans_delete(*, orphans: list[OrphanBlob]) -> BlobsDeleted:
    """Delete blobs `blob_orphans` found, dependents first, in one transaction, then their
    objects. Re-checked inside the transaction: a blob some app references by now, or that a
    blob outside the set builds on, is kept (with its bases). An object whose delete fails is
    left for the object-orphan pass of the next run (its row is gone)."""
    if not orphans:
        return BlobsDeleted(rows=0, bytes=0, objects=0)
    candidates = {orphan.sha256: orphan for orphan in orphans}
    with transaction.atomic():
        list(
            Blob.objects.select_for_update()
            .filter(sha256__in=list(candidates))
            .values_list("sha256", flat=True)
        )
        referenced = {sha for sha in blob_references() if sha in candidates}
        outside = Blob.objects.filter(
            Q(base_id__in=list(candidates)) | Q(anchor_id__in=list(candidates))
        ).exclude(sha256__in=list(candidates))
        kept = referenced | set(outside.values_list("base_id", flat=True))
        kept |= set(outside.values_list("anchor_id", flat=True))
        kept = _with_bases(kept, candidates)
        doomed = [o for o in orphans if o.sha256 not in kept]  # deepest first
        for depth in sorted({o.depth for o in doomed}, reverse=True):
            Blob.objects.filter(sha256__in=[o.sha256 for o in doomed if o.depth == depth]).delete()
    removed_objects = 0
    for orphan in doomed:
        if orphan.object_key:
            try:
                objects.object_delete(key=orphan.object_key)
                removed_objects += 1
            except ObjectStoreError:
                logger.warning("textstore.orphan_object_kept", extra={"key": orphan.object_key})
        logger.info("textstore.orphan_blob_deleted", extra={"sha": orphan.sha256})
    return BlobsDeleted(
        rows=len(doomed), bytes=sum(o.stored_size for o in doomed), objects=removed_objects
    )


def _with_bases(kept: set[str], candidates: dict[str, OrphanBlob]) -> set[str]:
    """`kept` plus every candidate a kept blob builds on (base or anchor, transitively)."""
    result = set(kept)
    stack = [sha for sha in kept if sha in candidates]
    while stack:
        links = Blob.objects.filter(sha256__in=stack).values_list("base_id", "anchor_id")
        stack = []
        for pair in links:
            for sha in pair:
                if sha is not None and sha in candidates and sha not in result:
                    result.add(sha)
                    stack.append(sha)
    return result


EXPORT_CONTENT_TYPE = "text/plain; charset=utf-8"
_EXPORT_STEP_CHARS = 1 << 20


def blob_export_url(*, sha: str, filename: str, expires_in: int) -> str:
    """A presigned GET (valid `expires_in` seconds) of the text as a plain UTF-8 file.

    Stored snapshots are chunked and compressed, so the first download of a text on a given
    (UTC) day writes it as a plain object under texts/<YYYYMMDD>/<sha256>, streamed from range
    reads (never held whole) and checked against the hash before the upload completes; later
    downloads that day reuse it. These objects are derived copies: deleting them loses nothing,
    and `export_copy_sweep` deletes a day's copies once no URL handed out that day can still be
    valid. Only for stores with presigned URLs (objects.object_presign_available()).
    """
    blob = blob_stat(sha=sha)
    key = export_key(sha=blob.sha256, day=timezone.now().date())
    try:
        objects.object_size(key=key)
    except ObjectNotFound:
        objects.object_put_stream(
            key=key, chunks=_verified_bytes(blob.sha256), content_type=EXPORT_CONTENT_TYPE
        )
        logger.info("textstore.export_written", extra={"sha256": blob.sha256})
    return objects.object_presign_get(
        key=key, expires_in=expires_in, filename=filename, content_type=EXPORT_CONTENT_TYPE
    )


def _verified_bytes(sha: str) -> Iterator[bytes]:
    """The text's UTF-8 bytes; raises (aborting the upload) if they do not hash to `sha`."""
    digest = hashlib.sha256()
    for piece in blob_stream(sha=sha, step=_EXPORT_STEP_CHARS):
        data = piece.encode("utf-8")
        digest.update(data)
        yield data
    if digest.hexdigest() != sha:
        raise TextstoreIntegrityError(sha, "streamed text does not match its SHA-256")


def export_copy_sweep(*, ttl: int, now: datetime | None = None) -> int:
    """Delete the plain download copies of days whose presigned URLs have all expired (a URL
    is handed out on its copy's day and lives `ttl` seconds). Returns how many were deleted."""
    deleted = 0
    for info in export_copies_expired(ttl=ttl, now=now or timezone.now()):
        objects.object_delete(key=info.key)
        deleted += 1
    if deleted:
        logger.info("textstore.export_copies_deleted", extra={"count": deleted})
    return deleted
