"""A byte-bounded LRU of rebuilt texts, keyed by SHA-256.

Only texts whose hash was verified (or that were just written) go in, and a key is the hash of
its value, so an entry can never be stale. The bound is read from settings at each insert
(`TEXTSTORE_CACHE_BYTES`); one text may take at most half of it, so a single huge text cannot
flush everything else.
"""

import sys
from typing import Any

from django.conf import settings

from common.lru import LruCache


class TextCache(LruCache[str]):
    """Process-local, thread-safe LRU of str values bounded by their in-memory size.

    `setting` names the Django setting that holds the bound in bytes.
    """

    def __init__(self, setting: str = "TEXTSTORE_CACHE_BYTES") -> None:
        super().__init__(bound=lambda: int(getattr(settings, setting)), cost=sys.getsizeof)

    @property
    def nbytes(self) -> int:
        return self.used


# Texts that were read (the result of blob_read).
text_cache = TextCache()
# Texts that reads start from: decoded snapshots and every few plain deltas of a run, so a
# read applies a handful of deltas instead of decoding a snapshot (selectors.blob_read).
base_cache = TextCache("TEXTSTORE_BASE_CACHE_BYTES")


def _ops_bytes(ops: list[Any]) -> int:
    """The in-memory size of a parsed delta: the list, each operation object with its
    attribute dict, and its inserted text."""
    return sys.getsizeof(ops) + sum(
        sys.getsizeof(op) + sys.getsizeof(vars(op)) + sys.getsizeof(op.text) for op in ops
    )


# Parsed deltas (their operations in code points) by blob, for range reads (selectors): a reader
# scrolling a long text asks for many ranges of it, and mapping a delta over a base with astral
# characters means scanning the base once. Bounded in bytes (TEXTSTORE_DELTA_OPS_CACHE_BYTES).
delta_ops_cache: LruCache[list[Any]] = LruCache(
    bound=lambda: int(settings.TEXTSTORE_DELTA_OPS_CACHE_BYTES), cost=_ops_bytes
)


def caches_clear() -> None:
    """Forget every cached text and parsed delta, so the next read goes to storage."""
    text_cache.clear()
    base_cache.clear()
    delta_ops_cache.clear()
