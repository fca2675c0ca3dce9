"""A byte-bounded LRU of rebuilt texts, keyed by SHA-256.

Only texts whose hash was verified (or that were just written) go in, and a key is the hash of
its value, so an entry can never be stale. The bound is read from settings at each insert
(`TEXTSTORE_CACHE_BYTES`); one text may take at most half of it, so a single huge text cannot
flush everything else.
"""

import sys
import threading
from collections import OrderedDict
from typing import Any

from django.conf import settings


class TextCache:
    """Process-local, thread-safe LRU of str values bounded by their in-memory size.

    `setting` names the Django setting that holds the bound in bytes.
    """

    def __init__(self, setting: str = "TEXTSTORE_CACHE_BYTES") -> None:
        self._setting = setting
        self._items: OrderedDict[str, str] = OrderedDict()
        self._nbytes = 0
        self._lock = threading.Lock()

    @staticmethod
    def _cost(text: str) -> int:
        return sys.getsizeof(text)

    @property
    def nbytes(self) -> int:
        return self._nbytes

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, sha: object) -> bool:
        return sha in self._items

    def get(self, sha: str) -> str | None:
        with self._lock:
            text = self._items.get(sha)
            if text is not None:
                self._items.move_to_end(sha)
            return text

    def put(self, sha: str, text: str) -> None:
        limit = int(getattr(settings, self._setting))
        cost = self._cost(text)
        with self._lock:
            self._discard(sha)
            if cost > limit // 2:
                return
            self._items[sha] = text
            self._nbytes += cost
            while self._nbytes > limit:
                _, evicted = self._items.popitem(last=False)
                self._nbytes -= self._cost(evicted)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._nbytes = 0

    def _discard(self, sha: str) -> None:
        old = self._items.pop(sha, None)
        if old is not None:
            self._nbytes -= self._cost(old)


class EntryCache:
    """Process-local, thread-safe LRU bounded by its number of entries (small values)."""

    def __init__(self, entries: int) -> None:
        self._entries = entries
        self._items: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> Any:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: str, value: Any) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self._entries:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


# Texts that were read (the result of blob_read).
text_cache = TextCache()
# Texts that reads start from: decoded snapshots and every few plain deltas of a run, so a
# read applies a handful of deltas instead of decoding a snapshot (selectors.blob_read).
base_cache = TextCache("TEXTSTORE_BASE_CACHE_BYTES")
# Parsed deltas (their operations in code points) by blob, for range reads (selectors): a reader
# scrolling a long text asks for many ranges of it, and mapping a delta over a base with astral
# characters means scanning the base once.
delta_ops_cache = EntryCache(256)


def caches_clear() -> None:
    """Forget every cached text (both caches), so the next read goes to storage."""
    text_cache.clear()
    base_cache.clear()
    delta_ops_cache.clear()
