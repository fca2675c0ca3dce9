"""Throttling of failed log-ins, per account and per client address, and of sign-ups per
client address (issue #31: one address made 20 accounts in 16 s).

One policy for the HTML log-in and the API token endpoint. Only failures count; once either
counter is over its limit, every attempt (even with the right password) is refused until the
window ends, so guessing costs time whatever the guess.
"""

import hashlib

from django.conf import settings
from django.http import HttpRequest

from common.exceptions import RateLimited
from common.ratelimit import Limit, client_ip, ratelimit_exceeded, ratelimit_hit

SCOPE_ACCOUNT = "login-account"
SCOPE_ADDRESS = "login-address"
SCOPE_SIGNUP = "signup-address"


def _limits(request: HttpRequest, username: str) -> list[tuple[str, str, Limit]]:
    window = settings.LOGIN_FAILURE_WINDOW
    # Case-folded and hashed: "Bob" and "bob" share a counter; keys stay short and plain.
    account = hashlib.sha256(username.strip().casefold().encode("utf-8", "replace")).hexdigest()
    return [
        (SCOPE_ACCOUNT, account, Limit(settings.LOGIN_FAILURE_LIMIT_ACCOUNT, window)),
        (SCOPE_ADDRESS, client_ip(request), Limit(settings.LOGIN_FAILURE_LIMIT_ADDRESS, window)),
    ]


def login_throttle_check(*, request: HttpRequest, username: str) -> None:
    """Raise RateLimited if this account or this client has failed too often."""
    waits = [
        ratelimit_exceeded(scope=scope, ident=ident, limit=limit)
        for scope, ident, limit in _limits(request, username)
    ]
    wait = max(waits)
    if wait:
        raise RateLimited(
            "Too many failed log-ins for this account or from this address; "
            f"try again in {wait} seconds.",
            retry_after=wait,
        )


def login_failure_record(*, request: HttpRequest, username: str) -> None:
    for scope, ident, limit in _limits(request, username):
        ratelimit_hit(scope=scope, ident=ident, limit=limit)


def _signup_limit() -> Limit:
    return Limit(int(settings.SIGNUP_RATE_LIMIT), int(settings.SIGNUP_RATE_WINDOW))


def signup_throttle_check(*, request: HttpRequest) -> None:
    """RateLimited once this client address sent SIGNUP_RATE_LIMIT sign-ups in the window.
    Every attempt counts (a refused form too), so the form cannot be used to probe names."""
    wait = ratelimit_exceeded(scope=SCOPE_SIGNUP, ident=client_ip(request), limit=_signup_limit())
    if wait:
        raise RateLimited(
            f"Too many sign-ups from this address: at most {settings.SIGNUP_RATE_LIMIT} every"
            f" {settings.SIGNUP_RATE_WINDOW} s; try again in {wait} seconds.",
            retry_after=wait,
        )


def signup_attempt_record(*, request: HttpRequest) -> None:
    ratelimit_hit(scope=SCOPE_SIGNUP, ident=client_ip(request), limit=_signup_limit())
