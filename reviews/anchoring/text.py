"""Text helpers: similarity, whitespace folding, headings, context."""

from __future__ import annotations

import bisect
import hashlib
import re
import sys
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from common.lru import LruCache

from .base import (
    ATX_HEADING,
    BLOCK_EDGE,
    CONTEXT_CHARS,
    DIFF_EQUAL,
    FENCE,
    SIMILAR,
    TOKEN_RE,
    UNIT_RUN,
    WHITESPACE_RE,
)

_LONG_WHITESPACE = re.compile(r"\s{2,}")


def find_all(text: str, needle: str, limit: int | None = None) -> list[int]:
    """All (overlapping) occurrences of ``needle``; stops after ``limit`` hits."""
    found: list[int] = []
    pos = text.find(needle)
    while pos != -1 and (limit is None or len(found) < limit):
        found.append(pos)
        pos = text.find(needle, pos + 1)
    return found


def text_similarity(a: str, b: str) -> float:
    """Share of characters the two strings keep in common after a semantic diff (Dice).

    Semantic cleanup drops coincidental one- or two-letter matches, so unrelated English text
    scores near 0 rather than the ~0.4 a raw edit distance gives it.
    """
    if a == b:
        return 1.0
    if not a or not b:
        return 0.0
    diffs = SIMILAR.diff_main(a, b, False)
    SIMILAR.diff_cleanupSemantic(diffs)
    same = sum(len(data) for op, data in diffs if op == DIFF_EQUAL)
    return 2.0 * same / (len(a) + len(b))


def token_similarity(a: str, b: str, *, number_weight: int = 1) -> float:
    """Like ``text_similarity`` but over words and punctuation (case-folded), weighted by length
    (tokens holding a digit ``number_weight`` times): steadier where one stray letter must not
    matter, and able to say that a changed figure changes a sentence more than a changed verb."""
    tokens_a, tokens_b = TOKEN_RE.findall(a.lower()), TOKEN_RE.findall(b.lower())
    if not tokens_a or not tokens_b:
        return 1.0 if tokens_a == tokens_b else 0.0
    codes: dict[str, str] = {}
    encoded_a = "".join(codes.setdefault(tok, chr(0x100 + len(codes))) for tok in tokens_a)
    encoded_b = "".join(codes.setdefault(tok, chr(0x100 + len(codes))) for tok in tokens_b)
    weights = {
        code: len(tok) * (number_weight if any(ch.isdigit() for ch in tok) else 1)
        for tok, code in codes.items()
    }
    diffs = SIMILAR.diff_main(encoded_a, encoded_b, False)
    same = sum(sum(weights[c] for c in data) for op, data in diffs if op == DIFF_EQUAL)
    total = sum(weights[c] for c in encoded_a) + sum(weights[c] for c in encoded_b)
    return 2.0 * same / total


class TokenBag:
    """An upper bound of ``token_similarity(quote, other)`` (number weight 1) for one quote
    and many others: the same Dice over the tokens the two share as multisets, ignoring order.
    A diff's equal tokens are common to both, so the bound is never below the similarity; it
    costs a tokenisation where the similarity costs a diff."""

    def __init__(self, quote: str) -> None:
        tokens = TOKEN_RE.findall(quote.lower())
        self.counts: dict[str, int] = {}
        for tok in tokens:
            self.counts[tok] = self.counts.get(tok, 0) + 1
        self.weight = sum(len(tok) for tok in tokens)

    def bound(self, other: str) -> float:
        tokens = TOKEN_RE.findall(other.lower())
        if not tokens or not self.counts:
            return 1.0 if not tokens and not self.counts else 0.0
        left = dict(self.counts)
        shared = total = 0
        for tok in tokens:
            total += len(tok)
            if left.get(tok, 0) > 0:
                left[tok] -= 1
                shared += len(tok)
        return 2.0 * shared / (self.weight + total)


