"""`blob_common_ends`: the unchanged start and end of two stored texts, found without holding
either whole (off a delta, by chunk hashes, or by comparing ranges)."""

import os
import random

import pytest

from textstore import objects
from textstore.selectors import blob_common_ends, blob_count
from textstore.services import blob_put

pytestmark = pytest.mark.django_db


@pytest.fixture(params=["s3", "local"])
def store(request, settings):
    request.getfixturevalue("s3_storage" if request.param == "s3" else "local_storage")
    settings.TEXTSTORE_INLINE_MAX = 4 * 1024
    settings.TEXTSTORE_CHUNK_CHARS = 1_000


def _random_text(rng: random.Random, chars: int) -> str:
    return "".join(rng.choice("ab\nc😀é ") for _ in range(chars))


@pytest.mark.parametrize("seed", range(10))
def test_common_ends_are_common_and_do_not_overlap(store, seed, monkeypatch):
    rng = random.Random(seed)
    base = _random_text(rng, rng.randrange(0, 20_000))
    i = rng.randrange(len(base) + 1)
    j = min(len(base), i + rng.randrange(50))
    other = base[:i] + _random_text(rng, rng.randrange(30)) + base[j:]
    first = blob_put(text=base)
    second = blob_put(text=other, base=first if seed % 2 else None)
    monkeypatch.setattr(objects, "object_get", lambda **_: pytest.fail("whole object fetched"))
    for a, b, x, y in ((first, second, base, other), (second, first, other, base)):
        prefix, suffix = blob_common_ends(a=a.sha256, b=b.sha256)
        assert x[:prefix] == y[:prefix]
        assert prefix + suffix <= min(len(x), len(y))
        assert suffix == 0 or x[-suffix:] == y[-suffix:]
        if second.kind == "full":  # compared by ranges: the ends are the longest ones
            assert prefix == len(os.path.commonprefix([x, y]))
            assert (
                prefix + suffix == min(len(x), len(y))
                or x[len(x) - suffix - 1] != y[len(y) - suffix - 1]
            )
        else:  # read off the delta: a one-place edit leaves at most its own span between
            assert prefix + suffix >= min(len(x), len(y)) - 80


def test_equal_texts_and_counting(store):
    text = "line\n" * 3_000
    blob = blob_put(text=text)
    assert blob_common_ends(a=blob.sha256, b=blob.sha256) == (len(text), 0)
    assert blob_count(sha=blob.sha256, needle="\n", end=5 * 1_234) == 1_234
    assert blob_count(sha=blob.sha256, needle="\n", end=10**9) == 3_000
