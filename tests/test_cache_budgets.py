"""Every in-process cache is bounded in bytes (issue #21): the settings' shares of
PROCESS_CACHE_BYTES, and each cache's use stays under its bound whatever is put in it."""

import sys

from django.conf import settings

from reviews.anchoring import anchor_locate, selector_from_position
from reviews.anchoring.blocks import _alignment_cache
from reviews.anchoring.text import (
    _fold_cache,
    _headings_cache,
    anchor_caches_clear,
    headings_index,
    text_fold,
)
from textstore.cache import base_cache, delta_ops_cache, text_cache
from textstore.ranges import _Op


def test_the_default_shares_fit_the_process_budget():
    shares = (
        settings.TEXTSTORE_CACHE_BYTES,
        settings.TEXTSTORE_BASE_CACHE_BYTES,
        settings.TEXTSTORE_DELTA_OPS_CACHE_BYTES,
        settings.PLAYGROUND_DIFF_CACHE_BYTES,
        settings.REVIEWS_ANCHOR_CACHE_BYTES,
    )
    assert sum(shares) < settings.PROCESS_CACHE_BYTES


def test_parsed_deltas_are_bounded_in_bytes(settings):
    settings.TEXTSTORE_DELTA_OPS_CACHE_BYTES = 20_000
    delta_ops_cache.clear()
    for n in range(100):
        ops = [_Op(start=0, end=500, source=None, text="x" * 500), _Op(0, 9, 0, "")]
        delta_ops_cache.put(f"{n:064x}", ops)
    assert 0 < delta_ops_cache.used <= 20_000
    assert len(delta_ops_cache) < 100  # the oldest went
    # One entry's cost counts its texts: a huge insertion is not cached at all.
    delta_ops_cache.put("f" * 64, [_Op(start=0, end=1, source=None, text="y" * 50_000)])
    assert "f" * 64 not in delta_ops_cache
    delta_ops_cache.clear()


def test_rebuilt_texts_count_their_real_size(settings):
    settings.TEXTSTORE_CACHE_BYTES = 1_000_000
    text_cache.clear()
    emoji = "🙂" + "a" * 100_000  # one astral character: 4 bytes a character in a str
    text_cache.put("e" * 64, emoji)
    assert text_cache.used == sys.getsizeof(emoji) > 400_000
    text_cache.put("d" * 64, "b" * 300_000)
    text_cache.put("c" * 64, "🙂" + "c" * 100_000)
    assert text_cache.used <= 1_000_000
    assert "e" * 64 not in text_cache  # the least recently used went
    # Over half the bound: never cached (an 8 MiB text with an emoji is 32 MB as a str).
    text_cache.put("f" * 64, "🙂" + "f" * 200_000)
    assert "f" * 64 not in text_cache
    text_cache.clear()
    base_cache.clear()


def test_re_anchoring_folds_are_bounded_in_bytes(settings):
    settings.REVIEWS_ANCHOR_CACHE_BYTES = 2_000_000  # folds 3/8, headings 1/8, alignments 4/8
    anchor_caches_clear()
    for n in range(20):
        text = f"# Heading {n}\n" + "word  and   spaces\n" * 2000
        assert text_fold(text).text.startswith(f"# Heading {n}")
        assert headings_index(text).path_at(20) == (f"Heading {n}",)
    assert 0 < _fold_cache.used <= 750_000
    # Each fold of ~32,000 characters counts ~134 KB: its text and three 8-byte ints for each
    # of its 4,000 runs of two or more whitespace characters.
    assert 1 < len(_fold_cache) < 20
    assert 0 < _headings_cache.used <= 250_000
    # A document too large for the cache is folded all the same, just not kept.
    big = "x  y\n" * 100_000
    assert text_fold(big).text == "x y " * 100_000
    assert _fold_cache.used <= 750_000
    anchor_caches_clear()


def test_re_anchoring_alignments_are_bounded_in_bytes(settings):
    settings.REVIEWS_ANCHOR_CACHE_BYTES = 400_000  # 200 KB of block alignments
    anchor_caches_clear()
    kept = "Sentence {} stays where the first revision put it.\n"
    old = "".join(kept.format(k) for k in range(400))
    start = old.index(kept.format(1))
    selector = selector_from_position(text=old, start=start, end=start + len(kept) - 1)
    for n in range(20):
        # Every other sentence rewritten: 400 blocks, ~77 KB
        new = "".join(kept.format(k) if k % 2 else f"Line {k} moved {n}.\n" for k in range(400))
        assert anchor_locate(selector=selector, old_text=old, new_text=new).status == "exact"
        assert 0 < _alignment_cache.used <= 200_000
    assert 0 < len(_alignment_cache) < 20
    anchor_caches_clear()
    assert _alignment_cache.used == 0
