"""A per-client cap on estimator requests: each can run a simulation, and the pages are public.

`ESTIMATE_RATE_LIMIT` requests per `ESTIMATE_RATE_WINDOW` seconds (settings) per account; a
caller not signed in gets the tighter `ESTIMATE_ANON_RATE_LIMIT`, counted per address.
"""

from django.conf import settings
from django.http import HttpRequest

from common.exceptions import RateLimited
from common.ratelimit import Limit, client_ip, ratelimit_exceeded, ratelimit_hit

SCOPE = "estimate"


def estimate_throttle(*, request: HttpRequest) -> None:
    """Count this request; RateLimited (429 with Retry-After) once the client is over the cap."""
    user = getattr(request, "user", None)
    signed_in = user is not None and user.is_authenticated
    limit = Limit(
        count=int(settings.ESTIMATE_RATE_LIMIT if signed_in else settings.ESTIMATE_ANON_RATE_LIMIT),
        window_seconds=int(settings.ESTIMATE_RATE_WINDOW),
    )
    ident = f"user:{user.pk}" if user is not None and signed_in else client_ip(request)
    wait = ratelimit_exceeded(scope=SCOPE, ident=ident, limit=limit)
    if wait:
        raise RateLimited(f"Too many estimates; try again in {wait} s.", retry_after=wait)
    ratelimit_hit(scope=SCOPE, ident=ident, limit=limit)
