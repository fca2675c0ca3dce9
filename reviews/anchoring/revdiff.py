"""The revision diff: sentences and Markdown lines aligned before characters."""

from __future__ import annotations

import bisect
from collections import Counter

from common.textdiff import common_suffix

from .base import (
    BLOCK_OPENER,
    DIFF_DELETE,
    DIFF_EQUAL,
    DIFF_INSERT,
    DIFFER,
    FENCE,
    MAX_PAIRING,
    NUMBER_WEIGHT,
    PAIR_MIN,
    SENTENCE_BREAK,
    SENTENCE_END,
    Diff,
)
from .text import fold_text, token_similarity

# Recursion bound of the patience alignment; deeper gaps are aligned by common runs only.
PATIENCE_MAX_DEPTH = 32


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
    old_keys = [fold_text(unit).strip() for unit in old_units]
    new_keys = [fold_text(unit).strip() for unit in new_units]
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


_Run = tuple[bool, int, int, int, int]  # equal?, old_lo, old_hi, new_lo, new_hi (unit indices)


def _units(text: str) -> list[str]:
    """``text`` cut after sentence ends, blank lines, Markdown block lines and code lines."""
    cuts = {0, len(text)}
    lines = text.splitlines(keepends=True)
    fence: str | None = None
    pos = 0
    for i, line in enumerate(lines):
        start, pos = pos, pos + len(line)
        marker = FENCE.match(line)
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
            or BLOCK_OPENER.match(line)
            or not following.strip()
            or BLOCK_OPENER.match(following)
            or FENCE.match(following)
        ):
            cuts.add(pos)
        for match in SENTENCE_BREAK.finditer(line):
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
    anchors = (
        _unique_anchors(old, old_lo, old_end, new, new_lo, new_end)
        if depth < PATIENCE_MAX_DEPTH
        else []
    )
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
    for op, data in DIFFER.diff_main(old_code, new_code, False):
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
                similarity = token_similarity(a, b, number_weight=NUMBER_WEIGHT)
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
    diffs = DIFFER.diff_main(old, new)
    DIFFER.diff_cleanupSemantic(diffs)
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
        shift = common_suffix(before, edit)
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
    if (left_line and (right[0] in "\r\n" or BLOCK_OPENER.match(right))) or (
        left.endswith(("\n\n", "\n\r\n")) or right.startswith(("\n\n", "\r\n\r\n"))
    ):
        return 5
    if SENTENCE_END.search(left[-4:]) or (left[-1] in ".!?" and right[0].isspace()):
        return 4
    if left[-1].isspace() or right[0].isspace():
        return 2
    if not left[-1].isalnum() or not right[0].isalnum():
        return 1
    return 0