@dataclass(frozen=True)
class Folded:
    """A text with each whitespace run folded to one space, with maps to and from the raw text.

    Only runs of two or more whitespace characters shift offsets (a lone newline or tab just
    becomes a space), so the maps keep those runs alone: their raw bounds and folded offset,
    searched by bisection. A 60 KB design document has ~200 of them against ~10,000 whitespace
    runs, so a fold costs a few KB beside its text instead of three ints a character, and fits
    the byte-bounded cache (the revision is then folded once per process, not once per call).
    """

    text: str
    raw_len: int
    run_lo: array[int]  # raw start of each run of 2+ whitespace characters...
    run_hi: array[int]  # ...its raw end...
    run_at: array[int]  # ...and the folded offset of the one space it became

    def start_of(self, pos: int) -> int:
        """The first raw index that folded index ``pos`` stands for (``raw_len`` at the end)."""
        if pos >= len(self.text):
            return self.raw_len
        i = bisect.bisect_right(self.run_at, pos) - 1
        if i < 0:
            return pos
        if self.run_at[i] == pos:
            return self.run_lo[i]
        return self.run_hi[i] + pos - self.run_at[i] - 1

    def end_of(self, pos: int) -> int:
        """The raw index just after what folded index ``pos`` stands for."""
        i = bisect.bisect_right(self.run_at, pos) - 1
        if i >= 0 and self.run_at[i] == pos:
            return self.run_hi[i]
        return self.start_of(pos) + 1

    def at(self, raw: int) -> int:
        """The folded offset of raw offset ``raw`` (0..raw_len); inside a run, the run's space."""
        i = bisect.bisect_right(self.run_lo, raw) - 1
        if i < 0:
            return raw
        if raw < self.run_hi[i]:
            return self.run_at[i]
        return self.run_at[i] + 1 + raw - self.run_hi[i]

    def raw_span(self, start: int, end: int) -> tuple[int, int]:
        raw_start = self.start_of(start)
        raw_end = self.end_of(end - 1) if end > start else raw_start
        return raw_start, raw_end


