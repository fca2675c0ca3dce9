"""Locating a selector in a new revision: mapped span, exact search, guarded fuzzy search."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import cached_property

from common.textdiff import common_prefix, common_suffix

from .base import (
    ATX_HEADING,
    BOUNDARY_SLACK,
    COMMON_SEEDS_MAX,
    CONTEXT_MIN,
    DIFF_EQUAL,
    DIFF_INSERT,
    DISTINCTIVE_CHARS,
    FAR_CONTEXT_MIN,
    FAR_QUOTE_MIN,
    FOREIGN_MAX,
    FUZZY_MIN_CHARS,
    FUZZY_MIN_LENGTH_SHARE,
    FUZZY_QUOTE_MIN,
    LONE_QUOTE_MIN,
    MATCHER,
    MAX_BOUNDARY_CANDIDATES,
    MAX_BOUNDARY_SCORES,
    MAX_OCCURRENCES,
    MAX_TWINS,
    MOVE_EVIDENCE_MIN,
    MOVE_WINDOW,
    NEAR_CHARS,
    ONE_SIDED_QUOTE_MIN,
    ONE_SIDED_RUN,
    ORPHANED,
    OUTSIDE_CONTEXT_MIN,
    PINNED_CONTEXT,
    PINNED_QUOTE_MIN,
    SEED_CHARS,
    SEED_MAX_HITS,
    SHORT_CONTEXT_MIN,
    SHORT_QUOTE_CHARS,
    SIDE_FLOOR,
    SIMILAR,
    TEMPLATE_SHARE,
    TWIN_MARGIN,
    TWIN_SIMILARITY_MARGIN,
    UNIQUE_LINE_CHARS,
    UNIT_RUN,
    WIDE_CONTEXT,
    Anchor,
    Selector,
    Status,
)
from .blocks import Bound, RevisionPair
from .text import (
    ContextSides,
    TokenBag,
    find_all,
    fold_text,
    text_similarity,
    token_similarity,
    unit_edge,
)

# The lowest quote similarity any fuzzy landing may have
QUOTE_MIN_ANY = min(PINNED_QUOTE_MIN, FUZZY_QUOTE_MIN, FAR_QUOTE_MIN, LONE_QUOTE_MIN)


def quote_find(
    *, text: str, exact: str, prefix: str = "", suffix: str = "", hint: int | None = None
) -> int | None:
    """Start offset of the verbatim occurrence of ``exact`` in ``text`` that best fits the
    prefix/suffix (then nearest to ``hint``), or None if ``exact`` does not occur."""
    if not exact:
        return None
    occurrences = find_all(text, exact)
    if not occurrences:
        return None
    if hint is not None:
        occurrences.sort(key=lambda pos: abs(pos - hint))
    occurrences = occurrences[:MAX_OCCURRENCES]
    if len(occurrences) == 1:
        return occurrences[0]
    context = ContextSides(prefix, suffix)
    span = len(exact)
    scored = [
        (context.score(text, pos, pos + span), -abs(pos - hint) if hint is not None else 0, -pos)
        for pos in occurrences
    ]
    best = max(range(len(occurrences)), key=lambda i: scored[i])
    return occurrences[best]


def selector_locate(selector: Selector, revision: RevisionPair) -> Anchor:
    return _Locator(selector, revision).locate()


@dataclass(frozen=True)
class _Candidate:
    start: int  # folded offsets into the new text
    end: int
    start_range: tuple[int, int] | None = None  # where a loose boundary may move
    end_range: tuple[int, int] | None = None


class _Locator:
    """Re-anchors one selector on one revision."""

    def __init__(self, selector: Selector, revision: RevisionPair) -> None:
        self.selector = selector
        self.revision = revision
        self.quote = fold_text(selector.exact)
        self.context = ContextSides(selector.prefix, selector.suffix)
        self.own = self._own_span()
        new_len = len(revision.new)
        self.bounds: tuple[Bound, Bound] | None = None
        if self.own is not None:
            first = revision.map_bound(self.own[0], side="start")
            last = revision.map_bound(self.own[1], side="end")
            self.bounds = (first, last)
            self.expected = first.pos
            self.region = (first.lo, max(last.hi, first.lo))  # where the diff put the passage
        else:
            self.expected = min(max(selector.start, 0), new_len)
            self.region = (self.expected, self.expected)

    @cached_property
    def _mapped(self) -> tuple[int, int]:
        """Where the revision diff puts the passage's two ends: a verbatim landing there is the
        passage the diff keeps (``exact``), however far text added or removed above shifted
        it. Without the passage in the old text, its stored offsets."""
        if self.bounds is None:
            return self.selector.start, self.selector.end
        return self.bounds[0].pos, self.bounds[1].pos

    @cached_property
    def wide_before(self) -> str:
        """Folded old text just before the passage (the stored prefix if it is not there)."""
        if self.own is None:
            return self.context.prefix
        folded = self.revision.folded_old
        lo = folded.at(self.own[0])
        return folded.text[max(0, lo - WIDE_CONTEXT) : lo]

    @cached_property
    def wide_after(self) -> str:
        if self.own is None:
            return self.context.suffix
        folded = self.revision.folded_old
        hi = folded.at(self.own[1])
        return folded.text[hi : hi + WIDE_CONTEXT]

    def _own_span(self) -> tuple[int, int] | None:
        """The passage's span in the old text: the stored one, or re-found from the quote."""
        sel, old = self.selector, self.revision.old
        if 0 <= sel.start < sel.end <= len(old) and old[sel.start : sel.end] == sel.exact:
            return sel.start, sel.end
        pos = quote_find(
            text=old, exact=sel.exact, prefix=sel.prefix, suffix=sel.suffix, hint=sel.start
        )
        return (pos, pos + len(sel.exact)) if pos is not None else None

    def locate(self) -> Anchor:
        if not self.quote.strip():
            return ORPHANED
        found = self._by_diff() or self._by_exact_search()
        if found is not None and self._twin_as_close(found):
            # the quote cannot tell its copies apart; its whole line still may
            return self._by_unique_line() or ORPHANED
        return (
            found
            or self._by_unique_line()
            or self._by_unique_move()
            or self._by_fuzzy_search()
            or ORPHANED
        )

    def _twin_as_close(self, anchor: Anchor) -> bool:
        """Whether another verbatim copy of the quote in the new text has old context around it
        nearly as long as the landing's (TWIN_MARGIN): boilerplate repeated section after
        section ("Drawbacks", the production-readiness answers, near-identical bullets) gives
        every copy the same context up to a name or a figure, and when the copy the diff chose
        is no better placed than its twins, which one it is cannot be told: orphaned. Except
        for a landing where the diff puts the passage, in the passage's section: there copies
        the diff keeps from other old passages (they are those passages) or that sit in other
        sections are no twins (issue #36: a bullet kept among twin bullets edited around it)."""
        if anchor.start is None or anchor.end is None or anchor.score < 1.0:
            return False
        folded = self.revision.folded_new
        hits = find_all(folded.text, self.quote, MAX_OCCURRENCES)
        if len(hits) < 2:
            return False
        start, end = folded.at(anchor.start), folded.at(anchor.end)
        ours = self._run_before(start) + self._run_after(end)
        if ours >= 2 * WIDE_CONTEXT:
            return False  # its whole neighbourhood came along: a copied block, the diff decides
        bar = ours - TWIN_MARGIN
        size = len(self.quote)
        raw_start, raw_end = folded.raw_span(start, end)
        kept_all = (
            self._distance(raw_start, raw_end) == 0
            and self.revision.headings_new.path_at(anchor.start) == self.selector.heading_path
        )
        for pos in hits:
            if pos == start:
                continue
            if kept_all:
                raw_start, raw_end = folded.raw_span(pos, pos + size)
                if self._is_foreign(raw_start, raw_end) or (
                    self.revision.headings_new.path_at(raw_start) != self.selector.heading_path
                ):
                    continue
            if self._run_before(pos) + self._run_after(pos + size) >= bar:
                return True
        return False

    # ---- evidence about a candidate

    def _verbatim(self, start: int, end: int) -> Anchor:
        """The anchor for a raw span: exact/moved if its text is the quote, else fuzzy."""
        start, end = self._snap(start, end)
        sel, text = self.selector, self.revision.new[start:end]
        if text == sel.exact:
            status: Status = "exact" if (start, end) == self._mapped else "moved"
            return Anchor(status=status, start=start, end=end, score=1.0)
        score = round(min(text_similarity(sel.exact, text), 0.9999), 4)
        return Anchor(status="fuzzy", start=start, end=end, score=score)

    def _sides(self, start: int, end: int) -> list[float]:
        """Prefix and suffix similarity around a folded span (sides without evidence left out)."""
        text = self.revision.folded_new.text
        sides = (self.context.before(text, start), self.context.after(text, end))
        return [side for side in sides if side is not None]

    def _run_before(self, start: int) -> int:
        """Characters of the old text before the passage found verbatim before ``start``;
        WIDE_CONTEXT if they include the start of its paragraph or list item (in both texts)."""
        text, wide = self.revision.folded_new.text, self.wide_before
        run = common_suffix(wide, text[max(0, start - len(wide)) : start])
        if run == len(wide) == start:  # both at the start of the document
            return WIDE_CONTEXT
        if run >= UNIT_RUN and self.own is not None:
            old, new = self.revision.folded_old, self.revision.folded_new
            old_lo = old.start_of(old.at(self.own[0]) - run)
            new_lo, new_hi = new.start_of(start - run), new.raw_span(start, start)[0]
            if unit_edge(self.revision.old, old_lo, self.own[0], before=True) and unit_edge(
                self.revision.new, new_lo, new_hi, before=True
            ):
                return WIDE_CONTEXT
        return min(run, WIDE_CONTEXT)

    def _run_after(self, end: int) -> int:
        """Like ``_run_before``, after the passage."""
        text, wide = self.revision.folded_new.text, self.wide_after
        run = common_prefix(wide, text[end : end + len(wide)])
        if run == len(wide) and end + run == len(text):
            return WIDE_CONTEXT
        if run >= UNIT_RUN and self.own is not None:
            old, new = self.revision.folded_old, self.revision.folded_new
            old_hi = old.end_of(old.at(self.own[1]) + run - 1)
            new_lo, new_hi = new.raw_span(end, end)[0], new.end_of(end + run - 1)
            if unit_edge(self.revision.old, self.own[1], old_hi, before=False) and unit_edge(
                self.revision.new, new_lo, new_hi, before=False
            ):
                return WIDE_CONTEXT
        return min(run, WIDE_CONTEXT)

    def _context_ok(self, start: int, end: int, minimum: float) -> bool:
        """Both sides of the context recognisable, or one side unchanged over a long run.

        Outside the span the diff maps the passage to, recognisable is not enough: templated
        prose ("... under 87% so that a burst ...") repeats whole phrases with one number
        changed, so both sides must be near-verbatim there.
        """
        sides = self._sides(start, end)
        if len(sides) == 2:
            raw_start, raw_end = self.revision.folded_new.raw_span(start, end)
            if self._distance(raw_start, raw_end) > 0:
                floor = mean = OUTSIDE_CONTEXT_MIN
            elif len(self.quote) < SHORT_QUOTE_CHARS:
                floor = mean = SHORT_CONTEXT_MIN
            else:
                floor, mean = SIDE_FLOOR, minimum
            if min(sides) >= floor and sum(sides) / 2 >= mean:
                return True
        return max(self._run_before(start), self._run_after(end)) >= ONE_SIDED_RUN

    def _context_rank(self, start: int, end: int) -> float:
        sides = self._sides(start, end)
        runs = self._run_before(start) + self._run_after(end)
        return (sum(sides) / len(sides) if sides else 0.0) + runs / WIDE_CONTEXT

    def _unique(self) -> bool:
        """Whether the quote is long and occurs once in each text (whitespace folded)."""
        return (
            len(self.quote) >= DISTINCTIVE_CHARS
            and len(find_all(self.revision.folded_new.text, self.quote, 2)) == 1
            and len(find_all(self.revision.folded_old.text, self.quote, 2)) == 1
        )

    def _is_foreign(self, start: int, end: int) -> bool:
        if self.own is None:
            return False
        return self.revision.foreign_share(start, end, *self.own) > FOREIGN_MAX

    def _distance(self, raw_start: int, raw_end: int) -> int:
        lo, hi = self.region
        if raw_start < hi and lo < raw_end:
            return 0
        return max(lo - raw_end, raw_start - hi, 0)

    def _near(self, raw_start: int, raw_end: int) -> bool:
        return self._distance(raw_start, raw_end) <= max(NEAR_CHARS, 2 * len(self.quote))

    def _proximity(self, raw_start: int, raw_end: int) -> float:
        return 1.0 / (1.0 + self._distance(raw_start, raw_end) / NEAR_CHARS)

    def _heading_bonus(self, raw_start: int) -> float:
        wanted = self.selector.heading_path
        if not wanted:
            return 0.0
        path = self.revision.headings_new.path_at(raw_start)
        if path == wanted:
            return 0.1
        return 0.05 if path and path[-1] == wanted[-1] else 0.0

    def _moved_here(self, start: int, end: int, *, distinctive: bool = False) -> bool:
        """For a folded span away from where the diff put the passage: did the passage move
        there? Yes if its context came along verbatim on both sides over long runs. Otherwise
        its context must have come along on one side (a long verbatim run, or both sides
        near-verbatim for a short quote) unless the quote is distinctive on its own, and the
        diff must show text deleted around its old place that is nearly the text inserted
        around the candidate."""
        if self.own is None:
            return False
        if min(self._run_before(start), self._run_after(end)) >= ONE_SIDED_RUN:
            return True  # its whole neighbourhood came along verbatim
        if not distinctive:
            if len(self.quote) < SHORT_QUOTE_CHARS:
                sides = self._sides(start, end)
                if len(sides) < 2 or min(sides) < OUTSIDE_CONTEXT_MIN:
                    return False
            elif max(self._run_before(start), self._run_after(end)) < ONE_SIDED_RUN:
                return False
        raw_start, raw_end = self.revision.folded_new.raw_span(start, end)
        rev = self.revision
        gone = rev.changed_text(self.own[0] - MOVE_WINDOW, self.own[1] + MOVE_WINDOW, side="old")
        came = rev.changed_text(raw_start - MOVE_WINDOW, raw_end + MOVE_WINDOW, side="new")
        return text_similarity(fold_text(gone), fold_text(came)) >= MOVE_EVIDENCE_MIN

    # ---- step 1: map through the diff

    def _by_diff(self) -> Anchor | None:
        if self.own is None:
            return None
        hit = self.revision.untouched(*self.own)
        if hit is None:
            return None
        start, end = hit
        at = self.revision.folded_new.at
        # Even an optimal diff may align the quote with a look-alike in rewritten prose; only
        # a quote that occurs once in each text (however short: "Abstract" under a PEP header
        # the revision rewrote), or whose other copies the diff explains, is taken on the
        # diff's word alone.
        if not (
            self._context_ok(at(start), at(end), CONTEXT_MIN)
            or self._once_each()
            or self._others_kept_elsewhere(start, end)
        ):
            return None
        return self._verbatim(start, end)

    def _once_each(self) -> bool:
        """Whether the quote occurs exactly once in each text (whitespace folded)."""
        return (
            len(find_all(self.revision.folded_new.text, self.quote, 2)) == 1
            and len(find_all(self.revision.folded_old.text, self.quote, 2)) == 1
        )

    def _others_kept_elsewhere(self, start: int, end: int) -> bool:
        """For the copy the diff keeps in place (raw span): whether it sits in the passage's
        section (same heading path) and every other copy of the quote in the new text is
        one the diff keeps from another old passage. Each of those is that passage, so the
        one left is this one, whatever was rewritten around it (issue #36: a repeated
        phrase whose sentence was reworded on both sides). A copy in another section is no
        help: a deleted section's boilerplate is aligned with the new section's in its place."""
        if self.revision.headings_new.path_at(start) != self.selector.heading_path:
            return False
        folded = self.revision.folded_new
        own = folded.at(start)
        for pos in find_all(folded.text, self.quote, MAX_OCCURRENCES):
            if pos != own and not self._is_foreign(*folded.raw_span(pos, pos + len(self.quote))):
                return False
        return True

    def _snap(self, start: int, end: int) -> tuple[int, int]:
        """Undo an edge shift from whitespace folding: a quote that starts or ends inside a
        whitespace run maps back to that run's other end. Snap to the one verbatim copy of the
        quote within the run's reach, if there is exactly one."""
        exact, new = self.selector.exact, self.revision.new
        if new[start:end] == exact:
            return start, end
        slack = 2 + len(exact) - len(exact.strip())
        lo, hi = max(0, start - slack), min(len(new), end + slack)
        pos = new.find(exact, lo, hi)
        if pos != -1 and new.find(exact, pos + 1, hi) == -1:
            return pos, pos + len(exact)
        return start, end

    # ---- step 2: exact quote search

    def _by_exact_search(self) -> Anchor | None:
        folded, quote = self.revision.folded_new, self.quote
        hits = find_all(folded.text, quote)
        if not hits:
            return None
        hits.sort(key=lambda pos: abs(folded.start_of(pos) - self.expected))
        distinctive = self._unique()
        best: tuple[bool, float, int, int] | None = None
        for pos in hits[:MAX_OCCURRENCES]:
            end = pos + len(quote)
            raw_start, raw_end = folded.raw_span(pos, end)
            if self._is_foreign(raw_start, raw_end):
                continue
            if not (
                distinctive
                or self._context_ok(pos, end, CONTEXT_MIN)
                or (self._distance(raw_start, raw_end) == 0 and self._once_each())
            ):
                continue
            if not self._near(raw_start, raw_end) and not self._moved_here(
                pos, end, distinctive=distinctive
            ):
                continue
            rank = (
                self._context_rank(pos, end)
                + 0.25 * self._proximity(raw_start, raw_end)
                + self._heading_bonus(raw_start)
            )
            # where the diff put the passage first, as in step 3
            judged = (self._distance(raw_start, raw_end) == 0, rank, raw_start, raw_end)
            if best is None or judged > best:
                best = judged
        return self._verbatim(best[2], best[3]) if best else None

    # ---- step 2b: a unique passage that left its old place

    def _by_unique_move(self) -> Anchor | None:
        """The passage occurs verbatim (whitespace folded) exactly once in the new text, its
        old occurrence was the only one, and the diff does not keep it at its old place: it
        moved, whatever happened around it (a section moved while other paragraphs were
        rewritten leaves no context or move evidence for step 2 to use). Only a verbatim copy
        qualifies, so a look-alike never captures the annotation this way; and only a passage
        long enough to be evidence on its own (DISTINCTIVE_CHARS), since a short phrase of
        templated prose recurs in new sentences that are not the old one."""
        if len(self.quote) < DISTINCTIVE_CHARS:
            return None
        if self.own is None or self.revision.untouched(*self.own) is not None:
            return None
        old, new = self.revision.folded_old, self.revision.folded_new
        if len(find_all(old.text, self.quote, 2)) != 1:
            return None
        hits = find_all(new.text, self.quote, 2)
        if len(hits) != 1:
            return None
        start, end = new.raw_span(hits[0], hits[0] + len(self.quote))
        if self._is_foreign(start, end):
            # mostly text the diff keeps from another old passage, edited into the quote's
            # words (issue #36: a twin section's "Drawbacks" rewritten with the deleted
            # section's component name): that passage, not this one moved
            return None
        return self._verbatim(start, end)

    def _by_unique_line(self) -> Anchor | None:
        """The lines holding the passage, whole and verbatim (indentation aside), occur as
        whole lines exactly once in each text: the passage is on them, at the same place in
        the line, wherever they went (issue #36: a section moved below another, its bullets
        intact, while the diff paired pieces of them with the twin bullets of other
        sections). Only lines long enough to be evidence on their own (UNIQUE_LINE_CHARS)
        count, since "No." or a table's header row recur in templated prose, or a section
        title in both texts (a Markdown ``#`` heading or a reStructuredText title over its
        underline), however short: "Futures" as a title once in each text is that title."""
        if self.own is None:
            return None
        old, new = self.revision.old, self.revision.new
        line_lo = old.rfind("\n", 0, self.own[0]) + 1
        line_hi = old.find("\n", self.own[1])
        block = old[line_lo : len(old) if line_hi == -1 else line_hi]
        lines = block.strip()
        title = _is_title(old, line_lo + block.index(lines), lines)
        if len(lines) < UNIQUE_LINE_CHARS and not title:
            return None
        offset = self.own[0] - (line_lo + block.index(lines))
        if len(_whole_line_hits(old, lines)) != 1:
            return None
        hits = _whole_line_hits(new, lines)
        if len(hits) != 1 or (
            len(lines) < UNIQUE_LINE_CHARS and not _is_title(new, hits[0], lines)
        ):
            return None
        start = hits[0] + offset
        if new[start : start + len(self.selector.exact)] != self.selector.exact:
            return None
        return self._verbatim(start, start + len(self.selector.exact))

    # ---- step 3: fuzzy search

    def _by_fuzzy_search(self) -> Anchor | None:
        """Best candidate that passes the minimum scores, preferring those where the diff put
        the passage: the diff is the strongest evidence there is, so a candidate in place
        wins over any look-alike elsewhere, however similar."""
        if len(self.quote.strip()) < FUZZY_MIN_CHARS:
            return None
        folded = self.revision.folded_new
        region = (folded.at(self.region[0]), folded.at(self.region[1]))
        best: tuple[bool, float, int, int] | None = None
        seen: set[tuple[int, int]] = set()
        for candidate in self._fuzzy_candidates():
            refined = self._refine(candidate)
            if refined is None:
                continue
            start, end = refined
            if end <= start or (start, end) in seen:
                continue
            seen.add((start, end))
            rank = self._judge(start, end)
            if rank is None:
                continue
            judged = (start < region[1] and region[0] < end, rank, start, end)
            if best is None or judged > best:
                best = judged
        if best is None or self._twin_as_similar(best[2], best[3]):
            return None
        raw_start, raw_end = folded.raw_span(best[2], best[3])
        if self._section_replaced(raw_start):
            return None
        return self._verbatim(raw_start, raw_end)

    def _section_replaced(self, raw_start: int) -> bool:
        """Whether a fuzzy landing sits in a section that replaced the passage's: its heading
        path is not the passage's, the passage's section is gone from the new text and the
        landing's is new in it. A section deleted and another built from the same template put
        in its place (issue #36: "Disabling the gate makes the apiserver ignore the field" for
        the deleted "... the metrics server ...") differs from the passage in a name only,
        which is all a reworded sentence differs in: orphaned, as a rewrite would be. Paths
        under different document titles are not compared: a renamed title changes them all."""
        wanted = self.selector.heading_path
        path = self.revision.headings_new.path_at(raw_start)
        if not wanted or not path or path[0] != wanted[0] or path == wanted:
            return False  # under another document title: the title was renamed, not a section
        return wanted not in self.revision.headings_new.paths and (
            path not in self.revision.headings_old.paths
        )

    def _twin_as_similar(self, start: int, end: int) -> bool:
        """Whether a fuzzy landing (folded span) has a twin as similar to the quote: where the
        longest run the landing shares with the quote is most of the quote (TEMPLATE_SHARE) and
        recurs in the new text, the span around another copy that a diff aligns with the quote,
        if the revision diff keeps it from another old passage, scores within
        TWIN_SIMILARITY_MARGIN of the landing (or better). Templated sections differ from each other
        in a name or a figure, which is all a reworded passage differs in too: when a twin is
        as close, which one the passage became cannot be told, so it is orphaned (issue #36)."""
        quote, text = self.quote, self.revision.folded_new.text
        landed = text[start:end]
        if landed == quote:  # the passage re-wrapped: whitespace aside, it is verbatim
            return False
        match = SequenceMatcher(None, quote, landed, autojunk=False).find_longest_match(
            0, len(quote), 0, len(landed)
        )
        if match.size < FUZZY_MIN_CHARS or match.size < TEMPLATE_SHARE * len(quote.strip()):
            return False
        run = landed[match.b : match.b + match.size]
        hits = find_all(text, run, MAX_TWINS + 1)
        if len(hits) < 2:
            return False
        bar = text_similarity(quote, landed) - TWIN_SIMILARITY_MARGIN
        pad = len(quote) // 2 + SEED_CHARS
        for hit in hits[:MAX_TWINS]:
            lo = hit - match.b
            if lo == start or (hit < end and start < hit + match.size):
                continue
            # the span placed like the landing, like the quote, or as a diff aligns it (a
            # semantic diff drops a short run between longer edits: then it aligns nothing)
            spans = [(lo, lo + len(landed)), (hit - match.a, hit - match.a + len(quote))]
            twin = _align(quote, text, max(0, lo - pad), min(len(text), lo + len(landed) + pad))
            if twin is not None:
                spans.append((twin.start, twin.end))
            for a, b in spans:
                a, b = max(0, a), min(len(text), b)
                if b <= a or (a < end and start < b):
                    continue
                # only another old passage, kept, is a twin: new text may resemble the quote
                if not self._is_foreign(*self.revision.folded_new.raw_span(a, b)):
                    continue
                if text_similarity(quote, text[a:b]) >= bar:
                    return True
        return False

    def _judge(self, start: int, end: int) -> float | None:
        """Rank of a folded candidate span, or None if it fails the minimum scores."""
        folded = self.revision.folded_new
        raw_start, raw_end = folded.raw_span(start, end)
        if self._is_foreign(raw_start, raw_end):
            return None
        if end - start < FUZZY_MIN_LENGTH_SHARE * len(self.quote):
            return None  # most of the passage went: what is left is not it (issue #36)
        if self._other_old_passage(start, end):
            return None
        similarity = text_similarity(self.quote, folded.text[start:end])
        if self._near(raw_start, raw_end):
            sides = self._sides(start, end)
            pinned = len(sides) == 2 and min(sides) >= PINNED_CONTEXT
            if similarity < (PINNED_QUOTE_MIN if pinned else FUZZY_QUOTE_MIN):
                return None
            # Context on one side only may just be the passage's old place: text inserted there
            # inherits it. Then the quote itself must be nearly there.
            if (len(sides) < 2 or min(sides) < SIDE_FLOOR) and similarity < ONE_SIDED_QUOTE_MIN:
                return None
            if not (self._context_ok(start, end, CONTEXT_MIN) or self._lone(similarity, start)):
                return None
        elif (
            similarity < FAR_QUOTE_MIN
            or not self._context_ok(start, end, FAR_CONTEXT_MIN)
            or not self._moved_here(start, end)
        ):
            return None
        return (
            similarity
            + self._context_rank(start, end)
            + 0.25 * self._proximity(raw_start, raw_end)
            + self._heading_bonus(raw_start)
        )

    def _other_old_passage(self, start: int, end: int) -> bool:
        """Whether a fuzzy candidate (folded span) is, word for word, text the old revision
        had elsewhere: then it is that passage, kept (the diff may still pair it with the quote
        when the quote's own line was rewritten next to it), not the quote reworded. Issue
        #36: "retries after 8 seconds" rewritten in place landed on the next bullet's
        "retries after 3 seconds", which the old revision already had."""
        if self.own is None:
            return False
        old = self.revision.folded_old
        candidate = self.revision.folded_new.text[start:end]
        own_start, own_end = old.at(self.own[0]), old.at(self.own[1])
        for pos in find_all(old.text, candidate, MAX_OCCURRENCES):
            if not (pos < own_end and own_start < pos + len(candidate)):
                return True
        return False

    def _lone(self, similarity: float, start: int) -> bool:
        """Context lost on both sides (a reordered list), yet nothing else resembles the
        quote: a distinctive, very similar passage in the same section is still it."""
        return (
            similarity >= LONE_QUOTE_MIN
            and len(self.quote) >= DISTINCTIVE_CHARS
            and (
                not self.selector.heading_path
                or self._heading_bonus(self.revision.folded_new.start_of(start)) >= 0.1
            )
            and self._alone_in_old()
        )

    def _alone_in_old(self) -> bool:
        """Whether no passage of the old text but the annotated one resembles the quote."""
        if self.own is None:
            return False
        folded, quote = self.revision.folded_old, self.quote
        own_start, own_end = folded.at(self.own[0]), folded.at(self.own[1])
        windows, common = _seeds(quote, folded.text)
        if common > COMMON_SEEDS_MAX:  # the document says this kind of thing often
            return False
        for lo, hi in windows:
            aligned = _align(quote, folded.text, max(0, lo), min(len(folded.text), hi))
            if aligned is None or (aligned.start < own_end and own_start < aligned.end):
                continue
            if text_similarity(quote, folded.text[aligned.start : aligned.end]) >= FUZZY_QUOTE_MIN:
                return False
        return True

    def _fuzzy_candidates(self) -> list[_Candidate]:
        """Candidate spans (folded): where the diff puts the passage, windows where pieces of
        the quote survive verbatim, and bitap's best match near there for short quotes."""
        folded, quote = self.revision.folded_new, self.quote
        candidates: list[_Candidate] = []
        if self.bounds is not None:
            first, last = self.bounds
            at = folded.at
            candidates.append(
                _Candidate(
                    start=at(first.pos),
                    end=at(max(last.pos, first.pos)),
                    start_range=(at(first.lo), at(first.hi)) if first.loose else None,
                    end_range=(at(last.lo), at(last.hi)) if last.loose else None,
                )
            )
        windows = _seed_windows(quote, folded.text)
        if len(quote) <= MATCHER.Match_MaxBits:
            loc = MATCHER.match_main(folded.text, quote, folded.at(self.expected))
            if loc != -1:
                windows.append((loc - SEED_CHARS, loc + len(quote) + SEED_CHARS))
        for lo, hi in windows:
            aligned = _align(quote, folded.text, max(0, lo), min(len(folded.text), hi))
            if aligned is not None:
                candidates.append(aligned)
        return candidates

    def _refine(self, candidate: _Candidate) -> tuple[int, int] | None:
        """Settle the boundaries: among the token boundaries whose span matches the quote
        (nearly) best, the one with the longest verbatim context next to it.

        A loose boundary may move over its whole range; any boundary may also move inwards,
        since the diff may put text inserted next to the passage inside the mapped span.
        None when every span the boundaries can make is too long for any quote minimum (Dice
        over characters is at most 2|q| / (|q| + |span|)): a loose bound of a large rewrite
        spans all of it, and scoring such spans would only cost time.
        """
        text, quote = self.revision.folded_new.text, self.quote
        start, end = candidate.start, candidate.end
        inwards = max(SEED_CHARS, len(quote))
        lo, hi = candidate.start_range or (start, start)
        guess_start = start
        starts = [p for p in _boundaries(text, lo, max(hi, start + inwards), start) if p < end]
        lo, hi = candidate.end_range or (end, end)
        guess_end = end
        ends = _boundaries(text, min(lo, end - inwards), hi, end)
        shortest = min([*ends, end]) - max([*starts, start])
        if shortest > len(quote) * (2 / QUOTE_MIN_ANY - 1):
            return None
        start = _settle(
            starts,
            lambda p: token_similarity(quote, text[p:end]),
            lambda p: self.quote_bag.bound(text[p:end]),
            lambda p: (self._run_before(p), -abs(p - guess_start)),
            start,
        )
        end = _settle(
            [p for p in ends if p > start],
            lambda p: token_similarity(quote, text[start:p]),
            lambda p: self.quote_bag.bound(text[start:p]),
            lambda p: (self._run_after(p), -abs(p - guess_end)),
            end,
        )
        return start, end

    @cached_property
    def quote_bag(self) -> TokenBag:
        return TokenBag(self.quote)


