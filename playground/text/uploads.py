"""Uploads of large texts, and their use in a version (issue #14).

1. `upload_create` records an upload (owner, declared size and SHA-256, a key the server chose)
   and says where to PUT it: a presigned S3 URL when S3 is configured, else a signed token
   for Redline's own PUT endpoint (`upload_receive`, which streams the body to disk).
2. A version's text field may then be `{"upload": "<id>"}`, or `{"same_as": "parent"}` for a
   text kept unchanged from the parent (the editor does not load a huge text to send it back).
   `content_prepare` resolves those references *before* the version's transaction: it checks
   each upload (its owner's, unused, not expired), streams the object through
   `textstore.ingest.blob_put_object` (size, SHA-256, UTF-8 and NUL checked by the server
   itself, stored as a delta against the parent's text when close to it), and computes the
   content hash by streaming the stored texts. `prompt_create` and `prompt_version_create`
   call it themselves on the content they are given, so every save takes the same path
   (issue #35); its result, a `PreparedContent` naming the uploads it used, goes into their
   transaction, which marks those uploads used and deletes their objects once it commits.

Any failure is a `ContentInvalid` naming the field, and no version is created. An upload is
used by the save that commits with it: a save that fails (or a worker killed) before its commit
leaves the upload usable, its object in place, and its stored texts are content-addressed
(a retry finds them; `textstore_gc` takes them if none does) (issue #31). An upload whose data
is refused (wrong size, hash, not UTF-8) is used up with the others the save named, and their
objects deleted. A refused reference (someone else's id, an unknown one) consumes nothing; an
expired upload's object is deleted when it is named.
"""

import logging
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Protocol, cast

from django.conf import settings
from django.contrib.auth.models import User
from django.core import signing
from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from common.exceptions import RateLimited
from common.ratelimit import Limit, ratelimit_exceeded, ratelimit_hit
from textstore import objects
from textstore.exceptions import ObjectNotFound, ObjectStoreError
from textstore.ingest import IngestRejected, blob_put_object
from textstore.selectors import blob_read_range, blob_stat

from ..exceptions import ContentInvalid, NotFound
from ..models import PromptVersion, Upload
from .content import (
    PreparedContent,
    PreparedVersionContent,
    StoredText,
    content_text_check,
    content_validate,
    prepared_content_hash,
)

logger = logging.getLogger(__name__)

UPLOAD_PREFIX = "uploads"
_TOKEN_SALT = "playground.upload.put"  # noqa: S105 (a signing namespace, not a secret)
_RECEIVE_BLOCK = 64 * 1024
_READ_PIECE_CHARS = 1 << 20
_REF_HELP = (
    'must be a string, {"upload": "<id>"}, {"same_as": "parent"} or {"parent_text": "<sha256>"}.'
)


def text_bases(parent: PromptVersion | None, messages: int) -> tuple[str | None, list[str | None]]:
    """The parent's texts each new text is stored against: the same field, or for a message
    beyond the parent's last one, that last message."""
    parent_messages = parent.messages if parent else []
    bases: list[str | None] = []
    for index in range(messages):
        base = parent_messages[index]["sha"] if index < len(parent_messages) else None
        if base is None and parent_messages:
            base = parent_messages[-1]["sha"]
        bases.append(base)
    return (parent.system_sha if parent else None), bases


def upload_objects_delete(*, keys: list[str]) -> None:
    """Delete uploads' objects; a failure is logged (uploads_expire deletes them later)."""
    for key in keys:
        try:
            objects.object_delete(key=key)
        except ObjectStoreError:
            logger.exception("upload.delete_failed", extra={"object_key": key})


class Readable(Protocol):
    def read(self, size: int = ..., /) -> bytes: ...


@dataclass(frozen=True)
class UploadTarget:
    """Where and how to send an upload's bytes: a presigned S3 request, or (`token` set)
    Redline's own signed PUT endpoint, whose URL the API view builds from the token."""

    upload_id: str
    method: str
    headers: dict[str, str]
    expires_in: int
    url: str = ""
    token: str = ""


def _expires_in() -> int:
    return int(settings.UPLOAD_EXPIRES_SECONDS)


# What `upload_create` accepts as a SHA-256 (either case); the API schema states the same.
SHA256_HEX_PATTERN = r"^[0-9a-fA-F]{64}$"

_RATE_SCOPE = "uploads"


def _upload_rate() -> Limit:
    return Limit(
        count=int(settings.UPLOAD_USER_RATE_LIMIT),
        window_seconds=int(settings.UPLOAD_USER_RATE_WINDOW),
    )


