"""Object storage: S3 (any S3-compatible endpoint) when `S3_BUCKET` is set, else a directory.

This is the only module that imports boto3 (docs/style.md, rule 8). Both stores offer the same
operations on immutable objects addressed by key; settings are read at each call so tests and
deployments can switch stores without a restart:

- `object_put(key=, data=)`, `object_get(key=)`, `object_get_range(key=, start=, end=)`
  (bytes `[start, end)`; an HTTP Range GET on S3, a seek on disk), `object_size(key=)`,
  `object_delete(key=)`;
- `object_list(prefix=)`: every object under a prefix, with size and modification time;
- `object_presign_put(key=, size=, sha256=, expires_in=)`: a short-lived URL for a browser to
  upload straight to S3 (the local store has no HTTP face and refuses);
- `object_put_file(key=, path=)`: store a file's bytes without reading them into memory (moved
  into place locally, streamed from disk to S3);
- `object_put_stream(key=, chunks=, content_type=)`: an object written from an iterable of byte
  strings without holding it whole (S3 multipart upload in parts of `STREAM_PART_BYTES`);
- `object_presign_get(key=, expires_in=, filename=, content_type=)`: a short-lived URL to
  download an object as a named file (S3 only, like presigned uploads).
"""

import base64
import functools
import logging
import math
import os
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError, ConnectionError, HTTPClientError
from django.conf import settings

from .exceptions import ObjectNotFound, ObjectStoreError, ObjectStoreUnavailable

logger = logging.getLogger(__name__)

_KEY_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)*$")
_MISSING_CODES = {"NoSuchKey", "404", "NotFound"}
UPLOAD_CONTENT_TYPE = "application/octet-stream"
# Parts of a streamed S3 upload (S3 wants at least 5 MiB for every part but the last); the
# most a streamed write holds in memory.
STREAM_PART_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class PresignedUpload:
    """What a client needs to PUT one object: send `headers` exactly as given."""

    url: str
    method: str
    headers: dict[str, str] = field(default_factory=dict)
    expires_in: int = 0


@dataclass(frozen=True)
class ObjectInfo:
    """One stored object as listed: key, size in bytes, last modification (UTC)."""

    key: str
    size: int
    modified: datetime


class ObjectStore(Protocol):
    def put(self, key: str, data: bytes) -> None: ...
    def put_file(self, key: str, path: Path) -> None: ...
    def get(self, key: str) -> bytes: ...
    def get_range(self, key: str, start: int, end: int) -> bytes: ...
    def size(self, key: str) -> int: ...
    def delete(self, key: str) -> None: ...
    def presign_put(self, key: str, size: int, sha256: str, expires_in: int) -> PresignedUpload: ...
    def list(self, prefix: str) -> Iterator[ObjectInfo]: ...
    def put_stream(self, key: str, chunks: Iterable[bytes], content_type: str) -> int: ...
    def presign_get(self, key: str, expires_in: int, filename: str, content_type: str) -> str: ...


def _check_key(key: str) -> str:
    """Keys are relative slash-separated names; no `..`, no absolute paths."""
    if not _KEY_RE.match(key) or any(part in {".", ".."} for part in key.split("/")):
        raise ObjectStoreError(f"invalid object key {key!r}")
    return key


def _check_range(start: int, end: int) -> None:
    if start < 0 or end < start:
        raise ObjectStoreError(f"invalid byte range [{start}, {end})")


