"""Diffs between two versions' contents, computed on the server, at a bounded cost.

Texts: a line-level diff (diff-match-patch in line mode); a deleted line followed by an inserted
one is shown as a changed pair with a word-level diff inside. Structured fields (provider, model,
params, tools, response format, variables): a field-by-field change list.
Long text diffs are cut at `limit` rows; `more` says how many rows were left out.

Cost: one request's diff runs under a `DiffBudget` (lines compared, rows kept, seconds of engine
time; settings PLAYGROUND_DIFF_BUDGET_*). Line mode first: unchanged starts and ends are matched
directly and only the lines between reach diff-match-patch; a text pair past the budget is
answered `too_large` with what could be compared. Results are cached packed in bytes by the two
versions' content hashes (`diff_cache`), so a page, its folds and the API compute a diff once.

Pages fold long runs of unchanged lines (`diff_fold`) to a few lines of context around each
change, like a code review tool; a fold is expanded on demand by row range, so a page's size
grows with what changed, not with the text around it.
"""

import dataclasses
import json
import re
import sys
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from django.conf import settings

from common.lru import LruCache
from common.textdiff import WORD, sequence_diff

from .content import Message, Tool, VersionContent

DEFAULT_ROW_LIMIT = 400
T = TypeVar("T")
MISSING = object()


@dataclass
class TextDiff:
    field: str  # the content field, e.g. "system" or "messages.2.content"
    rows: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    added: int = 0
    removed: int = 0
    more: int = 0
    role_before: str | None = None
    role_after: str | None = None
    # The text's name in each version (`system`, `messages.N.content`); None on the side where
    # the message does not exist. A message can move, so the two can differ.
    field_before: str | None = None
    field_after: str | None = None
    # A diff of two long texts covers only the region around what changed (playground.text.ranges):
    # `lines_before` unchanged lines precede `rows`, `chars_after` unchanged characters follow,
    # and `cut` says the changed region itself was longer than could be diffed here.
    lines_before: int = 0
    chars_after: int = 0
    cut: bool = False
    # A cut diff: lines of the changed region past the cut, on each side (counted, not diffed),
    # so a page's header says how much changed (`added_total`), not how much was diffed.
    rest_old_lines: int = 0
    rest_new_lines: int = 0
    # Past the request's DiffBudget: no rows; `lines_before` unchanged lines, then `old_lines`
    # lines of the older text and `new_lines` of the newer that differ (not compared line by
    # line), then `lines_after` unchanged lines (plus `chars_after` characters not read).
    too_large: bool = False
    lines_after: int = 0
    old_lines: int = 0
    new_lines: int = 0

    @property
    def changed(self) -> bool:
        return bool(self.added or self.removed or self.cut or self.too_large)

    @property
    def added_total(self) -> int:
        """Lines added, counting a cut region's undiffed lines as added (at most that many)."""
        return self.added + self.rest_new_lines

    @property
    def removed_total(self) -> int:
        return self.removed + self.rest_old_lines

    @property
    def blocks(self) -> list["DiffBlock"]:
        """The rows for a page: unchanged runs folded around the changes."""
        if self.too_large:
            return [
                DiffBlock(
                    fold=True,
                    too_large=True,
                    outside_lines=self.lines_before,
                    old_lines=self.old_lines,
                    new_lines=self.new_lines,
                    lines_after=self.lines_after,
                    outside_chars=self.chars_after,
                )
            ]
        blocks = diff_blocks(self.rows)
        if self.lines_before:
            blocks.insert(0, DiffBlock(fold=True, outside_lines=self.lines_before))
        if self.chars_after:
            blocks.append(DiffBlock(fold=True, outside_chars=self.chars_after))
        return blocks


