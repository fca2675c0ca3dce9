"""Diffs between two versions' contents, computed on the server.

Texts: a line-level diff (diff-match-patch in line mode); a deleted line followed by an inserted
one is shown as a changed pair with a word-level diff inside. Structured fields (provider, model,
params, tools, response format, variables): a field-by-field change list.
Long text diffs are cut at `limit` rows; `more` says how many rows were left out.

Pages fold long runs of unchanged lines (`diff_fold`) to a few lines of context around each
change, like a code review tool; a fold is expanded on demand by row range, so a page's size
grows with what changed, not with the text around it.
"""

import dataclasses
import re
from dataclasses import dataclass
from typing import Any

from diff_match_patch import diff_match_patch

from .content import Message, Tool, VersionContent

DEFAULT_ROW_LIMIT = 400
WORD = re.compile(r"\s+|\w+|[^\w\s]", re.UNICODE)
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

    @property
    def changed(self) -> bool:
        return bool(self.added or self.removed)

    @property
    def blocks(self) -> list["DiffBlock"]:
        """The rows for a page: unchanged runs folded around the changes."""
        return diff_blocks(self.rows)


def _dmp() -> diff_match_patch:
    dmp = diff_match_patch()
    dmp.Diff_Timeout = 2.0
    return dmp


def _tokens_diff(before: str, after: str, pattern: re.Pattern[str]) -> list[tuple[int, str]]:
    """diff-match-patch over tokens (lines or words), each token mapped to one character."""
    table: dict[str, str] = {}
    tokens: list[str] = []

    def encode(text: str) -> str:
        out = []
        for token in pattern.findall(text):
            if token not in table:
                table[token] = (
                    chr(len(tokens) + 0xE000) if len(tokens) < 6400 else chr(len(tokens) + 0x10000)
                )
                tokens.append(token)
            out.append(table[token])
        return "".join(out)

    a, b = encode(before), encode(after)
    reverse = {v: k for k, v in table.items()}
    diffs = _dmp().diff_main(a, b, False)
    return [(op, "".join(reverse[c] for c in chunk)) for op, chunk in diffs]


LINE = re.compile(r"[^\n]*\n|[^\n]+")


def words_diff(before: str, after: str) -> list[tuple[int, str]]:
    return _tokens_diff(before, after, WORD)


def text_diff(
    name: str, before: str, after: str, *, limit: int | None = DEFAULT_ROW_LIMIT
) -> TextDiff:
    """Rows: {"op": "equal"|"insert"|"delete"|"change", "old": line, "new": line, "words": [...]}"""
    result = TextDiff(field=name)
    rows: list[dict[str, Any]] = []
    pending_delete: list[str] = []

    old_no = new_no = 0  # 1-based line numbers of the last line seen on each side

    def flush_deletes() -> None:
        nonlocal old_no
        for line in pending_delete:
            old_no += 1
            rows.append({"op": "delete", "old": line, "old_no": old_no})
        pending_delete.clear()

    for op, chunk in _tokens_diff(before, after, LINE):
        lines = LINE.findall(chunk)
        if op == 0:
            flush_deletes()
            for line in lines:
                old_no += 1
                new_no += 1
                rows.append(
                    {"op": "equal", "old": line, "new": line, "old_no": old_no, "new_no": new_no}
                )
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
                            "words": words_diff(old, line),
                            "old_no": old_no,
                            "new_no": new_no,
                        }
                    )
                else:
                    rows.append({"op": "insert", "new": line, "new_no": new_no})
    flush_deletes()
    if limit is not None and len(rows) > limit:
        result.more = len(rows) - limit
        rows = rows[:limit]
    result.rows = rows
    return result


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


def messages_align(old: list[Message], new: list[Message]) -> list[tuple[int | None, int | None]]:
    """Pair the messages of two versions: identical messages by a sequence diff, then the
    deleted and inserted ones in between by position (an edited message), the rest unpaired.
    So inserting a message at the top shows one added message, not every message changed."""
    table: dict[tuple[str, str], str] = {}

    def encode(messages: list[Message]) -> str:
        return "".join(
            table.setdefault((m["role"], m["content"]), chr(0xE000 + len(table))) for m in messages
        )

    pairs: list[tuple[int | None, int | None]] = []
    deleted: list[int] = []
    i = j = 0
    for op, chunk in _dmp().diff_main(encode(old), encode(new), False):
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


def content_diff(
    before: VersionContent, after: VersionContent, *, limit: int | None = DEFAULT_ROW_LIMIT
) -> dict[str, Any]:
    """The whole diff of two contents: text diffs per text field plus a change list."""
    texts = [text_diff("system", before["system"], after["system"], limit=limit)]
    changes: list[dict[str, Any]] = []
    for key in ("provider", "model"):
        _changes(key, before[key], after[key], changes)
    for old_index, new_index in messages_align(before["messages"], after["messages"]):
        # A message missing on one side diffs as an empty text with no role.
        old = before["messages"][old_index] if old_index is not None else None
        new = after["messages"][new_index] if new_index is not None else None
        # Name a message by its place in the newer version, or the older one if it was removed.
        name = f"messages.{new_index if new_index is not None else old_index}"
        diff = text_diff(
            f"{name}.content",
            old["content"] if old else "",
            new["content"] if new else "",
            limit=limit,
        )
        diff.role_before = old["role"] if old else None
        diff.role_after = new["role"] if new else None
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


def text_diff_as_json(diff: TextDiff) -> dict[str, Any]:
    return {
        "field": diff.field,
        "role_before": diff.role_before,
        "role_after": diff.role_after,
        "added": diff.added,
        "removed": diff.removed,
        "truncated": bool(diff.more),
        "more": diff.more,
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


PAGE_ROW_BUDGET = 2000  # shown rows per text before the rest of a diff is folded too


def diff_blocks(
    rows: list[dict[str, Any]],
    *,
    start: int = 0,
    end: int | None = None,
    budget: int = PAGE_ROW_BUDGET,
) -> list[DiffBlock]:
    """The blocks of a page: unchanged runs folded, and once `budget` rows are shown, the rest
    of the diff (changes included) folded into one block that loads on demand."""
    blocks = diff_fold(rows, start=start, end=end, lead=0, trail=0)
    out: list[DiffBlock] = []
    shown = 0
    for k, block in enumerate(blocks):
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


def split_pairs(
    block: DiffBlock,
) -> list[tuple[int, dict[str, Any] | None, dict[str, Any] | None, bool]]:
    """Side-by-side rows of one shown block: (index, old side, new side, starts a change).
    Deleted and inserted lines of a change run are paired line by line."""
    out: list[tuple[int, dict[str, Any] | None, dict[str, Any] | None, bool]] = []
    for index, row, starts in block.numbered:
        op = row["op"]
        if op == "equal":
            out.append((index, row, row, starts))
        elif op == "change":
            out.append((index, row, row, starts))
        elif op == "delete":
            out.append((index, row, None, starts))
        else:
            out.append((index, None, row, starts))
    return out