class LocalObjectStore:
    """Objects as files under one directory (the embedded default)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, key: str) -> Path:
        return self.root / _check_key(key)

    def put(self, key: str, data: bytes) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        # Write then rename, so a reader never sees half an object.
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".upload-")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def put_file(self, key: str, path: Path) -> None:
        """Move the file at `path` into place (a rename when on the same file system)."""
        target = self._path(key)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".upload-")
        os.close(fd)
        try:
            shutil.move(path, tmp)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def get(self, key: str) -> bytes:
        try:
            return self._path(key).read_bytes()
        except FileNotFoundError:
            raise ObjectNotFound(key) from None

    def get_range(self, key: str, start: int, end: int) -> bytes:
        _check_range(start, end)
        try:
            with self._path(key).open("rb") as handle:
                handle.seek(start)
                return handle.read(end - start)
        except FileNotFoundError:
            raise ObjectNotFound(key) from None

    def size(self, key: str) -> int:
        try:
            return self._path(key).stat().st_size
        except FileNotFoundError:
            raise ObjectNotFound(key) from None

    def delete(self, key: str) -> None:
        self._path(key).unlink(missing_ok=True)

    def list(self, prefix: str) -> Iterator[ObjectInfo]:
        folder = self.root / _check_key(prefix.rstrip("/"))
        if not folder.is_dir():
            return
        for path in sorted(folder.rglob("*")):
            if path.is_file() and not path.name.startswith(".upload-"):
                stat = path.stat()
                yield ObjectInfo(
                    key=path.relative_to(self.root).as_posix(),
                    size=stat.st_size,
                    modified=datetime.fromtimestamp(stat.st_mtime, tz=UTC),
                )

    def presign_put(self, key: str, size: int, sha256: str, expires_in: int) -> PresignedUpload:
        raise ObjectStoreError(
            "presigned uploads need S3 object storage (set S3_BUCKET); "
            "the local store has no URL of its own"
        )

    def put_stream(self, key: str, chunks: Iterable[bytes], content_type: str) -> int:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".upload-")
        size = 0
        try:
            with os.fdopen(fd, "wb") as handle:
                for chunk in chunks:
                    handle.write(chunk)
                    size += len(chunk)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return size

    def presign_get(self, key: str, expires_in: int, filename: str, content_type: str) -> str:
        raise ObjectStoreError("presigned downloads need S3 object storage (set S3_BUCKET)")


@functools.lru_cache(maxsize=8)
def _s3_client(
    endpoint_url: str,
    region: str,
    access_key: str,
    secret_key: str,
    timeouts: tuple[float, float, int] = (3.0, 10.0, 3),
) -> Any:
    """One boto3 client per configuration (creating one costs tens of milliseconds).

    `timeouts` is (connect seconds, read seconds, attempts): boto3's defaults (60 s reads,
    retried) would let a silent S3 hold a web worker for minutes."""
    connect_timeout, read_timeout, attempts = timeouts
    return boto3.client(
        "s3",
        endpoint_url=endpoint_url or None,
        region_name=region or None,
        aws_access_key_id=access_key or None,
        aws_secret_access_key=secret_key or None,
        config=Config(
            signature_version="s3v4",
            # Custom endpoints (MinIO, moto, loopback IPs) rarely resolve bucket subdomains.
            s3={"addressing_style": "path" if endpoint_url else "auto"},
            retries={"max_attempts": attempts, "mode": "standard"},
            connect_timeout=connect_timeout,
            read_timeout=read_timeout,
        ),
    )


def _is_unavailable(exc: Exception) -> bool:
    """S3 cannot be reached, timed out, or answered 5xx (slow down, internal error)."""
    if isinstance(exc, (HTTPClientError, ConnectionError)):
        return True
    if isinstance(exc, ClientError):
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0
        return int(status) >= 500
    return False


def _is_missing(exc: ClientError) -> bool:
    return str(exc.response.get("Error", {}).get("Code")) in _MISSING_CODES


class CircuitBreaker:
    """Fail fast while S3 is down or hung (issue #21), per process.

    closed: calls go through; `S3_BREAKER_FAILURES` unavailable answers in a row (timeouts,
    refused connections, 5xx) open it. open: every call fails at once with
    `ObjectStoreUnavailable` (503, Retry-After = the cooldown left) for `S3_BREAKER_COOLDOWN`
    seconds. Then half-open: one trial call goes through (the others still fail fast); its
    success closes the breaker, its failure opens it again. An answer that is not about
    availability (404, 403) counts as the store being up.

    Besides, at most `S3_MAX_IN_FLIGHT` calls of this process wait on S3 at once; a call that
    finds no slot within `S3_IN_FLIGHT_WAIT` seconds fails at once too, so a hung store holds
    only that many web threads while the breaker learns it is down.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._failures = 0
        self._open_until = 0.0
        self._trial = False
        self._slots: dict[int, threading.BoundedSemaphore] = {}

    def _semaphore(self, size: int) -> threading.BoundedSemaphore:
        with self._lock:
            if size not in self._slots:
                self._slots[size] = threading.BoundedSemaphore(size)
            return self._slots[size]

    def state(self) -> str:
        with self._lock:
            if not self._open_until:
                return "closed"
            return "open" if time.monotonic() < self._open_until else "half-open"

    def reset(self) -> None:
        with self._lock:
            self._failures, self._open_until, self._trial = 0, 0.0, False

    def _admit(self) -> bool:
        """Raise while open; True when this call is the half-open trial."""
        with self._lock:
            if not self._open_until:
                return False
            left = self._open_until - time.monotonic()
            if left > 0 or self._trial:
                raise ObjectStoreUnavailable(
                    "object storage circuit open", retry_after=max(1, math.ceil(left))
                )
            self._trial = True
            return True

    def _record(self, *, up: bool) -> None:
        with self._lock:
            self._trial = False
            if up:
                if self._open_until:
                    logger.info("objects.breaker_closed")
                self._failures, self._open_until = 0, 0.0
                return
            self._failures += 1
            threshold = max(1, int(settings.S3_BREAKER_FAILURES))
            if self._failures >= threshold or self._open_until:
                cooldown = float(settings.S3_BREAKER_COOLDOWN)
                if not self._open_until or time.monotonic() >= self._open_until:
                    logger.warning(
                        "objects.breaker_open",
                        extra={"failures": self._failures, "cooldown": cooldown},
                    )
                self._open_until = time.monotonic() + cooldown

    @contextmanager
    def guard(self) -> Iterator[None]:
        """Around one or more calls to S3: refuse at once when open or full, record how the
        store answered. Raises `ObjectStoreUnavailable` on refusal."""
        self._admit()
        slots = self._semaphore(max(1, int(settings.S3_MAX_IN_FLIGHT)))
        if not slots.acquire(timeout=max(0.0, float(settings.S3_IN_FLIGHT_WAIT))):
            with self._lock:
                self._trial = False
            raise ObjectStoreUnavailable("too many calls waiting on object storage")
        try:
            yield
        except ObjectStoreUnavailable:
            self._record(up=False)
            raise
        except BaseException:
            self._record(up=True)  # the store answered (404, a refusal) or the caller stopped
            raise
        else:
            self._record(up=True)
        finally:
            slots.release()


breaker = CircuitBreaker()


class S3ObjectStore:
    """Objects in one S3 bucket."""

    def __init__(self, client: Any, bucket: str) -> None:
        self.client = client
        self.bucket = bucket

    def _fail(self, key: str, exc: Exception) -> ObjectStoreError:
        if isinstance(exc, ClientError) and _is_missing(exc):
            return ObjectNotFound(key)
        if _is_unavailable(exc):
            return ObjectStoreUnavailable(f"S3 request for {key!r} failed: {exc}")
        return ObjectStoreError(f"S3 request for {key!r} failed: {exc}")

    @contextmanager
    def _io(self, key: str) -> Iterator[None]:
        """One exchange with S3 under the circuit breaker; boto errors become ours."""
        with breaker.guard():
            try:
                yield
            except (BotoCoreError, ClientError) as exc:
                raise self._fail(key, exc) from exc

    def put(self, key: str, data: bytes) -> None:
        with self._io(key):
            self.client.put_object(
                Bucket=self.bucket,
                Key=_check_key(key),
                Body=data,
                ContentType=UPLOAD_CONTENT_TYPE,
            )

    def put_file(self, key: str, path: Path) -> None:
        """Stream the file at `path` to S3 (one PUT, read from disk as it goes); then delete it."""
        try:
            with self._io(key), open(path, "rb") as handle:
                self.client.put_object(
                    Bucket=self.bucket,
                    Key=_check_key(key),
                    Body=handle,
                    ContentType=UPLOAD_CONTENT_TYPE,
                )
        finally:
            Path(path).unlink(missing_ok=True)

    def get(self, key: str) -> bytes:
        with self._io(key):
            response = self.client.get_object(Bucket=self.bucket, Key=_check_key(key))
            return bytes(response["Body"].read())

    def get_range(self, key: str, start: int, end: int) -> bytes:
        _check_range(start, end)
        if start == end:
            return b""
        with self._io(key):
            response = self.client.get_object(
                Bucket=self.bucket, Key=_check_key(key), Range=f"bytes={start}-{end - 1}"
            )
            return bytes(response["Body"].read())

    def size(self, key: str) -> int:
        with self._io(key):
            response = self.client.head_object(Bucket=self.bucket, Key=_check_key(key))
            return int(response["ContentLength"])

    def delete(self, key: str) -> None:
        with self._io(key):
            self.client.delete_object(Bucket=self.bucket, Key=_check_key(key))

    def list(self, prefix: str) -> Iterator[ObjectInfo]:
        with self._io(prefix):
            pages = self.client.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=_check_key(prefix.rstrip("/")) + "/"
            )
            for page in pages:
                for item in page.get("Contents", []):
                    yield ObjectInfo(
                        key=item["Key"], size=int(item["Size"]), modified=item["LastModified"]
                    )

    def presign_put(self, key: str, size: int, sha256: str, expires_in: int) -> PresignedUpload:
        """A PUT URL bound to this key, length and SHA-256: S3 rejects any other body."""
        checksum = base64.b64encode(bytes.fromhex(sha256)).decode("ascii")
        try:
            url = self.client.generate_presigned_url(
                "put_object",
                Params={
                    "Bucket": self.bucket,
                    "Key": _check_key(key),
                    "ContentLength": size,
                    "ContentType": UPLOAD_CONTENT_TYPE,
                    "ChecksumSHA256": checksum,
                },
                ExpiresIn=expires_in,
                HttpMethod="PUT",
            )
        except (BotoCoreError, ClientError) as exc:
            raise self._fail(key, exc) from exc
        headers = {
            "Content-Length": str(size),
            "Content-Type": UPLOAD_CONTENT_TYPE,
            "x-amz-checksum-sha256": checksum,
        }
        return PresignedUpload(url=url, method="PUT", headers=headers, expires_in=expires_in)

    def put_stream(self, key: str, chunks: Iterable[bytes], content_type: str) -> int:
        """One PUT when it fits in a part, else a multipart upload (aborted on any failure,
        so no half object is ever visible under `key`). Each call to S3 goes through the
        breaker on its own: a slow producer of `chunks` holds no in-flight slot."""
        _check_key(key)
        buffer, size, upload_id = bytearray(), 0, None
        parts: list[dict[str, Any]] = []
        try:
            for chunk in chunks:
                buffer += chunk
                size += len(chunk)
                if len(buffer) >= STREAM_PART_BYTES:
                    if upload_id is None:
                        with self._io(key):
                            upload_id = self.client.create_multipart_upload(
                                Bucket=self.bucket, Key=key, ContentType=content_type
                            )["UploadId"]
                    parts.append(self._part(key, upload_id, len(parts) + 1, bytes(buffer)))
                    buffer.clear()
            if upload_id is None:
                with self._io(key):
                    self.client.put_object(
                        Bucket=self.bucket, Key=key, Body=bytes(buffer), ContentType=content_type
                    )
                return size
            if buffer:
                parts.append(self._part(key, upload_id, len(parts) + 1, bytes(buffer)))
            with self._io(key):
                self.client.complete_multipart_upload(
                    Bucket=self.bucket,
                    Key=key,
                    UploadId=upload_id,
                    MultipartUpload={"Parts": parts},
                )
            return size
        except BaseException:
            if upload_id is not None:
                try:
                    with self._io(key):
                        self.client.abort_multipart_upload(
                            Bucket=self.bucket, Key=key, UploadId=upload_id
                        )
                except ObjectStoreError:
                    pass  # the bucket's lifecycle rule for incomplete uploads is the backstop
            raise

    def _part(self, key: str, upload_id: str, number: int, body: bytes) -> dict[str, Any]:
        with self._io(key):
            response = self.client.upload_part(
                Bucket=self.bucket, Key=key, UploadId=upload_id, PartNumber=number, Body=body
            )
        return {"ETag": response["ETag"], "PartNumber": number}

    def presign_get(self, key: str, expires_in: int, filename: str, content_type: str) -> str:
        """A GET URL valid for `expires_in` seconds that downloads the object as `filename`."""
        try:
            return str(
                self.client.generate_presigned_url(
                    "get_object",
                    Params={
                        "Bucket": self.bucket,
                        "Key": _check_key(key),
                        "ResponseContentType": content_type,
                        "ResponseContentDisposition": f'attachment; filename="{filename}"',
                    },
                    ExpiresIn=expires_in,
                    HttpMethod="GET",
                )
            )
        except (BotoCoreError, ClientError) as exc:
            raise self._fail(key, exc) from exc


