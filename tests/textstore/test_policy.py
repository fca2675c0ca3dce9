"""The snapshot policy's bounds hold for every stored blob (policy.py)."""

import random

import pytest

from textstore.models import Blob
from textstore.policy import (
    ChainState,
    chain_cap,
    plain_delta_fits,
    run_cap,
    snapshot_delta_fits,
)
from textstore.selectors import blob_chain, blob_read
from textstore.services import blob_put

from .helpers import history, prose

pytestmark = pytest.mark.django_db


def store(texts: list[str]) -> list[Blob]:
    blobs = []
    base = None
    for text in texts:
        base = blob_put(text=text, base=base)
        blobs.append(base)
    return blobs


def assert_within_bounds(blob: Blob, cap: int) -> None:
    chain = blob_chain(sha=blob.sha256)
    rebuild_bytes = sum(row.stored_size for row in chain)
    full = chain[-1]
    # What the row records is what a read really does ...
    assert len(chain) - 1 == blob.depth
    assert full.kind == Blob.Kind.FULL
    assert full.stored_size == blob.snapshot_bytes
    assert rebuild_bytes == blob.snapshot_bytes + blob.delta_bytes
    # ... and it stays inside the policy: one snapshot plus at most one snapshot's worth of
    # compressed deltas, and at most `cap` deltas, of which at most run_cap(cap) plain ones
    # after the nearest snapshot.
    assert blob.depth <= cap
    assert rebuild_bytes <= 2 * blob.snapshot_bytes
    assert blob.run <= run_cap(cap)
    if blob.is_snapshot and blob.kind == Blob.Kind.DELTA:
        assert blob.depth <= cap - run_cap(cap)
    plain = [row for row in chain if not row.is_snapshot]
    assert len(plain) == blob.run
    assert all(row.is_snapshot for row in chain[blob.run :])


@pytest.mark.parametrize("max_chain", [1, 2, 7, 100])
def test_chain_length_and_rebuild_bytes_never_exceed_the_bounds(settings, max_chain):
    settings.TEXTSTORE_MAX_CHAIN = max_chain
    texts = history(seed=max_chain, chars=3_000, versions=150)
    blobs = store(texts)
    for blob in blobs:
        assert_within_bounds(Blob.objects.get(pk=blob.pk), max_chain)
    for blob, text in zip(blobs[::10], texts[::10], strict=True):
        assert blob_read(sha=blob.sha256) == text


def test_long_histories_use_intermediate_snapshots_not_just_full_ones(settings):
    settings.TEXTSTORE_MAX_CHAIN = 10
    blobs = store(history(seed=11, chars=6_000, versions=200))
    rows = Blob.objects.filter(pk__in=[b.pk for b in blobs])
    fulls = rows.filter(kind=Blob.Kind.FULL).count()
    intermediate = rows.filter(kind=Blob.Kind.DELTA, snapshot_level__isnull=False).count()
    # A plain every-`cap` rule would need 20 full snapshots here.
    assert intermediate > 0
    assert fulls < 200 // 10
    assert max(rows.values_list("snapshot_level", flat=True).exclude(snapshot_level=None)) >= 2


def test_multi_megabyte_texts_get_a_shorter_cap(settings):
    settings.TEXTSTORE_REBUILD_BUDGET_CHARS = 40_000
    texts = history(seed=5, chars=10_000, versions=30)  # cap = 40_000 // ~10_000 = 4
    cap = chain_cap(char_length=10_000)
    assert cap == 4
    for blob in store(texts):
        row = Blob.objects.get(pk=blob.pk)
        assert row.depth <= chain_cap(char_length=row.char_length) <= 4


def test_deltas_since_the_full_snapshot_are_bounded_by_its_size():
    # Each edit replaces a lot of text, so deltas are large: the bytes rule, not the chain
    # cap, must force the next full snapshot.
    rng = random.Random(9)
    texts = [prose(rng, 4_000)]
    for number in range(40):
        text = texts[-1]
        cut = (number * 613) % 3_000
        texts.append(text[:cut] + prose(rng, 500) + text[cut + 500 :])
    blobs = store(texts)
    rows = list(Blob.objects.filter(pk__in=[b.pk for b in blobs]))
    assert sum(row.kind == Blob.Kind.FULL for row in rows) >= 2
    for row in rows:
        assert row.delta_bytes <= row.snapshot_bytes
        assert_within_bounds(row, 100)


def test_policy_predicates():
    fresh = ChainState(depth=0, run=0, delta_bytes=0, snapshot_bytes=1_000)
    assert plain_delta_fits(base=fresh, delta_size=1_000, cap=10)
    assert not plain_delta_fits(base=fresh, delta_size=1_001, cap=10)
    long_run = ChainState(depth=5, run=5, delta_bytes=10, snapshot_bytes=1_000)
    assert not plain_delta_fits(base=long_run, delta_size=1, cap=10)  # run cap is 5
    deep_snapshot = ChainState(depth=5, run=0, delta_bytes=10, snapshot_bytes=1_000)
    assert not snapshot_delta_fits(anchor=deep_snapshot, delta_size=1, cap=10)
    shallow = ChainState(depth=4, run=0, delta_bytes=10, snapshot_bytes=1_000)
    assert snapshot_delta_fits(anchor=shallow, delta_size=1, cap=10)
    assert not snapshot_delta_fits(anchor=long_run, delta_size=1, cap=10)
    assert run_cap(1) == 1
    assert run_cap(100) == 50
