"""Re-anchor review annotations on a new revision of a design document (DESIGN.md §6).

A passage is identified by a W3C TextQuoteSelector (exact, prefix, suffix) and a
TextPositionSelector (start/end: Python ``str`` offsets into the old Markdown source). For a new
revision we decide where it is now, in the order the design asks for:

1. map the old span through the revision diff: an untouched span whose context still checks
   out lands as ``exact`` (same offsets) or ``moved`` (shifted);
2. search the quote verbatim (whitespace-insensitive), preferring where the diff put the
   passage, then its prefix/suffix similarity and proximity;
3. search fuzzily where the diff put the passage, where pieces of the quote survive, and with
   diff-match-patch's bitap for short quotes, gated by minimum scores for BOTH the quote and
   its context.

What keeps a look-alike from capturing an annotation (a wrong anchor is worse than an orphan):

- the revision diff (``anchor_diff_compute``) aligns sentences and Markdown lines before
  characters, so unchanged sentences stay aligned with themselves;
- a candidate the diff shows to be another old passage, kept, is never taken;
- one-sided context counts only as a long verbatim run of the old text, since templated prose
  repeats whole phrases with one figure changed;
- away from where the diff put the passage a candidate needs near-verbatim context, and the
  diff must show the move (the deleted text is nearly the inserted text).

Pure Python, no Django: it runs in a web worker, a Celery task or ``bench/reanchor.py``.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Literal

from diff_match_patch import diff_match_patch

Status = Literal["exact", "moved", "fuzzy", "orphaned"]
Diff = list[tuple[int, str]]

DIFF_DELETE, DIFF_INSERT, DIFF_EQUAL = -1, 1, 0

# Context: the selector's prefix/suffix, compared by similarity...
CONTEXT_CHARS = 40  # prefix/suffix characters compared (the UI stores at least 32)
CONTEXT_MIN = 0.5  # mean prefix/suffix similarity for a candidate found by search...
SIDE_FLOOR = 0.3  # ...with neither side unrecognisable
SHORT_QUOTE_CHARS = 16  # quotes shorter than this carry little evidence on their own:
SHORT_CONTEXT_MIN = 0.65  # both sides must match this well
OUTSIDE_CONTEXT_MIN = 0.9  # both sides, for a candidate outside where the diff put the passage
# ...and the old text around the passage, compared verbatim (whitespace folded). Templated
# prose repeats phrases of 30-70 characters; a longer run of unchanged context is what tells a
# passage from its look-alikes when only one side of its context survived.
WIDE_CONTEXT = 96
ONE_SIDED_RUN = 64
UNIT_RUN = 16  # ...or at least this long and reaching the edge of its paragraph or list item
# A quote this long occurring once in each text needs no context
DISTINCTIVE_CHARS = 40
# Step 3
FUZZY_MIN_CHARS = 6  # below this a fuzzy match means nothing
FUZZY_QUOTE_MIN = 0.6
PINNED_CONTEXT = 0.9  # both sides this similar: the span between them is the passage...
PINNED_QUOTE_MIN = 0.5  # ...even if it was reworded this much
LONE_QUOTE_MIN = 0.85  # context lost (reordered list items): a near, same-section, distinctive
COMMON_SEEDS_MAX = 0.25  # quote may land if nothing else in the old text resembled it
# Distance: candidates away from where the diff maps the passage
NEAR_CHARS = 200
FAR_QUOTE_MIN = 0.75
FAR_CONTEXT_MIN = 0.6
MOVE_WINDOW = 200  # a far candidate must sit in inserted text resembling the deleted text...
MOVE_EVIDENCE_MIN = 0.9  # ...around the passage's old place: the diff must show the move
FOREIGN_MAX = 0.5  # max share of a candidate the diff keeps from other old text
# Revision diff: changed sentences are paired when this similar
PAIR_MIN = 0.7  # (a template sentence with three slots changed is about 0.6)
NUMBER_WEIGHT = 3  # ...weighing numbers more: "760 req/s" is not "1760 req/s"
MAX_PAIRING = 2500
# Search limits
MAX_OCCURRENCES = 200
SEED_CHARS = 8
SEED_MAX_HITS = 8
MAX_BOUNDARY_CANDIDATES = 64
BOUNDARY_SLACK = 0.05  # boundaries this close in quote similarity are settled by context

ORPHANED_SCORE = 0.0

_WHITESPACE = re.compile(r"\s+")
_TOKEN = re.compile(r"\w+|[^\w\s]")
_ATX_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_SENTENCE_BREAK = re.compile(r"[.!?][\"')\]*_]*\s+")
_SENTENCE_END = re.compile(r"[.!?:;][\"')\]]*\s+$")
_BLOCK_OPENER = re.compile(r"[ \t]*(?:(?:[-*+>]|\d+[.)]|#{1,6})[ \t]|\|)")
_BLOCK_EDGE = re.compile(r"\r?\n[ \t]*(?:\r?\n|(?:[-*+>]|\d+[.)]|#{1,6})[ \t]|\|)")

_DIFFER = diff_match_patch()  # revision diffs (1 s budget per changed run)
_SIMILAR = diff_match_patch()  # short strings: quotes and contexts
_SIMILAR.Diff_Timeout = 0.2
_MATCHER = diff_match_patch()  # bitap, only for quotes up to Match_MaxBits characters


# --------------------------------------------------------------------------- public API


@dataclass(frozen=True)
class Selector:
    """W3C TextQuoteSelector + TextPositionSelector (+ Markdown heading path) on one revision."""

    exact: str
    prefix: str
    suffix: str
    start: int
    end: int
    heading_path: tuple[str, ...] = ()


@dataclass(frozen=True)
class Anchor:
    """Where an annotation landed in a revision. Offsets are ``str`` indices; None if orphaned."""

    status: Status
    start: int | None
    end: int | None
    score: float


ORPHANED = Anchor(status="orphaned", start=None, end=None, score=ORPHANED_SCORE)


def selector_from_position(*, text: str, start: int, end: int, context: int = 32) -> Selector:
    """Build the selector for ``text[start:end]``.

    Prefix and suffix hold up to ``context`` characters (fewer only at the document's edges);
    the heading path lists the ATX headings whose lines lie above ``start`` (outermost first).
    Raises ValueError for an out-of-range or empty span.
    """
    if not 0 <= start < end <= len(text):
        raise ValueError(f"bad span {start}:{end} for a text of {len(text)} characters")
    return Selector(
        exact=text[start:end],
        prefix=text[max(0, start - context) : start],
        suffix=text[end : end + context],
        start=start,
        end=end,
        heading_path=_Headings(text).path_at(start),
    )


def anchor_locate(
    *, selector: Selector, old_text: str, new_text: str, diffs: Diff | None = None
) -> Anchor:
    """Re-anchor one annotation from ``old_text`` onto ``new_text``.

    Guarantees: ``exact``/``moved`` anchors satisfy ``new_text[start:end] == selector.exact``
    (score 1.0), ``exact`` also keeps the offsets; ``fuzzy`` anchors passed the minimum
    similarity for the quote and its context (score = quote similarity in (0, 1)); a passage
    kept unchanged elsewhere in the old text never captures the annotation. Anything else is
    ``orphaned``. ``diffs`` may be a shared ``anchor_diff_compute`` result for the same texts.
    """
    revision = _Revision(old_text, new_text, diffs)
    return _locate(selector, revision)


def anchors_locate(*, selectors: Sequence[Selector], old_text: str, new_text: str) -> list[Anchor]:
    """Re-anchor many annotations, computing the revision diff once; same guarantees as
    ``anchor_locate``, results in the order of ``selectors``."""
    revision = _Revision(old_text, new_text, None)
    return [_locate(selector, revision) for selector in selectors]


def quote_find(
    *, text: str, exact: str, prefix: str = "", suffix: str = "", hint: int | None = None
) -> int | None:
    """Start offset of the verbatim occurrence of ``exact`` in ``text`` that best fits the
    prefix/suffix (then nearest to ``hint``), or None if ``exact`` does not occur."""
    if not exact:
        return None
    occurrences = _find_all(text, exact)
    if not occurrences:
        return None
    if hint is not None:
        occurrences.sort(key=lambda pos: abs(pos - hint))
    occurrences = occurrences[:MAX_OCCURRENCES]
    if len(occurrences) == 1:
        return occurrences[0]
    context = _Context(prefix, suffix)
    span = len(exact)
    scored = [
        (context.score(text, pos, pos + span), -abs(pos - hint) if hint is not None else 0, -pos)
        for pos in occurrences
    ]
    best = max(range(len(occurrences)), key=lambda i: scored[i])
    return occurrences[best]


def anchor_diff_compute(*, old_text: str, new_text: str) -> Diff:
    """The old→new diff (diff-match-patch tuples) that ``anchor_locate(diffs=...)`` takes.

    Both texts are cut into sentences and Markdown lines (list items, headings, table rows,
    code lines), aligned first on units that occur once in each text (patience diff, as git's
    ``--patience``), then by longest common subsequence; diff-match-patch diffs each changed
    run by character. A character diff of the whole text happily aligns a sentence with a
    look-alike in rewritten or reflowed prose; aligning whole units first keeps unchanged
    sentences aligned with themselves and a moved paragraph a deletion plus an insertion.
    """
    old_units, new_units = _units(old_text), _units(new_text)
    old_keys = [_fold_text(unit).strip() for unit in old_units]
    new_keys = [_fold_text(unit).strip() for unit in new_units]
    diffs: Diff = []
    for equal, old_lo, old_hi, new_lo, new_hi in _align_units(old_keys, new_keys):
        if equal:  # the same units, but perhaps for whitespace (reflow, line endings)
            for old_unit, new_unit in zip(
                old_units[old_lo:old_hi], new_units[new_lo:new_hi], strict=True
            ):
                diffs.extend(_char_diff(old_unit, new_unit))
        else:
            diffs.extend(
                _replaced_diff(
                    old_units[old_lo:old_hi],
                    new_units[new_lo:new_hi],
                    old_keys[old_lo:old_hi],
                    new_keys[new_lo:new_hi],
                )
            )
    # Not diff_cleanupMerge: it would slide edits across unit boundaries to save an equality.
    return _slide_to_sentences(_merge_runs(diffs))


# --------------------------------------------------------------------------- the revision diff

_Run = tuple[bool, int, int, int, int]  # equal?, old_lo, old_hi, new_lo, new_hi (unit indices)


def _units(text: str) -> list[str]:
    """``text`` cut after sentence ends, blank lines, Markdown block lines and code lines."""
    cuts = {0, len(text)}
    lines = text.splitlines(keepends=True)
    fence: str | None = None
    pos = 0
    for i, line in enumerate(lines):
        start, pos = pos, pos + len(line)
        marker = _FENCE.match(line)
        if fence is not None:
            cuts.add(pos)  # every code line is a unit
            if marker and marker.group(1).startswith(fence):
                fence = None
            continue
        if marker:
            fence = marker.group(1)[0] * 3
            cuts.update((start, pos))
            continue
        following = lines[i + 1] if i + 1 < len(lines) else ""
        if (
            not line.strip()
            or _BLOCK_OPENER.match(line)
            or not following.strip()
            or _BLOCK_OPENER.match(following)
            or _FENCE.match(following)
        ):
            cuts.add(pos)
        for match in _SENTENCE_BREAK.finditer(line):
            cuts.add(start + match.end())
    ordered = sorted(cuts)
    return [text[a:b] for a, b in zip(ordered, ordered[1:], strict=False) if b > a]


def _align_units(old: list[str], new: list[str]) -> list[_Run]:
    """Align two unit lists: ``(equal, old_lo, old_hi, new_lo, new_hi)`` runs in order."""
    out: list[_Run] = []
    _patience(old, 0, len(old), new, 0, len(new), out, depth=0)
    merged: list[_Run] = []
    for run in out:
        if run[1] == run[2] and run[3] == run[4]:
            continue
        if merged and merged[-1][0] == run[0]:
            last = merged.pop()
            run = (run[0], last[1], run[2], last[3], run[4])
        merged.append(run)
    return merged


def _patience(
    old: list[str],
    old_lo: int,
    old_hi: int,
    new: list[str],
    new_lo: int,
    new_hi: int,
    out: list[_Run],
    depth: int,
) -> None:
    """Append to ``out`` the runs aligning ``old[old_lo:old_hi]`` with ``new[new_lo:new_hi]``:
    common ends, then recursively between units occurring once on each side (in order)."""
    head = 0  # common leading and trailing units
    while (
        old_lo + head < old_hi
        and new_lo + head < new_hi
        and (old[old_lo + head] == new[new_lo + head])
    ):
        head += 1
    out.append((True, old_lo, old_lo + head, new_lo, new_lo + head))
    old_lo, new_lo = old_lo + head, new_lo + head
    tail = 0
    while (
        old_lo < old_hi - tail
        and new_lo < new_hi - tail
        and (old[old_hi - tail - 1] == new[new_hi - tail - 1])
    ):
        tail += 1
    old_end, new_end = old_hi - tail, new_hi - tail
    anchors = _unique_anchors(old, old_lo, old_end, new, new_lo, new_end) if depth < 32 else []
    if anchors:
        for old_at, new_at in anchors:
            _patience(old, old_lo, old_at, new, new_lo, new_at, out, depth + 1)
            out.append((True, old_at, old_at + 1, new_at, new_at + 1))
            old_lo, new_lo = old_at + 1, new_at + 1
        _patience(old, old_lo, old_end, new, new_lo, new_end, out, depth + 1)
    else:
        out.extend(_common_runs(old, old_lo, old_end, new, new_lo, new_end))
    out.append((True, old_end, old_hi, new_end, new_hi))


def _unique_anchors(
    old: list[str], old_lo: int, old_hi: int, new: list[str], new_lo: int, new_hi: int
) -> list[tuple[int, int]]:
    """Longest increasing run of lines that occur exactly once in both ranges (non-blank)."""
    old_count = Counter(old[old_lo:old_hi])
    new_count = Counter(new[new_lo:new_hi])
    old_at = {old[i]: i for i in range(old_lo, old_hi) if old_count[old[i]] == 1}
    pairs = [
        (old_at[line], j)
        for j in range(new_lo, new_hi)
        if (line := new[j]).strip() and new_count[line] == 1 and line in old_at
    ]
    # Patience sorting: longest increasing subsequence of old positions, in new order.
    tops: list[int] = []  # old position ending the best run of each length
    tails: list[int] = []  # index into pairs of that run's last pair
    back: list[int] = []
    for k, (old_pos, _) in enumerate(pairs):
        length = bisect.bisect_left(tops, old_pos)
        back.append(tails[length - 1] if length else -1)
        if length == len(tops):
            tops.append(old_pos)
            tails.append(k)
        else:
            tops[length] = old_pos
            tails[length] = k
    chain: list[tuple[int, int]] = []
    k = tails[-1] if tails else -1
    while k != -1:
        chain.append(pairs[k])
        k = back[k]
    return chain[::-1]


def _common_runs(
    old: list[str], old_lo: int, old_hi: int, new: list[str], new_lo: int, new_hi: int
) -> list[_Run]:
    """Longest-common-subsequence runs of units with no unique anchor (repeated units)."""
    if old_lo == old_hi or new_lo == new_hi:
        return [(False, old_lo, old_hi, new_lo, new_hi)]
    codes: dict[str, str] = {}
    old_code = "".join(codes.setdefault(u, chr(0x100 + len(codes))) for u in old[old_lo:old_hi])
    new_code = "".join(codes.setdefault(u, chr(0x100 + len(codes))) for u in new[new_lo:new_hi])
    runs: list[_Run] = []
    i, j = old_lo, new_lo
    for op, data in _DIFFER.diff_main(old_code, new_code, False):
        di = len(data) if op != DIFF_INSERT else 0
        dj = len(data) if op != DIFF_DELETE else 0
        runs.append((op == DIFF_EQUAL, i, i + di, j, j + dj))
        i, j = i + di, j + dj
    return runs


def _replaced_diff(
    old_units: list[str], new_units: list[str], old_keys: list[str], new_keys: list[str]
) -> Diff:
    """Diff of a run of changed units: each old unit is paired with the most similar new unit
    (in order) and diffed with it by character; unpaired units are deleted or inserted whole,
    so a rewritten sentence is never aligned letter by letter with an unrelated one."""
    pairs = _pair_units(old_keys, new_keys)
    if pairs is None:  # a rewrite too large to pair: replaced wholesale
        pairs = []
    diffs: Diff = []
    i = j = 0
    for old_at, new_at in [*pairs, (len(old_units), len(new_units))]:
        if old_at > i:
            diffs.append((DIFF_DELETE, "".join(old_units[i:old_at])))
        if new_at > j:
            diffs.append((DIFF_INSERT, "".join(new_units[j:new_at])))
        if old_at < len(old_units):
            diffs.extend(_char_diff(old_units[old_at], new_units[new_at]))
        i, j = old_at + 1, new_at + 1
    return diffs


def _pair_units(old: list[str], new: list[str]) -> list[tuple[int, int]] | None:
    """Order-preserving pairing of similar units maximising the similar text (a small
    Needleman-Wunsch); None when the run is too large for it."""
    if len(old) * len(new) > MAX_PAIRING:
        return None
    rows, cols = len(old), len(new)
    best = [[0.0] * (cols + 1) for _ in range(rows + 1)]
    for i in range(1, rows + 1):
        for j in range(1, cols + 1):
            a, b = old[i - 1], new[j - 1]
            score = max(best[i - 1][j], best[i][j - 1])
            if a and b and 2 * min(len(a), len(b)) >= max(len(a), len(b)):
                similarity = _token_similarity(a, b, number_weight=NUMBER_WEIGHT)
                if similarity >= PAIR_MIN:
                    score = max(score, best[i - 1][j - 1] + similarity * (len(a) + len(b)))
            best[i][j] = score
    pairs: list[tuple[int, int]] = []
    i, j = rows, cols
    while i and j:
        if best[i][j] == best[i - 1][j]:
            i -= 1
        elif best[i][j] == best[i][j - 1]:
            j -= 1
        else:
            pairs.append((i - 1, j - 1))
            i, j = i - 1, j - 1
    return pairs[::-1]


def _char_diff(old: str, new: str) -> Diff:
    if old == new:
        return [(DIFF_EQUAL, old)] if old else []
    if not old or not new:
        return [(DIFF_INSERT, new)] if new else [(DIFF_DELETE, old)]
    diffs = _DIFFER.diff_main(old, new)
    _DIFFER.diff_cleanupSemantic(diffs)
    return [(op, data) for op, data in diffs]


def _slide_to_sentences(diffs: Diff) -> Diff:
    """Slide each lone insertion or deletion along the repeated text around it to where its
    edges fall best for prose: blank lines, block starts, then sentence ends.

    diff-match-patch does this too but ranks every line break above a sentence end; in a
    hard-wrapped paragraph a line break is just a space, so deleting the second of two
    sentences that end alike would keep the wrong tail.
    """
    out = list(diffs)
    for i in range(1, len(out) - 1):
        (op_a, before), (op, edit), (op_b, after) = out[i - 1], out[i], out[i + 1]
        if op == DIFF_EQUAL or op_a != DIFF_EQUAL or op_b != DIFF_EQUAL:
            continue
        shift = _common_suffix(before, edit)
        if shift:  # slide fully left first
            before, edit, after = (
                before[:-shift],
                before[-shift:] + edit[:-shift],
                (edit[-shift:] + after),
            )
        best = (_edge_score(before, edit) + _edge_score(edit, after), before, edit, after)
        while edit and after and edit[0] == after[0]:
            before, edit, after = before + edit[0], edit[1:] + after[0], after[1:]
            score = _edge_score(before, edit) + _edge_score(edit, after)
            if score >= best[0]:
                best = (score, before, edit, after)
        out[i - 1], out[i], out[i + 1] = (
            (DIFF_EQUAL, best[1]),
            (op, best[2]),
            (DIFF_EQUAL, best[3]),
        )
    return _merge_runs(out)


def _merge_runs(diffs: Diff) -> Diff:
    """Adjacent operations of one kind joined, empty ones dropped."""
    merged: Diff = []
    for op, data in diffs:
        if data and merged and merged[-1][0] == op:
            merged[-1] = (op, merged[-1][1] + data)
        elif data:
            merged.append((op, data))
    return merged


def _edge_score(left: str, right: str) -> int:
    """How natural a place the boundary between ``left`` and ``right`` is for an edit."""
    if not left or not right:
        return 6
    left_line = left.endswith("\n")
    if (left_line and (right[0] in "\r\n" or _BLOCK_OPENER.match(right))) or (
        left.endswith(("\n\n", "\n\r\n")) or right.startswith(("\n\n", "\r\n\r\n"))
    ):
        return 5
    if _SENTENCE_END.search(left[-4:]) or (left[-1] in ".!?" and right[0].isspace()):
        return 4
    if left[-1].isspace() or right[0].isspace():
        return 2
    if not left[-1].isalnum() or not right[0].isalnum():
        return 1
    return 0


# --------------------------------------------------------------------------- text helpers


def _find_all(text: str, needle: str, limit: int | None = None) -> list[int]:
    """All (overlapping) occurrences of ``needle``; stops after ``limit`` hits."""
    found: list[int] = []
    pos = text.find(needle)
    while pos != -1 and (limit is None or len(found) < limit):
        found.append(pos)
        pos = text.find(needle, pos + 1)
    return found


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _common_suffix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[-1 - i] == b[-1 - i]:
        i += 1
    return i


def _similarity(a: str, b: str) -> float:
    """Share of characters the two strings keep in common after a semantic diff (Dice).

    Semantic cleanup drops coincidental one- or two-letter matches, so unrelated English text
    scores near 0 rather than the ~0.4 a raw edit distance gives it.
    """
    if a == b:
        return 1.0
    if not a or not b:
        return 0.0
    diffs = _SIMILAR.diff_main(a, b, False)
    _SIMILAR.diff_cleanupSemantic(diffs)
    same = sum(len(data) for op, data in diffs if op == DIFF_EQUAL)
    return 2.0 * same / (len(a) + len(b))


def _token_similarity(a: str, b: str, *, number_weight: int = 1) -> float:
    """Like ``_similarity`` but over words and punctuation (case-folded), weighted by length
    (tokens holding a digit ``number_weight`` times): steadier where one stray letter must not
    matter, and able to say that a changed figure changes a sentence more than a changed verb."""
    tokens_a, tokens_b = _TOKEN.findall(a.lower()), _TOKEN.findall(b.lower())
    if not tokens_a or not tokens_b:
        return 1.0 if tokens_a == tokens_b else 0.0
    codes: dict[str, str] = {}
    encoded_a = "".join(codes.setdefault(tok, chr(0x100 + len(codes))) for tok in tokens_a)
    encoded_b = "".join(codes.setdefault(tok, chr(0x100 + len(codes))) for tok in tokens_b)
    weights = {
        code: len(tok) * (number_weight if any(ch.isdigit() for ch in tok) else 1)
        for tok, code in codes.items()
    }
    diffs = _SIMILAR.diff_main(encoded_a, encoded_b, False)
    same = sum(sum(weights[c] for c in data) for op, data in diffs if op == DIFF_EQUAL)
    total = sum(weights[c] for c in encoded_a) + sum(weights[c] for c in encoded_b)
    return 2.0 * same / total


@dataclass(frozen=True)
class _Folded:
    """A text with each whitespace run folded to one space, with maps to and from the raw text."""

    text: str
    starts: list[int]  # folded index -> first raw index it stands for
    ends: list[int]  # folded index -> raw index just after what it stands for
    index: list[int]  # raw offset (0..len) -> folded offset

    def raw_span(self, start: int, end: int) -> tuple[int, int]:
        raw_start = self.starts[start] if start < len(self.starts) else self.index_len
        raw_end = self.ends[end - 1] if end > start else raw_start
        return raw_start, raw_end

    @property
    def index_len(self) -> int:
        return len(self.index) - 1


@lru_cache(maxsize=4)  # anchor_locate calls sharing one revision pair fold it once
def _fold(raw: str) -> _Folded:
    parts: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    index: list[int] = []
    pos = 0
    for match in _WHITESPACE.finditer(raw):
        run_start, run_end = match.span()
        folded = len(starts)
        parts.append(raw[pos:run_start])
        starts.extend(range(pos, run_start))
        ends.extend(range(pos + 1, run_start + 1))
        index.extend(range(folded, folded + run_start - pos))
        folded += run_start - pos
        parts.append(" ")
        starts.append(run_start)
        ends.append(run_end)
        index.extend([folded] * (run_end - run_start))
        pos = run_end
    folded = len(starts)
    parts.append(raw[pos:])
    starts.extend(range(pos, len(raw)))
    ends.extend(range(pos + 1, len(raw) + 1))
    index.extend(range(folded, folded + len(raw) - pos))
    index.append(len(starts))
    return _Folded(text="".join(parts), starts=starts, ends=ends, index=index)


def _fold_text(raw: str) -> str:
    return _WHITESPACE.sub(" ", raw)


@lru_cache(maxsize=4)
def _headings(text: str) -> _Headings:
    return _Headings(text)


class _Headings:
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
            fence_match = _FENCE.match(body)
            if fence_match:
                marker = fence_match.group(1)
                if fence is None:
                    fence = marker[0] * 3
                elif marker.startswith(fence):
                    fence = None
                continue
            heading = None if fence else _ATX_HEADING.match(body)
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


class _Context:
    """Prefix/suffix of a selector, folded, compared with the text around a candidate."""

    def __init__(self, prefix: str, suffix: str) -> None:
        self.prefix = _fold_text(prefix)[-CONTEXT_CHARS:]
        self.suffix = _fold_text(suffix)[:CONTEXT_CHARS]

    def before(self, text: str, pos: int) -> float | None:
        if not self.prefix:  # the quote started the document: only the edge itself confirms it
            return 1.0 if pos == 0 else None
        return _similarity(self.prefix, text[max(0, pos - len(self.prefix)) : pos])

    def after(self, text: str, pos: int) -> float | None:
        if not self.suffix:
            return 1.0 if pos == len(text) else None
        return _similarity(self.suffix, text[pos : pos + len(self.suffix)])

    def score(self, text: str, start: int, end: int) -> float:
        sides = [v for v in (self.before(text, start), self.after(text, end)) if v is not None]
        return sum(sides) / len(sides) if sides else 0.0


def _unit_edge(text: str, lo: int, hi: int, *, before: bool) -> bool:
    """Whether the context run ``text[lo:hi]`` next to a passage crosses the edge of the
    passage's Markdown block (a blank line, or a line opening a list item, quote, heading or
    table row) at least UNIT_RUN characters away from the passage."""
    if before and lo == 0 or not before and hi == len(text):
        return hi - lo >= UNIT_RUN
    edges = list(_BLOCK_EDGE.finditer(text, lo, hi))
    if not edges:
        return False
    return hi - edges[-1].end() >= UNIT_RUN if before else edges[0].start() - lo >= UNIT_RUN


# --------------------------------------------------------------------------- the diff as blocks


@dataclass(frozen=True)
class _Block:
    """A run of the diff: equal text, or one edit group (deletions and insertions together)."""

    equal: bool
    old_start: int
    old_end: int
    new_start: int
    new_end: int


@dataclass(frozen=True)
class _Bound:
    """A span boundary mapped into the new text; ``lo..hi`` is the range it may really be in."""

    pos: int
    lo: int
    hi: int

    @property
    def loose(self) -> bool:
        return self.lo != self.hi


class _Revision:
    """One old→new revision pair: its diff as blocks, plus lazily folded texts and headings."""

    def __init__(self, old: str, new: str, diffs: Diff | None) -> None:
        self.old = old
        self.new = new
        if diffs is None:
            diffs = anchor_diff_compute(old_text=old, new_text=new)
        elif (
            "".join(data for op, data in diffs if op != DIFF_INSERT) != old
            or "".join(data for op, data in diffs if op != DIFF_DELETE) != new
        ):
            raise ValueError("diffs do not transform old_text into new_text")
        self.blocks = self._blocks(diffs)
        self._old_starts = [block.old_start for block in self.blocks]
        self._new_starts = [block.new_start for block in self.blocks]

    @staticmethod
    def _blocks(diffs: Diff) -> list[_Block]:
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
        return blocks

    @property
    def folded_new(self) -> _Folded:
        return _fold(self.new)

    @property
    def folded_old(self) -> _Folded:
        return _fold(self.old)

    @property
    def headings_new(self) -> _Headings:
        return _headings(self.new)

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

    def map_bound(self, pos: int, *, side: Literal["start", "end"]) -> _Bound:
        """Map a span boundary; an edit at the boundary leaves a range for refinement.

        Pure insertions at the boundary stay outside the span; a replacement that begins at the
        span's start (or ends at its end) belongs to the span; a replacement straddling the
        boundary is split proportionally.
        """
        edit = self._edit_at(pos)
        if edit is None:
            mapped = self.map_point(pos)
            return _Bound(mapped, mapped, mapped)
        lo, hi = edit.new_start, edit.new_end
        if edit.old_start == edit.old_end:  # insertion only
            mapped = hi if side == "start" else lo
            return _Bound(mapped, mapped, mapped)
        owned_side = edit.old_start if side == "start" else edit.old_end
        outside_side = edit.old_end if side == "start" else edit.old_start
        if pos == owned_side:
            mapped = lo if side == "start" else hi
        elif pos == outside_side:
            mapped = hi if side == "start" else lo
            return _Bound(mapped, mapped, mapped)
        else:
            share = (pos - edit.old_start) / (edit.old_end - edit.old_start)
            mapped = lo + round(share * (hi - lo))
        return _Bound(mapped, lo, hi)

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


# --------------------------------------------------------------------------- locating


def _locate(selector: Selector, revision: _Revision) -> Anchor:
    return _Locator(selector, revision).locate()


@dataclass(frozen=True)
class _Candidate:
    start: int  # folded offsets into the new text
    end: int
    start_range: tuple[int, int] | None = None  # where a loose boundary may move
    end_range: tuple[int, int] | None = None


class _Locator:
    """Re-anchors one selector on one revision."""

    def __init__(self, selector: Selector, revision: _Revision) -> None:
        self.selector = selector
        self.revision = revision
        self.quote = _fold_text(selector.exact)
        self.context = _Context(selector.prefix, selector.suffix)
        self.own = self._own_span()
        new_len = len(revision.new)
        self.bounds: tuple[_Bound, _Bound] | None = None
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
    def wide_before(self) -> str:
        """Folded old text just before the passage (the stored prefix if it is not there)."""
        if self.own is None:
            return self.context.prefix
        folded = self.revision.folded_old
        lo = folded.index[self.own[0]]
        return folded.text[max(0, lo - WIDE_CONTEXT) : lo]

    @cached_property
    def wide_after(self) -> str:
        if self.own is None:
            return self.context.suffix
        folded = self.revision.folded_old
        hi = folded.index[self.own[1]]
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
        return self._by_diff() or self._by_exact_search() or self._by_fuzzy_search() or ORPHANED

    # ---- evidence about a candidate

    def _verbatim(self, start: int, end: int) -> Anchor:
        """The anchor for a raw span: moved/exact if its text is the quote, else fuzzy."""
        sel, text = self.selector, self.revision.new[start:end]
        if text == sel.exact:
            status: Status = "exact" if (start, end) == (sel.start, sel.end) else "moved"
            return Anchor(status=status, start=start, end=end, score=1.0)
        score = round(min(_similarity(sel.exact, text), 0.9999), 4)
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
        run = _common_suffix(wide, text[max(0, start - len(wide)) : start])
        if run == len(wide) == start:  # both at the start of the document
            return WIDE_CONTEXT
        if run >= UNIT_RUN and self.own is not None:
            old, new = self.revision.folded_old, self.revision.folded_new
            old_lo = old.starts[old.index[self.own[0]] - run]
            new_lo, new_hi = new.starts[start - run], new.raw_span(start, start)[0]
            if _unit_edge(self.revision.old, old_lo, self.own[0], before=True) and _unit_edge(
                self.revision.new, new_lo, new_hi, before=True
            ):
                return WIDE_CONTEXT
        return min(run, WIDE_CONTEXT)

    def _run_after(self, end: int) -> int:
        """Like ``_run_before``, after the passage."""
        text, wide = self.revision.folded_new.text, self.wide_after
        run = _common_prefix(wide, text[end : end + len(wide)])
        if run == len(wide) and end + run == len(text):
            return WIDE_CONTEXT
        if run >= UNIT_RUN and self.own is not None:
            old, new = self.revision.folded_old, self.revision.folded_new
            old_hi = old.ends[old.index[self.own[1]] + run - 1]
            new_lo, new_hi = new.raw_span(end, end)[0], new.ends[end + run - 1]
            if _unit_edge(self.revision.old, self.own[1], old_hi, before=False) and _unit_edge(
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
            and len(_find_all(self.revision.folded_new.text, self.quote, 2)) == 1
            and len(_find_all(self.revision.folded_old.text, self.quote, 2)) == 1
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
        return _similarity(_fold_text(gone), _fold_text(came)) >= MOVE_EVIDENCE_MIN

    # ---- step 1: map through the diff

    def _by_diff(self) -> Anchor | None:
        if self.own is None:
            return None
        hit = self.revision.untouched(*self.own)
        if hit is None:
            return None
        start, end = hit
        index = self.revision.folded_new.index
        # Even an optimal diff may align the quote with a look-alike in rewritten prose; only
        # a quote that occurs once in each text is taken on the diff's word alone.
        if not (self._context_ok(index[start], index[end], CONTEXT_MIN) or self._unique()):
            return None
        return self._verbatim(start, end)

    # ---- step 2: exact quote search

    def _by_exact_search(self) -> Anchor | None:
        folded, quote = self.revision.folded_new, self.quote
        hits = _find_all(folded.text, quote)
        if not hits:
            return None
        hits.sort(key=lambda pos: abs(folded.starts[pos] - self.expected))
        distinctive = self._unique()
        best: tuple[bool, float, int, int] | None = None
        for pos in hits[:MAX_OCCURRENCES]:
            end = pos + len(quote)
            raw_start, raw_end = folded.raw_span(pos, end)
            if self._is_foreign(raw_start, raw_end):
                continue
            if not (distinctive or self._context_ok(pos, end, CONTEXT_MIN)):
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

    # ---- step 3: fuzzy search

    def _by_fuzzy_search(self) -> Anchor | None:
        """Best candidate that passes the minimum scores, preferring those where the diff put
        the passage: the diff is the strongest evidence there is, so a candidate in place
        wins over any look-alike elsewhere, however similar."""
        if len(self.quote.strip()) < FUZZY_MIN_CHARS:
            return None
        folded = self.revision.folded_new
        region = (folded.index[self.region[0]], folded.index[self.region[1]])
        best: tuple[bool, float, int, int] | None = None
        seen: set[tuple[int, int]] = set()
        for candidate in self._fuzzy_candidates():
            start, end = self._refine(candidate)
            if end <= start or (start, end) in seen:
                continue
            seen.add((start, end))
            rank = self._judge(start, end)
            if rank is None:
                continue
            judged = (start < region[1] and region[0] < end, rank, start, end)
            if best is None or judged > best:
                best = judged
        if best is None:
            return None
        return self._verbatim(*folded.raw_span(best[2], best[3]))

    def _judge(self, start: int, end: int) -> float | None:
        """Rank of a folded candidate span, or None if it fails the minimum scores."""
        folded = self.revision.folded_new
        raw_start, raw_end = folded.raw_span(start, end)
        if self._is_foreign(raw_start, raw_end):
            return None
        similarity = _similarity(self.quote, folded.text[start:end])
        if self._near(raw_start, raw_end):
            sides = self._sides(start, end)
            pinned = len(sides) == 2 and min(sides) >= PINNED_CONTEXT
            if similarity < (PINNED_QUOTE_MIN if pinned else FUZZY_QUOTE_MIN):
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

    def _lone(self, similarity: float, start: int) -> bool:
        """Context lost on both sides (a reordered list), yet nothing else resembles the
        quote: a distinctive, very similar passage in the same section is still it."""
        return (
            similarity >= LONE_QUOTE_MIN
            and len(self.quote) >= DISTINCTIVE_CHARS
            and (
                not self.selector.heading_path
                or self._heading_bonus(self.revision.folded_new.starts[start]) >= 0.1
            )
            and self._alone_in_old()
        )

    def _alone_in_old(self) -> bool:
        """Whether no passage of the old text but the annotated one resembles the quote."""
        if self.own is None:
            return False
        folded, quote = self.revision.folded_old, self.quote
        own_start, own_end = folded.index[self.own[0]], folded.index[self.own[1]]
        windows, common = _seeds(quote, folded.text)
        if common > COMMON_SEEDS_MAX:  # the document says this kind of thing often
            return False
        for lo, hi in windows:
            aligned = _align(quote, folded.text, max(0, lo), min(len(folded.text), hi))
            if aligned is None or (aligned.start < own_end and own_start < aligned.end):
                continue
            if _similarity(quote, folded.text[aligned.start : aligned.end]) >= FUZZY_QUOTE_MIN:
                return False
        return True

    def _fuzzy_candidates(self) -> list[_Candidate]:
        """Candidate spans (folded): where the diff puts the passage, windows where pieces of
        the quote survive verbatim, and bitap's best match near there for short quotes."""
        folded, quote = self.revision.folded_new, self.quote
        candidates: list[_Candidate] = []
        if self.bounds is not None:
            first, last = self.bounds
            index = folded.index
            candidates.append(
                _Candidate(
                    start=index[first.pos],
                    end=index[max(last.pos, first.pos)],
                    start_range=(index[first.lo], index[first.hi]) if first.loose else None,
                    end_range=(index[last.lo], index[last.hi]) if last.loose else None,
                )
            )
        windows = _seed_windows(quote, folded.text)
        if len(quote) <= _MATCHER.Match_MaxBits:
            loc = _MATCHER.match_main(folded.text, quote, folded.index[self.expected])
            if loc != -1:
                windows.append((loc - SEED_CHARS, loc + len(quote) + SEED_CHARS))
        for lo, hi in windows:
            aligned = _align(quote, folded.text, max(0, lo), min(len(folded.text), hi))
            if aligned is not None:
                candidates.append(aligned)
        return candidates

    def _refine(self, candidate: _Candidate) -> tuple[int, int]:
        """Settle the boundaries: among the token boundaries whose span matches the quote
        (nearly) best, the one with the longest verbatim context next to it.

        A loose boundary may move over its whole range; any boundary may also move inwards,
        since the diff may put text inserted next to the passage inside the mapped span.
        """
        text, quote = self.revision.folded_new.text, self.quote
        start, end = candidate.start, candidate.end
        inwards = max(SEED_CHARS, len(quote))
        lo, hi = candidate.start_range or (start, start)
        guess = start
        positions = [p for p in _boundaries(text, lo, max(hi, start + inwards), guess) if p < end]
        start = _settle(
            positions,
            lambda p: _token_similarity(quote, text[p:end]),
            lambda p: (self._run_before(p), -abs(p - guess)),
            start,
        )
        lo, hi = candidate.end_range or (end, end)
        guess = end
        positions = [p for p in _boundaries(text, min(lo, end - inwards), hi, guess) if p > start]
        end = _settle(
            positions,
            lambda p: _token_similarity(quote, text[start:p]),
            lambda p: (self._run_after(p), -abs(p - guess)),
            end,
        )
        return start, end


def _settle(
    positions: list[int],
    similarity: Callable[[int], float],
    context: Callable[[int], tuple[int, int]],
    default: int,
) -> int:
    if not positions:
        return default
    scores = {p: similarity(p) for p in positions}
    best = max(scores.values())
    return max((p for p in positions if scores[p] >= best - BOUNDARY_SLACK), key=context)


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
    diffs = _SIMILAR.diff_main(quote, text[lo:hi], False)
    _SIMILAR.diff_cleanupSemantic(diffs)
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
        hits = _find_all(text, quote[offset : offset + size], SEED_MAX_HITS + 1)
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