@dataclass
class DiffBudget:
    """What one diff request may spend, shared by every text pair of the two versions.

    `lines`: lines the engine may compare (the lines that differ, on both sides, after the
    unchanged start and end are matched directly) plus the words of changed lines diffed word
    by word. `rows`: diff rows kept in all. `seconds`: the engine's own time, summed over its
    calls (reading the texts does not count); a call gets the time left as its deadline, past
    which diff-match-patch answers a coarser but valid diff, and once it is spent later pairs
    are not compared at all (`out_of_time`). A text pair that does not fit is answered "too
    large to diff in full", with what could be compared (the unchanged lines before and after,
    how many lines differ); a changed line pair past the budget is shown whole, without word
    marks. `spent_lines`/`spent_rows` are the work done: tests assert on them, never on time.
    """

    lines: int
    rows: int
    seconds: float
    spent_lines: int = 0
    spent_rows: int = 0
    out_of_time: bool = False

    @classmethod
    def from_settings(cls) -> "DiffBudget":
        return cls(
            lines=int(settings.PLAYGROUND_DIFF_BUDGET_LINES),
            rows=int(settings.PLAYGROUND_DIFF_BUDGET_ROWS),
            seconds=float(settings.PLAYGROUND_DIFF_BUDGET_SECONDS),
        )

    def take(self, *, lines: int, rows: int = 0) -> bool:
        """Spend `lines` and `rows` if both fit and time is left; False (nothing spent) if not."""
        if self.seconds <= 0:
            self.out_of_time = True
        if self.out_of_time:
            return False
        if self.spent_lines + lines > self.lines or self.spent_rows + rows > self.rows:
            return False
        self.spent_lines += lines
        self.spent_rows += rows
        return True

    def run(self, engine: Callable[[float], T]) -> T:
        """`engine(deadline)` with the time left as its deadline; the time it took is spent."""
        started = time.time()
        result = engine(started + max(self.seconds, 0.0))
        self.seconds -= time.time() - started
        if self.seconds <= 0:
            self.out_of_time = True
        return result


def _unlimited() -> DiffBudget:
    """No budget: for callers diffing texts they already bounded (and tests)."""
    return DiffBudget(lines=sys.maxsize, rows=sys.maxsize, seconds=2.0)


def _tokens_diff(before: list[str], after: list[str], budget: DiffBudget) -> list[tuple[int, str]]:
    """diff-match-patch over tokens (lines or words), each token mapped to one character,
    within the budget's time."""
    diffs = budget.run(lambda deadline: sequence_diff(before, after, deadline=deadline))
    return [(op, "".join(chunk)) for op, chunk in diffs]


LINE = re.compile(r"[^\n]*\n|[^\n]+")


def words_diff(
    before: str, after: str, *, budget: DiffBudget | None = None
) -> list[tuple[int, str]]:
    """A word-level diff of two lines; past the budget, the old line deleted and the new one
    inserted whole."""
    budget = budget or _unlimited()
    old, new = WORD.findall(before), WORD.findall(after)
    if not budget.take(lines=len(old) + len(new)):
        return [(op, text) for op, text in ((-1, before), (1, after)) if text]
    return _tokens_diff(old, new, budget)


# Not an edit: the space an inline word diff shows between a deletion and the insertion that
# replaces it (`inline_words_diff`).
DIFF_GAP = 2


def inline_words_diff(
    before: str, after: str, *, budget: DiffBudget | None = None
) -> list[tuple[int, str]]:
    """A word diff to read inline, deletions and insertions in one text (two runs' outputs,
    two evaluation columns): `words_diff` with a gap run `(DIFF_GAP, " ")` between a deletion
    and an insertion side by side when neither has a space at that edge, so "turn" →
    "turns" reads "turn turns" and "22" → "16" reads "22 16", never "turnturns" or "2216"."""
    runs: list[tuple[int, str]] = []
    for op, text in words_diff(before, after, budget=budget):
        if (
            op in (-1, 1)
            and runs
            and runs[-1][0] == -op
            and not runs[-1][1][-1:].isspace()
            and not text[:1].isspace()
        ):
            runs.append((DIFF_GAP, " "))
        runs.append((op, text))
    return runs


