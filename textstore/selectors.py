"""Reads of stored texts. Blobs are content-addressed and carry no owner: callers scope access
through the rows that reference a blob (a prompt version, a document revision) before asking
for its text here.

Every full read verifies the SHA-256 of what it rebuilt; a ranged read of a chunked snapshot
verifies the SHA-256 of each chunk it touches. Damage raises `TextstoreIntegrityError`, never
returns wrong text.
"""

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from . import objects
from .cache import base_cache, text_cache
from .chains import (
    CHECKPOINT_EVERY,
    SHA_RE,
    ChainRow,
    chain_blobs,
    chain_row,
    chain_tuples,
    check_sha,
    integrity_error,
    nearest_cached,
    rows_rebuild,
)
from .exceptions import BlobNotFound
from .models import Blob
from .ranges import (
    BlobRange,
    blob_common_ends,
    blob_count,
    blob_range,
    blob_read_range,
    blob_stream,
)
from .references import blob_references

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


def blob_stat(*, sha: str) -> Blob:
    """The blob's row without its payload: lengths, kind, chain position, stored size."""
    blob = Blob.objects.defer("payload", "chunk_index").filter(pk=check_sha(sha)).first()
    if blob is None:
        raise BlobNotFound(sha)
    return blob


def blob_chain(*, sha: str) -> list[Blob]:
    """The rows needed to rebuild `sha`: the blob first, its full snapshot last (one query)."""
    return chain_blobs(sha)


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
    chain = chain_tuples(sha, to_checkpoint=warm)
    start, text = nearest_cached(chain)
    if text is None and warm and chain[-1][1] != Blob.Kind.FULL:
        chain = chain_tuples(sha)
        start, text = nearest_cached(chain)
    # Only the rows above the nearest cached text are decoded (all of them on a cold read).
    return rows_rebuild(sha, [chain_row(r) for r in chain[: start + 1]])


def blob_lengths(*, shas: list[str]) -> dict[str, int]:
    """Length in characters of each stored text among `shas` (one query; unknown ones absent)."""
    wanted = {sha for sha in shas if isinstance(sha, str) and SHA_RE.match(sha)}
    rows = Blob.objects.filter(pk__in=wanted).values_list("sha256", "char_length")
    return {sha: int(length) for sha, length in rows}


def blob_sizes(*, shas: list[str]) -> dict[str, tuple[int, int]]:
    """(characters, UTF-8 bytes) of each stored text among `shas` (one query; unknown absent)."""
    wanted = {sha for sha in shas if isinstance(sha, str) and SHA_RE.match(sha)}
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
    text = rows_rebuild(sha, rows, use_cache=False)
    if len(text) != blob.char_length or len(text.encode("utf-8")) != blob.byte_length:
        raise integrity_error(blob, "recorded lengths do not match the text")
    if blob.kind == Blob.Kind.FULL:
        expected = blob.stored_size
        actual = (
            objects.object_size(key=blob.object_key) + len(bytes(blob.chunk_index or b""))
            if blob.object_key
            else len(bytes(blob.payload or b""))
        )
        if actual != expected or blob.snapshot_bytes != blob.stored_size:
            raise integrity_error(blob, "recorded stored size does not match the payload")
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
        raise integrity_error(blob, "bookkeeping does not match its base: " + ", ".join(problems))


BLOB_PREFIX = "blobs"
EXPORT_PREFIX = "texts"


def export_key(*, sha: str, day: date) -> str:
    """Where the plain download copy of text `sha` made on `day` (UTC) lives."""
    return f"{EXPORT_PREFIX}/{day:%Y%m%d}/{sha}"


def export_copies_expired(*, ttl: int, now: datetime) -> Iterator[objects.ObjectInfo]:
    """Plain download copies (services.blob_export_url) whose day ended more than `ttl`
    seconds before `now`, so no presigned URL to them is still valid; also any object under
    texts/ whose key does not name a day (nothing hands those out)."""
    newest_expired = (now - timedelta(seconds=max(0, ttl))).date() - timedelta(days=1)
    for info in objects.object_list(prefix=EXPORT_PREFIX):
        parts = info.key.split("/")
        try:
            day = date.fromisoformat(parts[1]) if len(parts) == 3 and len(parts[1]) == 8 else None
        except ValueError:
            day = None
        if day is None or day <= newest_expired:
            yield info


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


@dataclass(frozen=True)
class OrphanBlob:
    """A stored text nothing references: its row (and object, for a large snapshot) can go."""

    sha256: str
    depth: int
    stored_size: int
    object_key: str
    created_at: datetime


def blob_orphans(*, older_than: datetime) -> list[OrphanBlob]:
    """Blobs created before `older_than` that no registered app references
    (`textstore.references`) and that no kept blob builds on.

    Kept: every referenced blob, every blob younger than `older_than` (a save in flight stores
    its texts before its version row commits), and, transitively, the delta base and anchor of
    each kept blob, so a referenced text always rebuilds. Reads every blob's id and links once
    (three short strings a row); fine for a maintenance command run off-peak.
    """
    links: dict[str, tuple[str | None, str | None]] = {}
    keep: set[str] = set()
    for sha, base, anchor, created in Blob.objects.values_list(
        "sha256", "base_id", "anchor_id", "created_at"
    ).iterator(chunk_size=5000):
        links[sha] = (base, anchor)
        if created >= older_than:
            keep.add(sha)
    keep.update(sha for sha in blob_references() if sha in links)
    stack = list(keep)
    while stack:
        for linked in links.get(stack.pop(), (None, None)):
            if linked is not None and linked not in keep:
                keep.add(linked)
                stack.append(linked)
    unreferenced = [sha for sha in links if sha not in keep]
    found: list[OrphanBlob] = []
    for start in range(0, len(unreferenced), _ORPHAN_BATCH):
        batch = unreferenced[start : start + _ORPHAN_BATCH]
        for row in Blob.objects.filter(sha256__in=batch).values(
            "sha256", "depth", "stored_size", "object_key", "created_at"
        ):
            found.append(OrphanBlob(**row))
    found.sort(key=lambda orphan: (-orphan.depth, orphan.sha256))
    return found
