"""Generic text-diff helpers: diff-match-patch over tokens, and folding of unchanged runs.

Nothing app-specific: any feature that shows a diff of two texts (revisions, versions) may use
these; `common_prefix` and `common_suffix` are what every diff (and the text store's deltas)
starts from. Tokens (lines, paragraphs, words) are mapped to one private-use character each so
diff-match-patch aligns whole tokens.
"""

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from diff_match_patch import diff_match_patch

WORD = re.compile(r"\s+|\w+|[^\w\s]", re.UNICODE)
DIFF_DELETE, DIFF_EQUAL, DIFF_INSERT = -1, 0, 1

T = TypeVar("T")


def _dmp() -> diff_match_patch:
    dmp = diff_match_patch()
    dmp.Diff_Timeout = 2.0
    return dmp


def common_prefix(a: str, b: str) -> int:
    """How many characters `a` and `b` share at their start.

    A binary search over slice comparisons (each one a C-speed compare), as diff-match-patch's
    own does: the whole shorter length is tried first, and each later probe compares only the
    part not yet known to be equal.
    """
    low, high = 0, min(len(a), len(b))  # a[:low] == b[:low]; the answer is at most high
    probe = high
    while low < high:
        if a[low:probe] == b[low:probe]:
            low = probe
        else:
            high = probe - 1
        probe = (low + high + 1) // 2
    return low


def common_suffix(a: str, b: str) -> int:
    """How many characters `a` and `b` share at their end (as `common_prefix`)."""
    low, high = 0, min(len(a), len(b))
    probe = high
    while low < high:
        if a[len(a) - probe : len(a) - low] == b[len(b) - probe : len(b) - low]:
            low = probe
        else:
            high = probe - 1
        probe = (low + high + 1) // 2
    return low


def sequence_diff(
    before: Sequence[str], after: Sequence[str], *, deadline: float | None = None
) -> list[tuple[int, list[str]]]:
    """The diff of two token sequences as (op, tokens) runs; op is -1, 0 or 1.

    `deadline` (a `time.time()` value) caps the engine's search: past it diff-match-patch
    answers a valid but coarser diff (whole runs deleted and inserted) instead of searching on.
    Without it, each call may search for `Diff_Timeout` seconds.
    """
    table: dict[str, str] = {}
    tokens: list[str] = []

    def encode(items: Sequence[str]) -> str:
        out = []
        for token in items:
            if token not in table:
                # The Basic Multilingual Plane's private-use area, then plane 15-16 onwards.
                n = len(tokens)
                table[token] = chr(0xE000 + n) if n < 6400 else chr(0xF0000 + n - 6400)
                tokens.append(token)
            out.append(table[token])
        return "".join(out)

    a, b = encode(before), encode(after)
    reverse = {v: k for k, v in table.items()}
    return [
        (op, [reverse[c] for c in chunk])
        for op, chunk in _dmp().diff_main(a, b, False, deadline)
        if chunk
    ]


def words_diff(before: str, after: str) -> list[tuple[int, str]]:
    """A word-level diff of two short texts: (op, text) runs."""
    return [
        (op, "".join(chunk))
        for op, chunk in sequence_diff(WORD.findall(before), WORD.findall(after))
    ]


@dataclass(frozen=True)
class Fold:
    """A run of unchanged rows hidden behind a "show N unchanged" control."""

    rows: tuple[object, ...]


def fold_unchanged(
    rows: Sequence[T], *, unchanged: Callable[[T], bool], context: int = 1, min_fold: int = 3
) -> list[T | Fold]:
    """`rows` with every run of unchanged rows longer than `2 * context + min_fold - 1` cut to
    `context` rows either side of a Fold holding the rest (at the edges, only the inner side
    keeps context), as code-review diffs show them."""
    out: list[T | Fold] = []
    i = 0
    while i < len(rows):
        if not unchanged(rows[i]):
            out.append(rows[i])
            i += 1
            continue
        j = i
        while j < len(rows) and unchanged(rows[j]):
            j += 1
        lead = context if i > 0 else 0
        trail = context if j < len(rows) else 0
        if j - i - lead - trail >= min_fold:
            out.extend(rows[i : i + lead])
            out.append(Fold(rows=tuple(rows[i + lead : j - trail])))
            out.extend(rows[j - trail : j])
        else:
            out.extend(rows[i:j])
        i = j
    return out
