"""Limits on client JSON, applied everywhere JSON comes in (API bodies, editor fields, stored
schemas), so nothing the app accepts can later fail to render, export or store.

- Depth: a stored JSON schema (a tool's `input_schema`, a `response_format` schema) nests at
  most `JSON_MAX_DEPTH` levels. A request body may nest `JSON_ENVELOPE_DEPTH` levels more (the
  envelope around a schema), so any acceptable schema fits in a body and a 5,000-deep body is a
  clear 400 instead of Python's recursion limit.
- Text: no NUL (PostgreSQL cannot store it) and no lone surrogate (not UTF-8) in any key or
  string, on every database alike.
"""

import json
from typing import Any

JSON_MAX_DEPTH = 32
JSON_ENVELOPE_DEPTH = 8


class JsonRefused(ValueError):
    """Client JSON that breaks a limit; the message says which, for the `detail`."""


def json_depth_exceeds(value: Any, limit: int) -> bool:
    """True if `value` nests containers deeper than `limit` (iterative: no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = list(item.values())
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def _bad_text(text: str) -> str | None:
    if "\x00" in text:
        return "must not contain NUL characters"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "must not contain lone surrogates (not valid UTF-8)"
    return None


def json_text_problem(value: Any) -> str | None:
    """Why some key or string inside `value` cannot be stored, or None."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            problem = _bad_text(item)
            if problem:
                return problem
        elif isinstance(item, dict):
            for key, child in item.items():
                if isinstance(key, str) and (problem := _bad_text(key)):
                    return problem
                stack.append(child)
        elif isinstance(item, list):
            stack.extend(item)
    return None


def json_surrogate_path(value: Any) -> str | None:
    """The dotted path (`access`, `messages.0.content`) of the first key or string inside
    `value` holding a lone surrogate (`"\\ud800"` is valid JSON but not UTF-8), or None."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            if _has_surrogate(item):
                return path or "body"
        elif isinstance(item, dict):
            for key, child in item.items():
                sub = f"{path}.{key}" if path else str(key)
                if isinstance(key, str) and _has_surrogate(key):
                    return sub.encode("utf-8", "backslashreplace").decode("ascii")
                stack.append((child, sub))
        elif isinstance(item, list):
            stack.extend((child, f"{path}.{i}" if path else str(i)) for i, child in enumerate(item))
    return None


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def json_loads_limited(text: str | bytes, *, limit: int = JSON_MAX_DEPTH) -> Any:
    """`json.loads` that refuses nesting deeper than `limit` with JsonRefused, never a
    RecursionError. Raises json.JSONDecodeError for text that is not JSON."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise JsonRefused(f"JSON nested deeper than {limit} levels.") from None
    if json_depth_exceeds(value, limit):
        raise JsonRefused(f"JSON nested deeper than {limit} levels.")
    return value