def _upload_rate_check(*, actor: User) -> None:
    wait = ratelimit_exceeded(scope=_RATE_SCOPE, ident=f"user:{actor.pk}", limit=_upload_rate())
    if wait:
        raise RateLimited(
            f"Too many uploads: at most {settings.UPLOAD_USER_RATE_LIMIT} every"
            f" {settings.UPLOAD_USER_RATE_WINDOW} s (UPLOAD_USER_RATE_LIMIT); try again in"
            f" {wait} s.",
            retry_after=wait,
        )


def upload_reserved_bytes(*, owner_id: int) -> int:
    """Bytes `owner_id` has reserved: declared sizes of uploads neither used nor expired."""
    total = Upload.objects.filter(
        owner_id=owner_id, used_at__isnull=True, expires_at__gt=timezone.now()
    ).aggregate(total=Sum("size"))["total"]
    return int(total or 0)


def _upload_reserved_check(*, actor: User, size: int) -> None:
    """RateLimited when this upload would take `actor` past UPLOAD_USER_RESERVED_MAX_BYTES.

    Runs in the inserting transaction with the account's row locked, so parallel requests
    of one account are counted one after the other."""
    list(User.objects.select_for_update().filter(pk=actor.pk).values_list("pk", flat=True))
    cap = int(settings.UPLOAD_USER_RESERVED_MAX_BYTES)
    reserved = upload_reserved_bytes(owner_id=actor.pk)
    if reserved + size > cap:
        raise RateLimited(
            f"size: you have {reserved} bytes reserved by uploads not used yet; with this one"
            f" it would pass the {cap} bytes one account may hold"
            " (UPLOAD_USER_RESERVED_MAX_BYTES). Use or let expire the earlier uploads.",
            retry_after=_first_expiry_in(owner_id=actor.pk),
        )


def _first_expiry_in(*, owner_id: int) -> int:
    """Seconds until the account's first outstanding upload expires (frees its bytes)."""
    first = (
        Upload.objects.filter(
            owner_id=owner_id, used_at__isnull=True, expires_at__gt=timezone.now()
        )
        .order_by("expires_at")
        .values_list("expires_at", flat=True)
        .first()
    )
    if first is None:
        return 1
    return max(1, int((first - timezone.now()).total_seconds()) + 1)


def upload_create(*, actor: User, size: Any, sha256: Any) -> UploadTarget:
    """A new upload of `size` bytes hashing to `sha256` (hex), owned by `actor`.

    Refused with RateLimited (429) past the account's upload rate, or when its unused,
    unexpired uploads would reserve more than UPLOAD_USER_RESERVED_MAX_BYTES."""
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise ContentInvalid("size: must be a whole number of bytes.", field="size")
    limit = int(settings.UPLOAD_MAX_BYTES)
    if size > limit:
        raise ContentInvalid(f"size: at most {limit} bytes may be uploaded.", field="size")
    if not isinstance(sha256, str) or not re.fullmatch(SHA256_HEX_PATTERN, sha256):
        raise ContentInvalid("sha256: must be 64 hexadecimal digits.", field="sha256")
    digest = sha256.lower()
    upload_id = uuid.uuid4()
    expires_in = _expires_in()
    _upload_rate_check(actor=actor)
    with transaction.atomic():
        _upload_reserved_check(actor=actor, size=size)
        upload = Upload.objects.create(
            id=upload_id,
            owner=actor,
            size=size,
            sha256=digest,
            object_key=f"{UPLOAD_PREFIX}/{upload_id.hex}",
            expires_at=timezone.now() + timedelta(seconds=expires_in),
        )
    ratelimit_hit(scope=_RATE_SCOPE, ident=f"user:{actor.pk}", limit=_upload_rate())
    logger.info("upload.created", extra={"upload_id": str(upload.pk), "size": size})
    if settings.S3_BUCKET:
        presigned = objects.object_presign_put(
            key=upload.object_key, size=size, sha256=digest, expires_in=expires_in
        )
        return UploadTarget(
            upload_id=str(upload.pk),
            url=presigned.url,
            method=presigned.method,
            headers=dict(presigned.headers),
            expires_in=expires_in,
        )
    return UploadTarget(
        upload_id=str(upload.pk),
        method="PUT",
        headers={"Content-Type": objects.UPLOAD_CONTENT_TYPE},
        expires_in=expires_in,
        token=signing.dumps(str(upload.pk), salt=_TOKEN_SALT),
    )


