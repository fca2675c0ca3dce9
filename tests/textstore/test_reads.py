"""The read path: one query for a run of plain deltas, starting from cached snapshots and
checkpoints, and never a cached text that was not verified."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from textstore.cache import base_cache, caches_clear, text_cache
from textstore.exceptions import TextstoreIntegrityError
from textstore.models import Blob
from textstore.selectors import CHECKPOINT_EVERY, blob_read
from textstore.services import blob_put

from .helpers import history
from .test_integrity import _swap_insert, rewrite_delta

pytestmark = pytest.mark.django_db


def _stored(versions: int) -> tuple[list[str], list[Blob]]:
    texts = history(seed=5, chars=4_000, versions=versions)
    blobs, base = [], None
    for text in texts:
        base = blob_put(text=text, base=base)
        blobs.append(base)
    caches_clear()
    return texts, blobs


def test_every_version_reads_back_cold_and_warm():
    texts, blobs = _stored(60)
    for text, blob in zip(texts, blobs, strict=True):
        caches_clear()
        assert blob_read(sha=blob.sha256) == text
    text_cache.clear()  # keep the snapshots and checkpoints, forget the results
    for text, blob in zip(texts, blobs, strict=True):
        assert blob_read(sha=blob.sha256) == text


def test_a_warm_read_is_one_query_and_applies_few_deltas():
    texts, blobs = _stored(40)
    rows = {b.sha256: b for b in Blob.objects.filter(sha256__in=[b.sha256 for b in blobs])}
    runs = [rows[b.sha256].run for b in blobs]
    assert max(runs) > CHECKPOINT_EVERY, "the history must have a run longer than a checkpoint"
    blob_read(sha=blobs[-1].sha256)  # warms the snapshot and the checkpoints of its run
    text_cache.clear()
    for index in range(len(blobs) - 1, len(blobs) - 1 - CHECKPOINT_EVERY, -1):
        with CaptureQueriesContext(connection) as queries:
            assert blob_read(sha=blobs[index].sha256) == texts[index]
        assert len(queries) == 1, [q["sql"] for q in queries.captured_queries]


def test_a_warm_read_applies_only_the_run_above_the_nearest_checkpoint_at_once(monkeypatch):
    from textstore import chains

    texts, blobs = _stored(40)
    latest = blobs[-1]
    rows = {b.sha256: b for b in Blob.objects.filter(sha256__in=[b.sha256 for b in blobs])}
    assert rows[latest.sha256].run % CHECKPOINT_EVERY > 1, "the latest must sit past a checkpoint"
    # The walk stops at the nearest checkpoint: at most CHECKPOINT_EVERY + 1 rows.
    short = chains.chain_tuples(latest.sha256, to_checkpoint=True)
    full = chains.chain_tuples(latest.sha256)
    assert 2 <= len(short) <= CHECKPOINT_EVERY + 1 < len(full)
    assert short == full[: len(short)]
    assert short[-1][6] % CHECKPOINT_EVERY == 0  # its run
    with CaptureQueriesContext(connection) as queries:
        assert blob_read(sha=latest.sha256) == texts[-1]  # cold: from the snapshot
    assert len(queries) == 1, "nothing cached: the whole chain in one query"
    # Warm elsewhere, cold here: the walk stops at a checkpoint not cached, then the chain.
    base_cache.clear()
    text_cache.clear()
    blob_read(sha=blobs[0].sha256)
    with CaptureQueriesContext(connection) as queries:
        assert blob_read(sha=latest.sha256) == texts[-1]
    assert len(queries) == 2
    text_cache.clear()
    runs: list[int] = []
    real_many = chains.delta_apply_many
    monkeypatch.setattr(
        chains,
        "delta_apply_many",
        lambda *, source, deltas: (
            runs.append(len(deltas)) or real_many(source=source, deltas=deltas)
        ),
    )
    monkeypatch.setattr(chains, "snapshot_text", lambda row: pytest.fail("snapshot decoded"))
    with CaptureQueriesContext(connection) as queries:
        assert blob_read(sha=latest.sha256) == texts[-1]
    assert len(queries) == 1
    # One pass over the deltas since the checkpoint below the latest.
    assert runs == [rows[latest.sha256].run % CHECKPOINT_EVERY]


def test_a_checkpoint_is_cached_only_after_its_hash_is_checked():
    texts, blobs = _stored(30)
    rows = {b.sha256: b for b in Blob.objects.filter(sha256__in=[b.sha256 for b in blobs])}
    checkpoint = next(
        b for b in blobs if rows[b.sha256].run and rows[b.sha256].run % CHECKPOINT_EVERY == 0
    )
    rewrite_delta(checkpoint, _swap_insert)
    with pytest.raises(TextstoreIntegrityError):
        blob_read(sha=blobs[-1].sha256)
    assert base_cache.get(checkpoint.sha256) is None
    assert text_cache.get(blobs[-1].sha256) is None
