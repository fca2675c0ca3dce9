"""Counted slots with a time-to-live, in the Django cache (Redis in production).

A holder takes one of `limit` numbered slots with an atomic `cache.add`; the slot expires by
itself after `ttl` seconds unless renewed, so a process that crashed while holding slots leaks
them only until then. With Redis the count holds across every web process; with the embedded
in-memory cache it holds per process.
"""

from __future__ import annotations

import random
import secrets
from dataclasses import dataclass

from django.core.cache import cache


@dataclass(frozen=True)
class Lease:
    key: str
    token: str
    ttl: int


def _slot_keys(scope: str, ident: str, limit: int) -> list[str]:
    return [f"lease:{scope}:{ident}:{slot}" for slot in range(limit)]


def lease_acquire(*, scope: str, ident: str, limit: int, ttl: int) -> Lease | None:
    """One of `ident`'s `limit` slots in `scope`, or None when all are held."""
    keys = _slot_keys(scope, ident, limit)
    held = cache.get_many(keys)
    free = [key for key in keys if key not in held]
    random.shuffle(free)  # two racing holders rarely try the same slot first
    token = secrets.token_hex(8)
    for key in free:
        if cache.add(key, token, timeout=ttl):
            return Lease(key=key, token=token, ttl=ttl)
    return None


def lease_renew(*, lease: Lease) -> bool:
    """Extend the lease by its ttl; False when it expired (someone else may hold the slot)."""
    if cache.get(lease.key) != lease.token:
        return False
    return bool(cache.touch(lease.key, lease.ttl))


def lease_release(*, lease: Lease) -> None:
    if cache.get(lease.key) == lease.token:
        cache.delete(lease.key)


def lease_count(*, scope: str, ident: str, limit: int) -> int:
    """How many of `ident`'s slots are held now."""
    return len(cache.get_many(_slot_keys(scope, ident, limit)))