def _settle(
    positions: list[int],
    similarity: Callable[[int], float],
    bound: Callable[[int], float],
    context: Callable[[int], tuple[int, int]],
    default: int,
) -> int:
    """Among ``positions``, those whose similarity is within BOUNDARY_SLACK of the best, the
    one with the best context. Similarities are computed in decreasing order of their upper
    ``bound`` until no bound can reach that band (the same answer as scoring every position,
    for a fraction of the diffs) or MAX_BOUNDARY_SCORES were scored (issue #36: on long
    rewritten spans of reStructuredText and KEP tables each score is a diff of a long span, and
    the boundary of a fuzzy landing is not worth 200 ms)."""
    if not positions:
        return default
    bounds = {p: bound(p) for p in positions}
    scores: dict[int, float] = {}
    best = 0.0
    for p in sorted(positions, key=lambda p: -bounds[p]):
        if scores and (bounds[p] < best - BOUNDARY_SLACK or len(scores) >= MAX_BOUNDARY_SCORES):
            break
        scores[p] = similarity(p)
        best = max(best, scores[p])
    return max(
        (p for p in positions if p in scores and scores[p] >= best - BOUNDARY_SLACK), key=context
    )


def _whole_line_hits(text: str, lines: str) -> list[int]:
    """Where ``lines`` (stripped) occurs in ``text`` as whole lines, indentation aside (up to
    two hits: callers only ask whether there is exactly one)."""
    found: list[int] = []
    for pos in find_all(text, lines, MAX_OCCURRENCES):
        end = pos + len(lines)
        line_lo = text.rfind("\n", 0, pos) + 1
        if text[line_lo:pos].strip() or text[end : _line_end(text, end)].strip():
            continue
        found.append(pos)
        if len(found) == 2:
            break
    return found


