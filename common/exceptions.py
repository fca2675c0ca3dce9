"""Domain errors shared by every app. Services raise these; the API turns them into JSON.

Services never raise DRF exceptions (docs/style.md, rule 3); each app's `exceptions.py` subclasses
these so views can catch one family.
"""


class DomainError(Exception):
    """Bad input or a forbidden state change, reported to the caller as 400 with `detail`."""

    status_code = 400

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class Conflict(DomainError):
    """A compare-and-set lost, or the state moved on: 409."""

    status_code = 409


class NotFound(Exception):
    """Missing, or not visible to the caller: the two are indistinguishable (404)."""


class Forbidden(DomainError):
    """The caller may see the object but not do this to it (403)."""

    status_code = 403


class RateLimited(DomainError):
    """Too many failed attempts from this client: 429 with Retry-After."""

    status_code = 429

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class ServiceUnavailable(Exception):
    """A backing service (object storage, ...) is down or too slow: 503 with Retry-After.

    Not the caller's fault and not a bug: the request may succeed when retried."""

    def __init__(self, message: str, *, retry_after: int = 30) -> None:
        super().__init__(message)
        self.message = message
        self.retry_after = retry_after


def text_input(
    value: object,
    field: str,
    *,
    max_chars: int,
    required: bool = False,
    error: type[DomainError] = DomainError,
) -> str:
    """A free-text field of a service's input: None reads as "", anything but a string or a
    string longer than `max_chars` (as sent) raises `error` naming `field`, the rest is trimmed;
    `required` refuses what is blank after trimming."""
    if value is None:
        value = ""
    if not isinstance(value, str) or len(value) > max_chars:
        raise error(f"{field}: text of at most {max_chars} characters.", field=field)
    value = value.strip()
    if required and not value:
        raise error(f"{field}: required.", field=field)
    return value