def upload_receive(*, token: str, stream: Readable, content_length: Any) -> Upload:
    """Store the body of a PUT to Redline's signed upload endpoint, streamed to disk.

    The token (signed, expiring with the upload) is the only authority. The body must be
    exactly the declared size: a Content-Length that differs is refused before reading, and a
    body that runs past it is cut off (nothing stored). Raises NotFound for a bad, expired or
    used token, ContentInvalid for a body of the wrong size.
    """
    try:
        upload_id = signing.loads(token, salt=_TOKEN_SALT, max_age=_expires_in())
    except signing.BadSignature:
        raise NotFound("upload") from None
    upload = Upload.objects.filter(
        pk=upload_id, used_at__isnull=True, expires_at__gt=timezone.now()
    ).first()
    if upload is None:
        raise NotFound("upload")
    try:
        length = int(content_length)
    except (TypeError, ValueError):
        length = -1
    if length != upload.size:
        raise ContentInvalid(
            f"body: must be exactly the declared {upload.size} bytes (Content-Length).",
            field="body",
        )

    def blocks() -> Iterator[bytes]:
        received = 0
        while True:
            block = stream.read(_RECEIVE_BLOCK)
            if not block:
                break
            received += len(block)
            if received > upload.size:
                raise ContentInvalid("body: longer than the declared size.", field="body")
            yield block
        if received != upload.size:
            raise ContentInvalid("body: shorter than the declared size.", field="body")

    objects.object_put_stream(
        key=upload.object_key, chunks=blocks(), content_type=objects.UPLOAD_CONTENT_TYPE
    )
    logger.info("upload.received", extra={"upload_id": str(upload.pk), "size": upload.size})
    return upload


# References in a version's content -----------------------------------------------------------


@dataclass(frozen=True)
class UploadRef:
    upload_id: str


@dataclass(frozen=True)
class ParentText:
    """`{"same_as": "parent"}`: the parent's text of the same field."""


@dataclass(frozen=True)
class ParentTextSha:
    """`{"parent_text": "<sha>"}`: one of the parent's texts, by its SHA-256 (any field, so a
    moved message keeps its text)."""

    sha256: str


def _text_or_ref(value: Any, field: str) -> Any:
    """A text field of the upload flow: a string, or exactly one of the two references."""
    if isinstance(value, dict):
        if set(value) == {"upload"} and isinstance(value["upload"], str):
            return UploadRef(value["upload"])
        if value == {"same_as": "parent"}:
            return ParentText()
        if set(value) == {"parent_text"} and isinstance(value["parent_text"], str):
            return ParentTextSha(value["parent_text"])
        raise ContentInvalid(f"{field}: {_REF_HELP}", field=field)
    if not isinstance(value, str):
        raise ContentInvalid(f"{field}: {_REF_HELP}", field=field)
    return content_text_check(value, field)


def content_has_refs(content: object) -> bool:
    """Does raw content name an upload or a parent's text (a dict where a text goes)?"""
    if not isinstance(content, dict):
        return False
    if isinstance(content.get("system"), dict):
        return True
    messages = content.get("messages")
    return isinstance(messages, list) and any(
        isinstance(m, dict) and isinstance(m.get("content"), dict) for m in messages
    )


def _text_fields(canonical: dict[str, Any]) -> list[tuple[str, Any]]:
    fields = [("system", canonical["system"])]
    fields += [(f"messages.{i}.content", m["content"]) for i, m in enumerate(canonical["messages"])]
    return fields


def _set_text(canonical: dict[str, Any], field: str, value: Any) -> None:
    if field == "system":
        canonical["system"] = value
    else:
        canonical["messages"][int(field.split(".")[1])]["content"] = value


def _parent_sha(parent: PromptVersion | None, field: str) -> str:
    if parent is None:
        raise ContentInvalid(f"{field}: a new prompt has no parent text.", field=field)
    if field == "system":
        return parent.system_sha
    index = int(field.split(".")[1])
    if index >= len(parent.messages):
        raise ContentInvalid(f"{field}: the parent has no message {index} to keep.", field=field)
    sha: str = parent.messages[index]["sha"]  # every stored message names its text's sha
    return sha


def _parent_text(parent: PromptVersion | None, field: str, sha: str) -> str:
    texts = [] if parent is None else [parent.system_sha, *(m["sha"] for m in parent.messages)]
    if sha not in texts:
        raise ContentInvalid(f"{field}: not a text of the parent version.", field=field)
    return sha


