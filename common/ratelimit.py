"""A fixed-window counter in the Django cache (Redis in production), per key.

Used to slow down guessing of share-link tokens and passwords: only failures are counted.
Every per-client limit keys on `client_ip`, which honours `TRUSTED_PROXY_COUNT`.
"""

import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest


@dataclass(frozen=True)
class Limit:
    count: int
    window_seconds: int


def _key(scope: str, ident: str, window: int) -> tuple[str, int]:
    now = int(time.time())
    start = now - now % window
    return f"rl:{scope}:{ident}:{start}", start + window - now


def ratelimit_exceeded(*, scope: str, ident: str, limit: Limit) -> int:
    """Seconds to wait if `ident` is over the limit in this window, else 0."""
    key, remaining = _key(scope, ident, limit.window_seconds)
    return max(remaining, 1) if (cache.get(key) or 0) >= limit.count else 0


def ratelimit_hit(*, scope: str, ident: str, limit: Limit) -> None:
    key, remaining = _key(scope, ident, limit.window_seconds)
    if cache.add(key, 1, timeout=remaining + 1):
        return
    try:
        cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.add(key, 1, timeout=remaining + 1)


def client_ip(request: HttpRequest) -> str:
    """The client's address.

    With `TRUSTED_PROXY_COUNT` = 0 (the default: clients connect directly) it is REMOTE_ADDR.
    With N proxies in front, each appending the address it saw to X-Forwarded-For, it is the
    N-th entry from the right: entries further left were written by the client and may be
    forged. Without that setting behind a proxy, every client would share the proxy's
    address, and one guesser would lock out everyone.
    """
    remote: str = request.META.get("REMOTE_ADDR", "") or "unknown"
    proxies = int(settings.TRUSTED_PROXY_COUNT)
    if proxies <= 0:
        return remote
    forwarded: list[str] = [
        part.strip()
        for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")
        if part.strip()
    ]
    if not forwarded:
        return remote
    return forwarded[-min(proxies, len(forwarded))][:64]
