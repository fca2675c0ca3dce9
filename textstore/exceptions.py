"""Errors raised by textstore.

Callers outside the app catch these families: `BlobNotFound` is a `NotFound` (404 at the API),
`TextEncodingError` and `InvalidRange` are `DomainError`s (400), and `TextstoreIntegrityError`
means stored data no longer rebuilds to its hash: a server-side fault that must never be
answered with silently wrong text.
"""

from common.exceptions import DomainError, NotFound, ServiceUnavailable


class TextstoreError(Exception):
    """Base class for textstore failures that are not the caller's fault."""


class BlobNotFound(NotFound):
    """No blob is stored under that SHA-256."""

    def __init__(self, sha: str) -> None:
        super().__init__(f"no blob with sha256 {sha!r}")
        self.sha = sha


class TextEncodingError(DomainError, ValueError):
    """The text cannot be stored as UTF-8 (for instance it holds a lone surrogate)."""


class InvalidRange(DomainError, ValueError):
    """A character range with a negative offset or length."""


class TextstoreIntegrityError(TextstoreError):
    """Stored data is damaged: a payload does not decode, a delta does not apply, or the
    rebuilt text does not hash to the blob's SHA-256."""

    def __init__(self, sha: str, reason: str) -> None:
        super().__init__(f"blob {sha}: {reason}")
        self.sha = sha
        self.reason = reason


class ObjectStoreError(TextstoreError):
    """Object storage (S3 or the local directory) failed or refused the request."""


class ObjectNotFound(ObjectStoreError):
    """No object under that key."""

    def __init__(self, key: str) -> None:
        super().__init__(f"no object under key {key!r}")
        self.key = key


class ObjectStoreUnavailable(ObjectStoreError, ServiceUnavailable):
    """Object storage cannot be reached, timed out or answered 5xx: 503 with Retry-After."""

    def __init__(self, message: str, *, retry_after: int = 30) -> None:
        ObjectStoreError.__init__(self, message)
        self.message = "Object storage is unavailable; try again shortly."
        self.retry_after = retry_after
