"""A revision diff seen as blocks: where each old span went in the new text."""

from __future__ import annotations

import bisect
import hashlib
import sys
from array import array
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

from common.lru import LruCache

from .base import DIFF_DELETE, DIFF_EQUAL, DIFF_INSERT, Diff
from .revdiff import anchor_diff_compute
from .text import (
    ALIGNMENT_SHARE,
    Folded,
    Headings,
    anchor_caches,
    budget_share,
    headings_index,
    text_fold,
    text_key,
)


@dataclass(frozen=True, slots=True)
class _Block:
    """A run of the diff: equal text, or one edit group (deletions and insertions together)."""

    equal: bool
    old_start: int
    old_end: int
    new_start: int
    new_end: int


@dataclass(frozen=True)
class Bound:
    """A span boundary mapped into the new text; ``lo..hi`` is the range it may really be in."""

    pos: int
    lo: int
    hi: int

    @property
    def loose(self) -> bool:
        return self.lo != self.hi


@dataclass(frozen=True)
class _Alignment:
    """A revision diff as blocks, with their starts on each side (for bisection)."""

    blocks: list[_Block]
    old_starts: list[int]
    new_starts: list[int]

    @classmethod
    def of(cls, diffs: Diff) -> _Alignment:
        blocks: list[_Block] = []
        old_pos = new_pos = 0
        for op, data in diffs:
            if not data:
                continue
            old_end = old_pos + (len(data) if op != DIFF_INSERT else 0)
            new_end = new_pos + (len(data) if op != DIFF_DELETE else 0)
            equal = op == DIFF_EQUAL
            if blocks and blocks[-1].equal == equal:
                merged = blocks.pop()
                blocks.append(_Block(equal, merged.old_start, old_end, merged.new_start, new_end))
            else:
                blocks.append(_Block(equal, old_pos, old_end, new_pos, new_end))
            old_pos, new_pos = old_end, new_end
        return cls(
            blocks=blocks,
            old_starts=[block.old_start for block in blocks],
            new_starts=[block.new_start for block in blocks],
        )


def _alignment_bytes(alignment: _Alignment) -> int:
    # A slotted block is 56 bytes plus its ints (28 bytes each beyond the small-int cache); the
    # two start lists hold the same int objects.
    count = len(alignment.blocks)
    return count * (56 + 4 * 28) + 3 * sys.getsizeof(alignment.blocks)


# Block alignments by (old text, new text, diff): anchor_locate calls sharing a revision pair
# (and its diff, or none) align it once, and without a diff also run anchor_diff_compute once.
# Bounded in bytes (ALIGNMENT_SHARE of the re-anchoring caches' bound).
_alignment_cache: LruCache[_Alignment] = LruCache(
    bound=budget_share(ALIGNMENT_SHARE), cost=_alignment_bytes
)
anchor_caches.append(_alignment_cache)


def _diff_signature(diffs: Diff) -> str:
    """A digest of the diff's operations and lengths: with both texts, that is the whole
    diff (the texts supply the characters once the diff is known to rebuild them)."""
    shape = array("q", [op * (len(data) + 1) for op, data in diffs])
    return hashlib.blake2b(shape.tobytes(), digest_size=16).hexdigest()


