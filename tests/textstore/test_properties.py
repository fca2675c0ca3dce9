"""Any history of edits round-trips exactly through blob_put / blob_read / blob_read_range."""

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from textstore.cache import caches_clear
from textstore.delta import delta_apply, delta_apply_many, delta_apply_reference, delta_compute
from textstore.models import Blob
from textstore.selectors import blob_read, blob_read_range
from textstore.services import blob_put

from .strategies import any_text, apply_edit, histories

pytestmark = pytest.mark.django_db

PROPERTY = hypothesis_settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# Store configurations that push texts through every path: default policy, a tiny chain cap
# (intermediate and full snapshots every few versions), and tiny inline/chunk sizes (full
# snapshots chunked in object storage, chunk boundaries inside words and emoji sequences).
CONFIGS = {
    "default": {},
    "short-chains": {"TEXTSTORE_MAX_CHAIN": 3},
    "chunked": {"TEXTSTORE_INLINE_MAX": 16, "TEXTSTORE_CHUNK_CHARS": 5, "TEXTSTORE_MAX_CHAIN": 4},
}


def _versions(start: str, edits: list[tuple]) -> list[str]:
    versions = [start]
    for op in edits:
        versions.append(apply_edit(versions[-1], op))
    return versions


@pytest.mark.parametrize("config", CONFIGS)
@PROPERTY
@given(history=histories, data=st.data())
def test_history_round_trips(settings, config, history, data):
    for name, value in CONFIGS[config].items():
        setattr(settings, name, value)
    versions = _versions(*history)
    shas = []
    base = None
    for text in versions:
        base = blob_put(text=text, base=base)
        shas.append(base.sha256)
    caches_clear()
    for sha, text in zip(shas, versions, strict=True):
        assert blob_read(sha=sha) == text
    for sha, text in zip(shas, versions, strict=True):
        caches_clear()  # ranged reads must work cold, not only from the cache
        offset = data.draw(st.integers(0, len(text) + 2), label="offset")
        length = data.draw(st.integers(0, len(text) + 2), label="length")
        assert (
            blob_read_range(sha=sha, offset=offset, length=length) == text[offset : offset + length]
        )


@PROPERTY
@given(source=any_text, target=any_text)
def test_fast_reader_matches_diff_from_delta(source, target):
    delta = delta_compute(source=source, target=target)
    assert delta_apply_reference(source=source, delta=delta) == target
    assert delta_apply(source=source, delta=delta) == target


@PROPERTY
@given(text=any_text)
def test_put_is_idempotent(text):
    first = blob_put(text=text)
    again = blob_put(text=text, base=first)
    assert again.sha256 == first.sha256
    assert Blob.objects.filter(pk=first.sha256).count() == 1


tokens = st.one_of(
    st.tuples(st.sampled_from("=-"), st.integers(-3, 40)).map(lambda t: f"{t[0]}{t[1]}"),
    st.text(max_size=6).map(lambda s: "+" + s),
    st.sampled_from(["", "x", "=", "=1e3", "+%", "+%zz", "+%F0%9F", "=0x10"]),
)


@PROPERTY
@given(source=any_text, delta=st.lists(tokens, max_size=8).map("\t".join))
def test_fast_reader_rejects_what_diff_from_delta_rejects(source, delta):
    try:
        expected = delta_apply_reference(source=source, delta=delta)
    except ValueError:
        with pytest.raises(ValueError):
            delta_apply(source=source, delta=delta)
    else:
        assert delta_apply(source=source, delta=delta) == expected


@PROPERTY
@given(texts=st.lists(any_text, min_size=2, max_size=6))
def test_a_run_of_deltas_at_once_matches_one_by_one(texts):
    deltas = [delta_compute(source=a, target=b) for a, b in zip(texts, texts[1:], strict=False)]
    assert delta_apply_many(source=texts[0], deltas=deltas) == texts[-1]


@PROPERTY
@given(
    source=any_text,
    target=any_text,
    delta=st.lists(tokens, max_size=8).map("\t".join),
)
def test_a_run_of_deltas_rejects_what_one_by_one_rejects(source, target, delta):
    first = delta_compute(source=source, target=target)
    try:
        expected = delta_apply(source=delta_apply(source=source, delta=first), delta=delta)
    except ValueError:
        with pytest.raises(ValueError):
            delta_apply_many(source=source, deltas=[first, delta])
    else:
        assert delta_apply_many(source=source, deltas=[first, delta]) == expected
