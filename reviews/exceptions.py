from common.exceptions import Conflict, DomainError, Forbidden, NotFound
from common.models import Immutable


class ReviewsError(DomainError):
    """Bad input to a reviews service (400); `field` names the culprit when there is one."""


class SelectorInvalid(ReviewsError):
    """A quote that does not occur, an ambiguous quote, or a position out of range."""


class ReviewLocked(ReviewsError):
    """Submitted reviews are read-only, except the issue status of their annotations."""


class RankTaken(ReviewsError):
    """Another risk of the review already has this rank; reorder with the ranking service."""


class RevisionImmutable(ReviewsError, Immutable):
    """Document revisions are written once; there is no update or delete path."""


__all__ = [
    "Conflict",
    "Forbidden",
    "NotFound",
    "RankTaken",
    "ReviewLocked",
    "ReviewsError",
    "RevisionImmutable",
    "SelectorInvalid",
]
