"""Counted slots with a time-to-live in the Django cache (common.leases): the per-account cap
of open run streams is built on them."""

import time

from common.leases import lease_acquire, lease_count, lease_release, lease_renew


def test_slots_up_to_the_limit_then_none_and_a_release_frees_one():
    leases = [lease_acquire(scope="t", ident="u1", limit=3, ttl=60) for _ in range(3)]
    assert all(leases)
    assert len({lease.key for lease in leases}) == 3
    assert lease_acquire(scope="t", ident="u1", limit=3, ttl=60) is None
    assert lease_count(scope="t", ident="u1", limit=3) == 3
    # Slots are per ident and per scope.
    assert lease_acquire(scope="t", ident="u2", limit=3, ttl=60) is not None
    assert lease_acquire(scope="other", ident="u1", limit=3, ttl=60) is not None
    lease_release(lease=leases[0])
    assert lease_count(scope="t", ident="u1", limit=3) == 2
    again = lease_acquire(scope="t", ident="u1", limit=3, ttl=60)
    assert again is not None and again.key == leases[0].key
    assert lease_renew(lease=again)


def test_a_lease_nobody_renews_expires_so_a_crashed_holder_frees_its_slot():
    held = lease_acquire(scope="t", ident="crashed", limit=1, ttl=1)
    assert held is not None
    assert lease_acquire(scope="t", ident="crashed", limit=1, ttl=1) is None
    # The holder "crashed": it never renews or releases. The slot frees itself once its ttl
    # has passed (the cache's own clock, Redis's in the services pass): polled, not slept on.
    deadline = time.monotonic() + 10
    while lease_count(scope="t", ident="crashed", limit=1):
        assert time.monotonic() < deadline, "the unrenewed lease never expired"
        time.sleep(0.05)
    taken = lease_acquire(scope="t", ident="crashed", limit=1, ttl=60)
    assert taken is not None
    # The old holder's renew and release no longer touch the slot someone else holds now.
    assert not lease_renew(lease=held)
    lease_release(lease=held)
    assert lease_count(scope="t", ident="crashed", limit=1) == 1
