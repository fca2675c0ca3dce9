"""Domain errors of evaluations; the API and pages turn them into 400/404/409 answers."""

from common.exceptions import Conflict, DomainError, NotFound
from common.models import Immutable


class EvalInvalid(DomainError):
    """Bad input to an evaluation or a test set (400); `field` names the culprit."""


class TestSetImmutable(EvalInvalid, Immutable):
    """Test-set revisions and their rows are written once; an edit is a new revision."""


__all__ = ["Conflict", "EvalInvalid", "NotFound", "SourceHidden", "TestSetImmutable"]


class SourceHidden(DomainError):
    """Something an evaluation's cells read (its test set, a judge's version) is no longer
    visible to the evaluation's author; the cell ends `error` with this message."""
