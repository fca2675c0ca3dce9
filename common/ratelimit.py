"""A fixed-window counter in the Django cache (Redis in production), per key.

Used to slow down guessing of share-link tokens: only failures are counted.
"""

import time
from dataclasses import dataclass

from django.core.cache import cache


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


def client_ip(request) -> str:
    """The client address. Behind a proxy, set one that overwrites REMOTE_ADDR."""
    return request.META.get("REMOTE_ADDR", "") or "unknown"
