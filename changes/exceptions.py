from common.exceptions import Conflict, DomainError, Forbidden, NotFound


class ChangeInvalid(DomainError):
    """Bad input to a change-request service (400); `field` names the culprit."""


class GateFailed(Conflict):
    """A merge was asked while some gate rule does not hold (409, naming the failing rules)."""


class RequestClosed(Conflict):
    """The request is merged or closed: it takes no more pushes, merges or suggestions (409)."""


__all__ = ["ChangeInvalid", "Forbidden", "GateFailed", "NotFound", "RequestClosed"]