def _common_ends(a: list[str], b: list[str]) -> tuple[int, int]:
    """How many lines `a` and `b` share at their start, and then at their end."""
    size = min(len(a), len(b))
    prefix = 0
    while prefix < size and a[prefix] == b[prefix]:
        prefix += 1
    suffix = 0
    while suffix < size - prefix and a[-1 - suffix] == b[-1 - suffix]:
        suffix += 1
    return prefix, suffix


def text_diff(
    name: str,
    before: str,
    after: str,
    *,
    limit: int | None = DEFAULT_ROW_LIMIT,
    budget: DiffBudget | None = None,
) -> TextDiff:
    """Rows: {"op": "equal"|"insert"|"delete"|"change", "old": line, "new": line, "words": [...]}

    Line mode first: the unchanged lines at the start and end are matched directly, and only
    the lines between go to the engine, at the cost of `budget` (see DiffBudget). A pair that
    does not fit comes back `too_large`: no rows, `lines_before`/`lines_after` unchanged lines
    around `old_lines`/`new_lines` lines that differ.
    """
    budget = budget or _unlimited()
    result = TextDiff(field=name)
    old_lines, new_lines = LINE.findall(before), LINE.findall(after)
    prefix, suffix = _common_ends(old_lines, new_lines)
    old_mid = old_lines[prefix : len(old_lines) - suffix]
    new_mid = new_lines[prefix : len(new_lines) - suffix]
    row_count = prefix + suffix + len(old_mid) + len(new_mid)
    if not budget.take(lines=len(old_mid) + len(new_mid), rows=row_count):
        result.too_large = True
        result.lines_before, result.lines_after = prefix, suffix
        result.old_lines, result.new_lines = len(old_mid), len(new_mid)
        return result
    rows: list[dict[str, Any]] = []
    pending_delete: list[str] = []

    old_no = new_no = 0  # 1-based line numbers of the last line seen on each side

    def flush_deletes() -> None:
        nonlocal old_no
        for line in pending_delete:
            old_no += 1
            rows.append({"op": "delete", "old": line, "old_no": old_no})
        pending_delete.clear()

    def equal(lines: list[str]) -> None:
        nonlocal old_no, new_no
        for line in lines:
            old_no += 1
            new_no += 1
            rows.append(
                {"op": "equal", "old": line, "new": line, "old_no": old_no, "new_no": new_no}
            )

    equal(old_lines[:prefix])
    for op, chunk in _tokens_diff(old_mid, new_mid, budget):
        lines = LINE.findall(chunk)
        if op == 0:
            flush_deletes()
            equal(lines)
        elif op == -1:
            result.removed += len(lines)
            pending_delete.extend(lines)
        else:
            result.added += len(lines)
            for line in lines:
                new_no += 1
                if pending_delete:
                    old = pending_delete.pop(0)
                    old_no += 1
                    rows.append(
                        {
                            "op": "change",
                            "old": old,
                            "new": line,
                            "words": words_diff(old, line, budget=budget),
                            "old_no": old_no,
                            "new_no": new_no,
                        }
                    )
                else:
                    rows.append({"op": "insert", "new": line, "new_no": new_no})
    flush_deletes()
    equal(old_lines[len(old_lines) - suffix :])
    result.rows = rows
    return diff_limit(result, limit)


def diff_limit(diff: TextDiff, limit: int | None) -> TextDiff:
    """`diff` with at most `limit` rows; `more` says how many were left out."""
    if limit is None or len(diff.rows) <= limit:
        return diff
    return dataclasses.replace(diff, rows=diff.rows[:limit], more=len(diff.rows) - limit)


