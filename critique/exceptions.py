"""The critique app's domain errors (docs/critique.md)."""

from common.exceptions import Conflict, DomainError, Forbidden, NotFound


class CritiqueError(DomainError):
    """Bad input to a critique service (400); `field` names the culprit."""


__all__ = ["Conflict", "CritiqueError", "Forbidden", "NotFound"]
