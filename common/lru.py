"""A small process-local LRU for values that never go stale (keyed by a hash of the value).

Bounded by the total cost of its entries: `cost(value)` (1 per entry by default, so the bound is
an entry count) against `bound()`, read at each insert so a changed setting takes effect. One
entry may take at most half of the bound, so a single huge value cannot flush everything else.
Thread-safe: gthread workers share it.
"""

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

V = TypeVar("V")


def _one(_value: object) -> int:
    return 1


class LruCache(Generic[V]):
    def __init__(self, *, bound: Callable[[], int], cost: Callable[[V], int] = _one) -> None:
        self._bound = bound
        self._cost = cost
        self._items: OrderedDict[str, V] = OrderedDict()
        self._used = 0
        self._lock = threading.Lock()

    @property
    def used(self) -> int:
        """The total cost of the entries held."""
        return self._used

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def get(self, key: str) -> V | None:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: str, value: V) -> None:
        limit = self._bound()
        cost = self._cost(value)
        with self._lock:
            self._discard(key)
            if cost > limit // 2:
                return
            self._items[key] = value
            self._used += cost
            while self._used > limit:
                _, evicted = self._items.popitem(last=False)
                self._used -= self._cost(evicted)

    def get_or_compute(self, key: str, compute: Callable[[], V]) -> V:
        """The cached value, or `compute()` kept (if it fits) and returned. Two threads missing
        the same key at once both compute it; the values are equal, one is kept."""
        value = self.get(key)
        if value is None:
            value = compute()
            self.put(key, value)
        return value

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._used = 0

    def _discard(self, key: str) -> None:
        old = self._items.pop(key, None)
        if old is not None:
            self._used -= self._cost(old)