def _changes(path: str, before: Any, after: Any, out: list[dict[str, Any]]) -> None:
    if isinstance(before, dict) and isinstance(after, dict):
        for key in sorted(set(before) | set(after), key=str):
            _changes(
                f"{path}.{key}" if path else str(key),
                before.get(key, MISSING),
                after.get(key, MISSING),
                out,
            )
        return
    if before == after:
        return
    change: dict[str, Any] = {"field": path, "kind": "changed"}
    if before is MISSING:
        change["kind"] = "added"
    elif after is MISSING:
        change["kind"] = "removed"
    change["before"] = None if before is MISSING else before
    change["after"] = None if after is MISSING else after
    out.append(change)


def _tools_by_name(tools: list[Tool]) -> dict[str, Tool]:
    return {tool["name"]: tool for tool in tools}


def messages_align(
    old: list[Message], new: list[Message], *, deadline: float | None = None
) -> list[tuple[int | None, int | None]]:
    """Pair the messages of two versions: identical messages by a sequence diff, then the
    deleted and inserted ones in between by position (an edited message), the rest unpaired.
    So inserting a message at the top shows one added message, not every message changed."""

    def keys(messages: list[Message]) -> list[str]:
        return [f"{m['role']}\x00{m['content']}" for m in messages]

    pairs: list[tuple[int | None, int | None]] = []
    deleted: list[int] = []
    i = j = 0
    for op, chunk in sequence_diff(keys(old), keys(new), deadline=deadline):
        if op == -1:
            deleted.extend(range(i, i + len(chunk)))
            i += len(chunk)
            continue
        if op == 1:
            for k in range(j, j + len(chunk)):
                pairs.append((deleted.pop(0) if deleted else None, k))
            j += len(chunk)
            continue
        pairs.extend((old_index, None) for old_index in deleted)
        deleted.clear()
        pairs.extend((i + k, j + k) for k in range(len(chunk)))
        i += len(chunk)
        j += len(chunk)
    pairs.extend((old_index, None) for old_index in deleted)
    return pairs


TextDiffer = Callable[[str, str, str], TextDiff]


def content_diff(
    before: VersionContent,
    after: VersionContent,
    *,
    limit: int | None = DEFAULT_ROW_LIMIT,
    differ: TextDiffer | None = None,
    budget: DiffBudget | None = None,
) -> dict[str, Any]:
    """The whole diff of two contents: text diffs per text field plus a change list.

    `differ(name, old, new)` diffs one pair of texts; by default the texts are in the contents and
    `text_diff` compares them. playground.text.ranges passes contents whose texts are blob hashes
    (equal texts, equal hashes: message alignment is unchanged) with a differ that reads them.
    """

    budget = budget or _unlimited()

    def diff_of(name: str, old: str, new: str) -> TextDiff:
        if differ:
            return differ(name, old, new)
        return text_diff(name, old, new, limit=limit, budget=budget)

    system = diff_of("system", before["system"], after["system"])
    system.field_before = system.field_after = "system"
    texts = [system]
    changes: list[dict[str, Any]] = []
    for key in ("provider", "model"):
        _changes(key, before[key], after[key], changes)
    aligned = budget.run(
        lambda deadline: messages_align(before["messages"], after["messages"], deadline=deadline)
    )
    for old_index, new_index in aligned:
        # A message missing on one side diffs as an empty text with no role.
        old = before["messages"][old_index] if old_index is not None else None
        new = after["messages"][new_index] if new_index is not None else None
        # Name a message by its place in the newer version, or the older one if it was removed.
        name = f"messages.{new_index if new_index is not None else old_index}"
        diff = diff_of(
            f"{name}.content", old["content"] if old else "", new["content"] if new else ""
        )
        diff.role_before = old["role"] if old else None
        diff.role_after = new["role"] if new else None
        diff.field_before = f"messages.{old_index}.content" if old else None
        diff.field_after = f"messages.{new_index}.content" if new else None
        texts.append(diff)
        _changes(
            f"{name}.role",
            old["role"] if old else MISSING,
            new["role"] if new else MISSING,
            changes,
        )
    _changes("params", before["params"], after["params"], changes)
    _changes("tools", _tools_by_name(before["tools"]), _tools_by_name(after["tools"]), changes)
    _changes(
        "response_format", before["response_format"] or {}, after["response_format"] or {}, changes
    )
    _changes("variables", before["variables"], after["variables"], changes)
    return {"texts": texts, "changes": changes}