def text_key(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _ints_bytes(values: list[int]) -> int:
    """A list of ints in memory: the list and an int object (28 bytes) per item (small ints are
    shared, so this is an upper bound)."""
    return sys.getsizeof(values) + 28 * len(values)


def _folded_bytes(folded: Folded) -> int:
    return sys.getsizeof(folded.text) + sum(
        sys.getsizeof(values) for values in (folded.run_lo, folded.run_hi, folded.run_at)
    )


def _headings_bytes(headings: Headings) -> int:
    # A path is a tuple of heading strings shared between lines: count the tuple only.
    return _ints_bytes(headings.line_ends) + sum(sys.getsizeof(p) for p in headings.paths)


# The bytes the re-anchoring caches may hold together, read at each insert. This package has no
# Django: the reviews app installs a reader of REVIEWS_ANCHOR_CACHE_BYTES (reviews.apps).
_anchor_cache_bytes: Callable[[], int] = lambda: 4 * 1024 * 1024  # noqa: E731


def anchor_cache_bound_set(bound: Callable[[], int]) -> None:
    global _anchor_cache_bytes
    _anchor_cache_bytes = bound


def budget_share(eighths: int) -> Callable[[], int]:
    """A cache's share of the bound, in eighths (the shares below add up to eight)."""
    return lambda: _anchor_cache_bytes() * eighths // 8


# The shares: folded texts 3/8, heading indexes 1/8 (a few KB a document), block alignments
# 4/8 (blocks.py; a long-range revision of a 140 KB document has ~6,000 blocks, ~1 MB).
FOLD_SHARE, HEADINGS_SHARE, ALIGNMENT_SHARE = 3, 1, 4

# Folded texts and headings by text digest: anchor_locate calls sharing one revision pair fold it
# once. Bounded in bytes; a text too large for them is folded per call, and callers
# re-anchoring many annotations share one pair (anchors_locate).
_fold_cache: LruCache[Folded] = LruCache(bound=budget_share(FOLD_SHARE), cost=_folded_bytes)
_headings_cache: LruCache[Headings] = LruCache(
    bound=budget_share(HEADINGS_SHARE), cost=_headings_bytes
)
anchor_caches: list[LruCache[Any]] = [_fold_cache, _headings_cache]  # blocks.py adds its own


def anchor_caches_clear() -> None:
    for cache in anchor_caches:
        cache.clear()


def text_fold(raw: str, key: str | None = None) -> Folded:
    """The folded text, from the cache (``key``: the text's ``text_key``, if known)."""
    return _fold_cache.get_or_compute(key or text_key(raw), lambda: _fold_compute(raw))


def _fold_compute(raw: str) -> Folded:
    run_lo, run_hi, run_at = array("q"), array("q"), array("q")
    shift = 0  # characters folded away before the current run
    for match in _LONG_WHITESPACE.finditer(raw):
        lo, hi = match.span()
        run_lo.append(lo)
        run_hi.append(hi)
        run_at.append(lo - shift)
        shift += hi - lo - 1
    return Folded(
        text=WHITESPACE_RE.sub(" ", raw),
        raw_len=len(raw),
        run_lo=run_lo,
        run_hi=run_hi,
        run_at=run_at,
    )


def fold_text(raw: str) -> str:
    return WHITESPACE_RE.sub(" ", raw)


def headings_index(text: str, key: str | None = None) -> Headings:
    return _headings_cache.get_or_compute(key or text_key(text), lambda: Headings(text))


class Headings:
    """ATX headings of a Markdown text (fenced code skipped), to give any offset its path."""

    def __init__(self, text: str) -> None:
        self.line_ends: list[int] = []
        self.paths: list[tuple[str, ...]] = []
        stack: list[tuple[int, str]] = []
        fence: str | None = None
        pos = 0
        for line in text.splitlines(keepends=True):
            body = line.rstrip("\r\n")
            pos += len(line)
            fence_match = FENCE.match(body)
            if fence_match:
                marker = fence_match.group(1)
                if fence is None:
                    fence = marker[0] * 3
                elif marker.startswith(fence):
                    fence = None
                continue
            heading = None if fence else ATX_HEADING.match(body)
            if heading:
                level = len(heading.group(1))
                while stack and stack[-1][0] >= level:
                    stack.pop()
                stack.append((level, (heading.group(2) or "").strip()))
                self.line_ends.append(pos)
                self.paths.append(tuple(title for _, title in stack))

    def path_at(self, offset: int) -> tuple[str, ...]:
        i = bisect.bisect_right(self.line_ends, offset) - 1
        return self.paths[i] if i >= 0 else ()


class ContextSides:
    """Prefix/suffix of a selector, folded, compared with the text around a candidate."""

    def __init__(self, prefix: str, suffix: str) -> None:
        self.prefix = fold_text(prefix)[-CONTEXT_CHARS:]
        self.suffix = fold_text(suffix)[:CONTEXT_CHARS]

    def before(self, text: str, pos: int) -> float | None:
        if not self.prefix:  # the quote started the document: only the edge itself confirms it
            return 1.0 if pos == 0 else None
        return text_similarity(self.prefix, text[max(0, pos - len(self.prefix)) : pos])

    def after(self, text: str, pos: int) -> float | None:
        if not self.suffix:
            return 1.0 if pos == len(text) else None
        return text_similarity(self.suffix, text[pos : pos + len(self.suffix)])

    def score(self, text: str, start: int, end: int) -> float:
        sides = [v for v in (self.before(text, start), self.after(text, end)) if v is not None]
        return sum(sides) / len(sides) if sides else 0.0


def unit_edge(text: str, lo: int, hi: int, *, before: bool) -> bool:
    """Whether the context run ``text[lo:hi]`` next to a passage crosses the edge of the
    passage's Markdown block (a blank line, or a line opening a list item, quote, heading or
    table row) at least UNIT_RUN characters away from the passage."""
    if before and lo == 0 or not before and hi == len(text):
        return hi - lo >= UNIT_RUN
    edges = list(BLOCK_EDGE.finditer(text, lo, hi))
    if not edges:
        return False
    return hi - edges[-1].end() >= UNIT_RUN if before else edges[0].start() - lo >= UNIT_RUN
