"""Diffs between two versions' contents, computed on the server.

Texts: a line-level diff (diff-match-patch in line mode); a deleted line followed by an inserted
one is shown as a changed pair with a word-level diff inside. Structured fields (provider, model,
params, tools, response format, variables): a field-by-field change list.
Long text diffs are cut at `limit` rows; `more` says how many rows were left out.
"""

import dataclasses
import re
from dataclasses import dataclass
from typing import Any

from diff_match_patch import diff_match_patch

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


def text_diff(name: str, before: str, after: str, *, limit: int = DEFAULT_ROW_LIMIT) -> TextDiff:
    """Rows: {"op": "equal"|"insert"|"delete"|"change", "old": line, "new": line, "words": [...]}"""
    result = TextDiff(field=name)
    rows: list[dict[str, Any]] = []
    pending_delete: list[str] = []

    def flush_deletes() -> None:
        for line in pending_delete:
            rows.append({"op": "delete", "old": line})
        pending_delete.clear()

    for op, chunk in _tokens_diff(before, after, LINE):
        lines = LINE.findall(chunk)
        if op == 0:
            flush_deletes()
            rows.extend({"op": "equal", "old": line, "new": line} for line in lines)
        elif op == -1:
            result.removed += len(lines)
            pending_delete.extend(lines)
        else:
            result.added += len(lines)
            for line in lines:
                if pending_delete:
                    old = pending_delete.pop(0)
                    rows.append(
                        {"op": "change", "old": old, "new": line, "words": words_diff(old, line)}
                    )
                else:
                    rows.append({"op": "insert", "new": line})
    flush_deletes()
    if len(rows) > limit:
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


def _tools_by_name(tools: list[dict[str, Any]]) -> dict[str, Any]:
    return {tool["name"]: tool for tool in tools}


def messages_align(
    old: list[dict[str, Any]], new: list[dict[str, Any]]
) -> list[tuple[int | None, int | None]]:
    """Pair the messages of two versions: identical messages by a sequence diff, then the
    deleted and inserted ones in between by position (an edited message), the rest unpaired.
    So inserting a message at the top shows one added message, not every message changed."""
    table: dict[tuple[str, str], str] = {}

    def encode(messages: list[dict[str, Any]]) -> str:
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
    before: dict[str, Any], after: dict[str, Any], *, limit: int = DEFAULT_ROW_LIMIT
) -> dict[str, Any]:
    """The whole diff of two contents: text diffs per text field plus a change list."""
    texts = [text_diff("system", before["system"], after["system"], limit=limit)]
    changes: list[dict[str, Any]] = []
    for key in ("provider", "model"):
        _changes(key, before[key], after[key], changes)
    empty: dict[str, Any] = {"role": MISSING, "content": ""}
    for old_index, new_index in messages_align(before["messages"], after["messages"]):
        old = before["messages"][old_index] if old_index is not None else empty
        new = after["messages"][new_index] if new_index is not None else empty
        # Name a message by its place in the newer version, or the older one if it was removed.
        name = f"messages.{new_index if new_index is not None else old_index}"
        diff = text_diff(f"{name}.content", old["content"], new["content"], limit=limit)
        diff.role_before = None if old["role"] is MISSING else old["role"]
        diff.role_after = None if new["role"] is MISSING else new["role"]
        texts.append(diff)
        _changes(f"{name}.role", old["role"], new["role"], changes)
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