# --- the diff cache -----------------------------------------------------------------------------

# Packed diffs (zlib-compressed JSON) keyed by the two versions' content hashes and the budget:
# versions never change, so an entry is never stale. Shared by the API, the page and its folds;
# bounded in bytes (PLAYGROUND_DIFF_CACHE_BYTES, part of the process's cache budget).
diff_cache: LruCache[bytes] = LruCache(
    bound=lambda: int(settings.PLAYGROUND_DIFF_CACHE_BYTES), cost=len
)


def diff_pack(diff: dict[str, Any]) -> bytes:
    """A content diff (`content_diff`'s answer) as compact bytes for the cache."""
    body = {
        "texts": [dataclasses.asdict(text) for text in diff["texts"]],
        "changes": diff["changes"],
        "complete": diff.get("complete", True),
    }
    return zlib.compress(json.dumps(body, separators=(",", ":")).encode(), 1)


def diff_unpack(packed: bytes) -> dict[str, Any]:
    body = json.loads(zlib.decompress(packed))
    return {
        "texts": [TextDiff(**text) for text in body["texts"]],
        "changes": body["changes"],
        "complete": body["complete"],
    }


def text_diff_as_json(diff: TextDiff) -> dict[str, Any]:
    return {
        "field": diff.field,
        "role_before": diff.role_before,
        "role_after": diff.role_after,
        "added": diff.added,
        "removed": diff.removed,
        "truncated": bool(diff.more),
        "more": diff.more,
        "lines_before": diff.lines_before,
        "chars_after": diff.chars_after,
        "cut": diff.cut,
        "rest_old_lines": diff.rest_old_lines,
        "rest_new_lines": diff.rest_new_lines,
        "too_large": diff.too_large,
        "lines_after": diff.lines_after,
        "old_lines": diff.old_lines,
        "new_lines": diff.new_lines,
        "rows": diff.rows,
    }


# --- folding unchanged runs for pages ---------------------------------------------------------

FOLD_CONTEXT = 3  # unchanged lines kept on each side of a change
FOLD_STEP = 20  # lines an "expand up/down" control reveals


@dataclass(frozen=True)
class DiffBlock:
    """Rows shown as they are, or a fold of unchanged rows `start`..`end` (row indexes, end
    exclusive) that the page expands on demand. `change_starts` marks the rows where a run of
    changes begins (the targets of next/previous change)."""

    rows: tuple[dict[str, Any], ...] = ()
    start: int = 0
    end: int = 0
    fold: bool = False
    change_starts: frozenset[int] = frozenset()
    mixed: bool = False  # a fold that holds changes too: the rest of a diff past the budget
    # A fold of unchanged text outside the rows of a long texts' diff (not expandable here).
    outside_lines: int = 0
    outside_chars: int = 0
    # A text pair past the diff budget (TextDiff.too_large): what could be compared.
    too_large: bool = False
    old_lines: int = 0
    new_lines: int = 0
    lines_after: int = 0

    @property
    def first_line(self) -> int:
        """The first line that differs (1-based), for a too-large fold."""
        return self.outside_lines + 1

    @property
    def count(self) -> int:
        return self.end - self.start

    @property
    def first_old(self) -> int:
        return self.rows[0]["old_no"] if self.rows else 0

    @property
    def numbered(self) -> list[tuple[int, dict[str, Any], bool]]:
        """(row index, row, starts a change) for the template."""
        return [
            (self.start + i, row, self.start + i in self.change_starts)
            for i, row in enumerate(self.rows)
        ]


