"""The shared LRU (common/lru.py): bounded by entry count or by cost, least recently used first."""

from common.lru import LruCache


def test_an_entry_count_bound_evicts_the_least_recently_used():
    cache: LruCache[dict] = LruCache(bound=lambda: 3)
    for key in "abc":
        cache.put(key, {"key": key})
    assert cache.get("a") == {"key": "a"}  # a is now the most recently used
    cache.put("d", {"key": "d"})
    assert "b" not in cache
    assert [key for key in "abcd" if key in cache] == ["a", "c", "d"]
    assert cache.used == 3


def test_the_bound_is_read_at_each_insert():
    bound = {"entries": 4}
    cache: LruCache[str] = LruCache(bound=lambda: bound["entries"])
    for key in "abcd":
        cache.put(key, key)
    bound["entries"] = 2
    cache.put("e", "e")
    assert [key for key in "abcde" if key in cache] == ["d", "e"]


def test_a_value_costing_more_than_half_the_bound_is_not_kept():
    cache: LruCache[str] = LruCache(bound=lambda: 10, cost=len)
    cache.put("small", "xx")
    cache.put("big", "x" * 6)
    assert "big" not in cache
    assert cache.get("small") == "xx"
    assert cache.used == 2


def test_get_or_compute_computes_a_missing_value_once():
    cache: LruCache[str] = LruCache(bound=lambda: 10, cost=len)
    calls = []

    def compute() -> str:
        calls.append(1)
        return "value"

    assert cache.get_or_compute("k", compute) == "value"
    assert cache.get_or_compute("k", compute) == "value"
    assert len(calls) == 1
    assert cache.get_or_compute("big", lambda: "x" * 6) == "x" * 6  # too big to keep...
    assert "big" not in cache  # ...but still answered
