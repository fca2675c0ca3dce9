"""A backing service (Redis as cache or broker) that is down is a 503, not a 500 (issue #31).

`BACKEND_DOWN` are the exceptions a cache read or a broker publish raises when Redis cannot be
reached; the API's exception handler and the page middleware answer them 503 with Retry-After
(`RETRY_AFTER` seconds), and code that hands work to the broker after a commit catches
them and leaves the work for its reaper (docs/design.md, Work handed to the broker).
"""

from celery.exceptions import OperationalError  # kombu's, re-exported by celery
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from .exceptions import ServiceUnavailable

# Seconds a client is told to wait while Redis (cache or broker) cannot be reached.
RETRY_AFTER = 5

BACKEND_DOWN: tuple[type[Exception], ...] = (
    OperationalError,
    RedisConnectionError,
    RedisTimeoutError,
)


def outage_unavailable(exception: Exception) -> ServiceUnavailable | None:
    """The 503 a backing service's failure becomes, or None for any other exception."""
    if isinstance(exception, ServiceUnavailable):
        return exception
    if isinstance(exception, BACKEND_DOWN):
        return ServiceUnavailable(
            "A backing service (cache or task queue) is unavailable; try again shortly.",
            retry_after=RETRY_AFTER,
        )
    return None