def diff_fold(
    rows: list[dict[str, Any]],
    *,
    start: int = 0,
    end: int | None = None,
    context: int = FOLD_CONTEXT,
    lead: int | None = None,
    trail: int | None = None,
) -> list[DiffBlock]:
    """Split rows[start:end] into shown blocks and folds: every run of unchanged rows longer
    than what its context would show is folded, keeping `context` rows next to each change.
    `lead`/`trail` override the context kept at the very start/end of the range (an expand
    control reveals rows at one edge of a fold only)."""
    end = len(rows) if end is None else end
    lead = context if lead is None else lead
    trail = context if trail is None else trail
    blocks: list[DiffBlock] = []
    changes = frozenset(
        i
        for i in range(start, end)
        if rows[i]["op"] != "equal" and (i == 0 or rows[i - 1]["op"] == "equal")
    )
    shown_from = start

    def show(upto: int) -> None:
        if upto > shown_from:
            blocks.append(
                DiffBlock(
                    rows=tuple(rows[shown_from:upto]),
                    start=shown_from,
                    end=upto,
                    change_starts=changes,
                )
            )

    i = start
    while i < end:
        if rows[i]["op"] != "equal":
            i += 1
            continue
        run_end = i
        while run_end < end and rows[run_end]["op"] == "equal":
            run_end += 1
        keep_before = lead if i == start else context
        keep_after = trail if run_end == end else context
        if run_end - i > keep_before + keep_after + 1:
            fold_start, fold_end = i + keep_before, run_end - keep_after
            show(fold_start)
            blocks.append(DiffBlock(start=fold_start, end=fold_end, fold=True))
            shown_from = fold_end
        i = run_end
    show(end)
    return blocks


def page_row_budget() -> int:
    """Rows a page shows per text (and a fold of changes reveals at a time):
    PLAYGROUND_DIFF_PAGE_ROWS, so a page stays small however long the diff."""
    return int(settings.PLAYGROUND_DIFF_PAGE_ROWS)


def diff_blocks(
    rows: list[dict[str, Any]],
    *,
    start: int = 0,
    end: int | None = None,
    budget: int | None = None,
) -> list[DiffBlock]:
    """The blocks of a page: unchanged runs folded, and once `budget` rows are shown (even in
    the middle of one long run of changes), the rest of the diff folded into one block that
    loads on demand, `budget` rows at a time."""
    budget = page_row_budget() if budget is None else budget
    blocks = diff_fold(rows, start=start, end=end, lead=0, trail=0)
    out: list[DiffBlock] = []
    shown = 0
    for k, block in enumerate(blocks):
        if not block.fold and shown + block.count > budget:
            keep = budget - shown
            if keep > 0:
                out.append(
                    dataclasses.replace(block, rows=block.rows[:keep], end=block.start + keep)
                )
            out.append(
                DiffBlock(start=block.start + keep, end=blocks[-1].end, fold=True, mixed=True)
            )
            break
        out.append(block)
        shown += 0 if block.fold else block.count
        if shown >= budget and k + 1 < len(blocks):
            out.append(
                DiffBlock(start=blocks[k + 1].start, end=blocks[-1].end, fold=True, mixed=True)
            )
            break
    return out


def diff_expand(
    rows: list[dict[str, Any]], *, start: int, end: int, direction: str
) -> list[DiffBlock]:
    """What replaces the fold rows[start:end] when the page asks to expand it: all of it, or
    FOLD_STEP more rows at its top (`up`) or bottom (`down`), the rest staying folded. A range
    holding changes (the rest of a long diff) comes back folded in its turn."""
    end = min(end, len(rows))
    start = max(0, min(start, end))
    if any(row["op"] != "equal" for row in rows[start:end]):
        return diff_blocks(rows, start=start, end=end)
    if direction == "up" and end - start > FOLD_STEP:
        return diff_fold(rows, start=start, end=end, context=0, lead=FOLD_STEP, trail=0)
    if direction == "down" and end - start > FOLD_STEP:
        return diff_fold(rows, start=start, end=end, context=0, lead=0, trail=FOLD_STEP)
    return [DiffBlock(rows=tuple(rows[start:end]), start=start, end=end)]