def _is_title(text: str, pos: int, lines: str) -> bool:
    """Whether the line ``lines`` at ``pos`` is a section title: a Markdown ATX heading, or a
    reStructuredText title (the next line one punctuation character repeated at least as long
    as the title)."""
    if "\n" in lines:
        return False
    if lines.startswith("#") and ATX_HEADING.match(lines):
        return True
    end = _line_end(text, pos + len(lines))
    under = text[end + 1 : _line_end(text, end + 1)].strip()
    return (
        len(under) >= len(lines)
        and not under[0].isalnum()
        and not under[0].isspace()
        and under == under[0] * len(under)
    )


def _line_end(text: str, pos: int) -> int:
    end = text.find("\n", pos)
    return len(text) if end == -1 else end


def _char_class(ch: str) -> int:
    return 0 if ch.isspace() else 1 if ch.isalnum() else 2


def _boundaries(text: str, lo: int, hi: int, guess: int) -> list[int]:
    """Token boundaries in ``text[lo:hi]`` (plus the ends and ``guess``), nearest first."""
    found = {lo, hi, guess}
    for pos in range(max(lo, 1), min(hi, len(text))):
        if _char_class(text[pos - 1]) != _char_class(text[pos]):
            found.add(pos)
    ordered = sorted(found, key=lambda p: abs(p - guess))
    return ordered[:MAX_BOUNDARY_CANDIDATES]