class RevisionPair:
    """One old→new revision pair: its diff as blocks, plus lazily folded texts and headings.

    The alignment, the folded texts and the heading index are cached per text (byte-bounded,
    see text.py), so re-anchoring annotations one call at a time indexes a revision once.
    """

    def __init__(self, old: str, new: str, diffs: Diff | None) -> None:
        self.old = old
        self.new = new
        self.old_key, self.new_key = text_key(old), text_key(new)
        if diffs is not None and (
            "".join(data for op, data in diffs if op != DIFF_INSERT) != old
            or "".join(data for op, data in diffs if op != DIFF_DELETE) != new
        ):
            raise ValueError("diffs do not transform old_text into new_text")
        shape = "own" if diffs is None else _diff_signature(diffs)
        key = f"{self.old_key}:{self.new_key}:{shape}"
        alignment = _alignment_cache.get(key)
        if alignment is None:
            if diffs is None:
                diffs = anchor_diff_compute(old_text=old, new_text=new)
            alignment = _Alignment.of(diffs)
            _alignment_cache.put(key, alignment)
        self.blocks = alignment.blocks
        self._old_starts = alignment.old_starts
        self._new_starts = alignment.new_starts

    @cached_property
    def folded_new(self) -> Folded:
        return text_fold(self.new, self.new_key)

    @cached_property
    def folded_old(self) -> Folded:
        return text_fold(self.old, self.old_key)

    @cached_property
    def headings_new(self) -> Headings:
        return headings_index(self.new, self.new_key)

    @cached_property
    def headings_old(self) -> Headings:
        return headings_index(self.old, self.old_key)

    def _edit_at(self, pos: int) -> _Block | None:
        """The edit group touching old offset ``pos``; None if ``pos`` is inside kept text."""
        i = bisect.bisect_right(self._old_starts, pos) - 1
        if i < 0:
            return None
        block = self.blocks[i]
        if not block.equal:
            return block if block.old_start <= pos <= block.old_end else None
        if pos == block.old_start and i > 0 and self.blocks[i - 1].old_end == pos:
            return self.blocks[i - 1]
        return None

    def _equal_at(self, pos: int) -> _Block | None:
        i = bisect.bisect_right(self._old_starts, pos) - 1
        return self.blocks[i] if i >= 0 and self.blocks[i].equal else None

    def map_point(self, pos: int) -> int:
        """Where old offset ``pos`` lands in the new text (start of an edit that replaced it)."""
        edit = self._edit_at(pos)
        if edit is not None:
            return edit.new_start
        block = self._equal_at(pos)
        return block.new_start + pos - block.old_start if block else 0

    def untouched(self, start: int, end: int) -> tuple[int, int] | None:
        """If ``old[start:end]`` lies in one kept run of the diff: its span in the new text."""
        block = self._equal_at(start)
        if block is None or end > block.old_end:
            return None
        new_start = block.new_start + start - block.old_start
        return new_start, new_start + end - start

    def map_bound(self, pos: int, *, side: Literal["start", "end"]) -> Bound:
        """Map a span boundary; an edit at the boundary leaves a range for refinement.

        Pure insertions at the boundary stay outside the span; a replacement that begins at the
        span's start (or ends at its end) belongs to the span; a replacement straddling the
        boundary is split proportionally.
        """
        edit = self._edit_at(pos)
        if edit is None:
            mapped = self.map_point(pos)
            return Bound(mapped, mapped, mapped)
        lo, hi = edit.new_start, edit.new_end
        if edit.old_start == edit.old_end:  # insertion only
            mapped = hi if side == "start" else lo
            return Bound(mapped, mapped, mapped)
        owned_side = edit.old_start if side == "start" else edit.old_end
        outside_side = edit.old_end if side == "start" else edit.old_start
        if pos == owned_side:
            mapped = lo if side == "start" else hi
        elif pos == outside_side:
            mapped = hi if side == "start" else lo
            return Bound(mapped, mapped, mapped)
        else:
            share = (pos - edit.old_start) / (edit.old_end - edit.old_start)
            mapped = lo + round(share * (hi - lo))
        return Bound(mapped, lo, hi)

    def changed_text(self, lo: int, hi: int, *, side: Literal["old", "new"]) -> str:
        """The deleted (old side) or inserted (new side) text within ``[lo, hi)`` of that side."""
        pieces: list[str] = []
        for block in self.blocks:
            if block.equal:
                continue
            start, end = (
                (block.old_start, block.old_end)
                if side == "old"
                else (block.new_start, block.new_end)
            )
            if end <= lo or start >= hi or end == start:
                continue
            text = self.old if side == "old" else self.new
            pieces.append(text[max(lo, start) : min(hi, end)])
        return " ".join(pieces)

    def foreign_share(self, start: int, end: int, own_start: int, own_end: int) -> float:
        """Share of ``new[start:end]`` that the diff keeps unchanged from old text outside
        ``old[own_start:own_end]``: text that is demonstrably some other passage."""
        if end <= start:
            return 0.0
        foreign = 0
        i = max(0, bisect.bisect_right(self._new_starts, start) - 1)
        while i < len(self.blocks) and self.blocks[i].new_start < end:
            block = self.blocks[i]
            i += 1
            if not block.equal:
                continue
            lo, hi = max(start, block.new_start), min(end, block.new_end)
            if hi <= lo:
                continue
            old_lo = block.old_start + lo - block.new_start
            old_hi = old_lo + hi - lo
            own = max(0, min(old_hi, own_end) - max(old_lo, own_start))
            foreign += hi - lo - own
        return foreign / (end - start)
