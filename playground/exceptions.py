from common.exceptions import Conflict, DomainError, NotFound
from common.models import Immutable


class PlaygroundError(DomainError):
    """Bad input to a playground service (400)."""


class ContentInvalid(PlaygroundError):
    """A version's content does not have the shape docs/api.md gives; `field` names the culprit."""


class VersionImmutable(PlaygroundError, Immutable):
    """Prompt versions are written once; there is no update or delete path."""


class LabelConflict(Conflict):
    """A label's compare-and-set lost: it no longer points where the caller expected (409)."""


class LabelGated(Conflict):
    """A gated label was moved directly: it moves only by merging a change request (409)."""


__all__ = [
    "ContentInvalid",
    "LabelConflict",
    "LabelGated",
    "NotFound",
    "PlaygroundError",
    "VersionImmutable",
]