def _usable(*, actor: User, refs: dict[str, UploadRef]) -> dict[str, Upload]:
    """Every upload named, each checked usable (the save marks them used, playground.services).
    A foreign id reads as unknown."""
    uploads: dict[str, Upload] = {}
    seen: set[str] = set()
    for field, ref in refs.items():
        try:
            upload_id = uuid.UUID(ref.upload_id)
        except (ValueError, AttributeError):
            raise ContentInvalid(f"{field}: no such upload.", field=field) from None
        if upload_id.hex in seen:
            raise ContentInvalid(f"{field}: the same upload is named twice.", field=field)
        seen.add(upload_id.hex)
        upload = Upload.objects.filter(pk=upload_id, owner=actor).first()
        if upload is None:
            raise ContentInvalid(f"{field}: no such upload.", field=field)
        if upload.used_at is not None:
            raise ContentInvalid(f"{field}: this upload was already used.", field=field)
        if upload.expires_at <= timezone.now():
            _discard([upload])
            raise ContentInvalid(f"{field}: this upload expired; upload again.", field=field)
        uploads[field] = upload
    return uploads


def _spend_refused(uploads: list[Upload]) -> None:
    """Uploads a save named whose data was refused: used up, their objects deleted."""
    Upload.objects.filter(pk__in=[u.pk for u in uploads], used_at__isnull=True).update(
        used_at=timezone.now()
    )
    _discard(uploads)


def _discard(uploads: list[Upload]) -> None:
    upload_objects_delete(keys=[upload.object_key for upload in uploads])


def _ingest(upload: Upload, field: str, base: str | None) -> StoredText:
    try:
        blob = blob_put_object(
            key=upload.object_key,
            size=upload.size,
            sha256=upload.sha256,
            base=base,
            forbid_nul=True,
        )
    except ObjectNotFound:
        raise ContentInvalid(
            f"{field}: the upload has no data; PUT the text to its URL first.", field=field
        ) from None
    except IngestRejected as error:
        raise ContentInvalid(f"{field}: {error.message}.", field=field) from None
    return StoredText(blob.sha256)


def text_pieces(sha: str) -> Iterator[str]:
    """A stored text in pieces of bounded size (through range reads)."""
    total = blob_stat(sha=sha).char_length
    for offset in range(0, total, _READ_PIECE_CHARS):
        yield blob_read_range(sha=sha, offset=offset, length=_READ_PIECE_CHARS)


def content_prepare(*, actor: User, parent: PromptVersion | None, content: object) -> object:
    """Resolve upload and parent-text references in raw `content`, before any transaction.

    Content without references is returned as it is (the services validate it as always).
    Otherwise: the content is validated with references allowed, each upload is checked and
    stored in textstore (as a delta against the text the save would use as its base), and a
    `PreparedContent` returned, naming the uploads for the save to spend, whose hash equals
    that of the same content sent inline. Raises ContentInvalid naming the field; then no
    version exists (an upload whose data was refused is used up, see the module docstring).
    """
    if not content_has_refs(content):
        return content
    # Validated, but its texts may still be references: not yet a VersionContent.
    canonical = cast(dict[str, Any], content_validate(content, text_field=_text_or_ref))
    fields = _text_fields(canonical)
    system_base, bases = text_bases(parent, len(canonical["messages"]))
    base_of = {"system": system_base} | {
        f"messages.{i}.content": base for i, base in enumerate(bases)
    }
    for field, value in fields:
        if isinstance(value, ParentText):
            _set_text(canonical, field, StoredText(_parent_sha(parent, field)))
        elif isinstance(value, ParentTextSha):
            _set_text(canonical, field, StoredText(_parent_text(parent, field, value.sha256)))
    refs = {field: value for field, value in fields if isinstance(value, UploadRef)}
    uploads = _usable(actor=actor, refs=refs)
    try:
        for field, upload in uploads.items():
            _set_text(canonical, field, _ingest(upload, field, base_of[field]))
    except ContentInvalid:
        _spend_refused(list(uploads.values()))
        raise
    prepared = cast(PreparedVersionContent, canonical)  # every reference is a StoredText now
    digest = prepared_content_hash(prepared, text_pieces=text_pieces)
    used = tuple((field, str(upload.pk)) for field, upload in uploads.items())
    return PreparedContent(canonical=prepared, digest=digest, uploads=used)


def uploads_expire() -> int:
    """Delete uploads whose time ran out, with their objects; returns how many.

    Unused ones are the point; used ones go too (their object was deleted when used, but a
    presigned S3 URL stays valid until it expires, so a late PUT could have stored it again).
    Once its URL expired nothing can write an upload's object any more.
    """
    stale = list(Upload.objects.filter(expires_at__lte=timezone.now()))
    _discard(stale)
    deleted, _ = Upload.objects.filter(pk__in=[u.pk for u in stale]).delete()
    if deleted:
        logger.info("uploads.expired", extra={"count": deleted})
    return deleted