_client_lock = threading.Lock()


def object_store() -> ObjectStore:
    """The store the current settings select."""
    if settings.S3_BUCKET:
        # One thread builds the client; the others wait for it instead of each building one
        # (tens of milliseconds of CPU each, all at once when a process starts under load).
        with _client_lock:
            client = _s3_client(
                settings.S3_ENDPOINT_URL,
                settings.S3_REGION,
                settings.S3_ACCESS_KEY_ID,
                settings.S3_SECRET_ACCESS_KEY,
                (
                    float(settings.S3_CONNECT_TIMEOUT),
                    float(settings.S3_READ_TIMEOUT),
                    int(settings.S3_MAX_ATTEMPTS),
                ),
            )
        return S3ObjectStore(client, settings.S3_BUCKET)
    return LocalObjectStore(Path(settings.OBJECT_STORE_DIR))


def object_put(*, key: str, data: bytes) -> None:
    object_store().put(key, data)


def object_put_file(*, key: str, path: Path) -> None:
    """Store the file at `path` under `key`; the file is moved (or deleted once sent)."""
    object_store().put_file(key, Path(path))


def object_get(*, key: str) -> bytes:
    return object_store().get(key)


def object_get_range(*, key: str, start: int, end: int) -> bytes:
    """Bytes `[start, end)` of an object, without fetching the rest of it."""
    return object_store().get_range(key, start, end)


def object_size(*, key: str) -> int:
    return object_store().size(key)


def object_delete(*, key: str) -> None:
    object_store().delete(key)


def object_list(*, prefix: str) -> Iterator[ObjectInfo]:
    """Every object under `prefix/` (in-flight local uploads excluded)."""
    return object_store().list(prefix)


def object_presign_put(*, key: str, size: int, sha256: str, expires_in: int) -> PresignedUpload:
    return object_store().presign_put(key, size, sha256, expires_in)


def object_put_stream(*, key: str, chunks: Iterable[bytes], content_type: str) -> int:
    """Write an object from byte strings without holding it whole; returns its size."""
    return object_store().put_stream(key, chunks, content_type)


def object_presign_get(*, key: str, expires_in: int, filename: str, content_type: str) -> str:
    return object_store().presign_get(key, expires_in, filename, content_type)


def object_presign_available() -> bool:
    """Whether the store can hand out presigned URLs (S3 is configured)."""
    return bool(settings.S3_BUCKET)