def _align(quote: str, text: str, lo: int, hi: int) -> _Candidate | None:
    """The part of ``text[lo:hi]`` that a semantic diff aligns with ``quote``.

    Quote characters left unmatched before the first (after the last) common run make that
    boundary loose, to be settled by ``_Locator._refine``.
    """
    if hi - lo <= 0:
        return None
    diffs = SIMILAR.diff_main(quote, text[lo:hi], False)
    SIMILAR.diff_cleanupSemantic(diffs)
    window_pos = quote_pos = 0
    first = last = None
    head = tail_end = 0
    for op, data in diffs:
        if op == DIFF_EQUAL:
            if first is None:
                first, head = window_pos, quote_pos
            window_pos += len(data)
            quote_pos += len(data)
            last, tail_end = window_pos, quote_pos
        elif op == DIFF_INSERT:
            window_pos += len(data)
        else:
            quote_pos += len(data)
    if first is None or last is None:
        return None
    tail = len(quote) - tail_end
    slack = max(SEED_CHARS, len(quote) // 8)
    start, end = lo + first, lo + last
    return _Candidate(
        start=start,
        end=end,
        start_range=(max(lo, start - head - slack), start) if head else None,
        end_range=(end, min(hi, end + tail + slack)) if tail else None,
    )


def _seed_windows(quote: str, text: str) -> list[tuple[int, int]]:
    """Windows of ``text`` (folded) where several pieces of the quote occur verbatim."""
    return _seeds(quote, text)[0]


def _seeds(quote: str, text: str) -> tuple[list[tuple[int, int]], float]:
    """Seed windows, and the share of the quote's pieces too common to place."""
    size = min(SEED_CHARS, max(4, len(quote) // 2))
    step = max(1, size // 2)
    bucket = max(16, len(quote) // 4)
    votes: Counter[int] = Counter()
    grams = common = 0
    for offset in range(0, len(quote) - size + 1, step):
        grams += 1
        hits = find_all(text, quote[offset : offset + size], SEED_MAX_HITS + 1)
        if len(hits) > SEED_MAX_HITS:
            common += 1  # too common to place anything
            continue
        for bucket_id in {(hit - offset) // bucket for hit in hits}:
            votes[bucket_id] += 1
    needed = max(2, grams // 5)
    pad = len(quote) // 2 + SEED_CHARS
    windows = [
        (bucket_id * bucket - pad, bucket_id * bucket + bucket + len(quote) + pad)
        for bucket_id, count in votes.most_common(3)
        if count >= needed
    ]
    return windows, common / grams if grams else 0.0
