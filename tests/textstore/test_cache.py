"""The LRU of rebuilt texts is bounded in bytes."""

import sys

import pytest

from textstore.cache import TextCache
from textstore.selectors import blob_read
from textstore.services import blob_put


def test_least_recently_used_entries_are_evicted_within_the_byte_bound(settings):
    one = "x" * 1_000
    settings.TEXTSTORE_CACHE_BYTES = 3 * sys.getsizeof(one) + 10
    cache = TextCache()
    for key in "abc":
        cache.put(key, key * 1_000)
    assert cache.get("a") == "a" * 1_000  # a is now the most recently used
    cache.put("d", "d" * 1_000)
    assert "b" not in cache
    assert {"a", "c", "d"} <= {k for k in "abcd" if k in cache}
    assert cache.nbytes <= settings.TEXTSTORE_CACHE_BYTES


def test_an_oversized_text_is_not_cached(settings):
    settings.TEXTSTORE_CACHE_BYTES = 10_000
    cache = TextCache()
    cache.put("small", "s" * 100)
    cache.put("huge", "h" * 6_000)
    assert "huge" not in cache
    assert "small" in cache


def test_replacing_an_entry_keeps_the_byte_count_exact(settings):
    settings.TEXTSTORE_CACHE_BYTES = 1_000_000
    cache = TextCache()
    cache.put("k", "v" * 10)
    cache.put("k", "v" * 10)
    assert cache.nbytes == sys.getsizeof("v" * 10)
    cache.clear()
    assert cache.nbytes == 0
    assert len(cache) == 0


@pytest.mark.django_db
def test_repeated_reads_are_served_from_the_cache(django_assert_num_queries):
    blob = blob_put(text="cached text " * 50)
    blob_read(sha=blob.sha256)  # fills the cache (the write's on_commit did not run here)
    with django_assert_num_queries(0):
        assert blob_read(sha=blob.sha256) == "cached text " * 50
