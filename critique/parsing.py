"""Read the annotations out of a critique reply, also while it is still streaming.

The reply is the JSON object of `starter.CRITIQUE_SCHEMA` (`{"annotations": [{...}, ...]}`),
or a bare array of the same objects, possibly after some prose or inside a code fence. Each
array element is decoded as soon as its closing brace has arrived, so suggestions appear one by
one while the model writes; an element that is not a valid annotation is skipped (it still
takes its position, so positions never shift as the reply grows).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from reviews.models import Annotation, Area

_DECODER = json.JSONDecoder()
_ARRAY_START = re.compile(r'"annotations"\s*:\s*\[')
TEXT_MAX_CHARS = 10_000
QUOTE_MAX_CHARS = 10_000
RANK_MAX = 1000


@dataclass(frozen=True)
class Drafted:
    """One annotation the model wrote, checked and trimmed."""

    position: int
    quote: str
    area: str
    kind: str
    severity: str
    body: str
    tradeoff: str
    constraint: str
    rank: int | None


@dataclass(frozen=True)
class Parsed:
    """The elements decoded from position `start` on; `complete` once the array has closed."""

    items: list[Drafted | None]  # None: an element that is not a valid annotation
    complete: bool
    found_array: bool


def _text(value: Any, limit: int) -> str:
    return value.strip()[:limit] if isinstance(value, str) else ""


def drafted_check(position: int, raw: Any) -> Drafted | None:
    """An element as a `Drafted`, or None when a field is missing or out of its choices."""
    if not isinstance(raw, dict):
        return None
    area, kind, severity = raw.get("area"), raw.get("kind"), raw.get("severity")
    if area not in Area.values or kind not in Annotation.Kind.values:
        return None
    if severity not in Annotation.Severity.values:
        return None
    body = _text(raw.get("body"), TEXT_MAX_CHARS)
    if not body:
        return None
    quote = raw.get("quote")
    rank = raw.get("rank")
    if isinstance(rank, bool) or not isinstance(rank, int) or not 1 <= rank <= RANK_MAX:
        rank = None
    return Drafted(
        position=position,
        quote=quote[:QUOTE_MAX_CHARS] if isinstance(quote, str) else "",
        area=area,
        kind=kind,
        severity=severity,
        body=body,
        tradeoff=_text(raw.get("tradeoff"), TEXT_MAX_CHARS),
        constraint=_text(raw.get("constraint"), TEXT_MAX_CHARS),
        rank=rank if kind == Annotation.Kind.RISK else None,
    )


def _array_start(text: str) -> int | None:
    """Offset just after the annotations array's `[`, or None if it has not arrived."""
    match = _ARRAY_START.search(text)
    if match is not None:
        return match.end()
    stripped = text.lstrip()
    if stripped.startswith("```"):
        stripped = stripped.split("\n", 1)[1].lstrip() if "\n" in stripped else ""
    if stripped.startswith("["):
        return text.index("[") + 1
    return None


def annotations_parse(text: str, *, start: int = 0) -> Parsed:
    """Decode the array's elements from index `start` on, as far as the text goes."""
    at = _array_start(text)
    if at is None:
        return Parsed(items=[], complete=False, found_array=False)
    items: list[Drafted | None] = []
    index = 0
    length = len(text)
    while True:
        while at < length and text[at] in " \t\r\n,":
            at += 1
        if at >= length:
            return Parsed(items=items, complete=False, found_array=True)
        if text[at] == "]":
            return Parsed(items=items, complete=True, found_array=True)
        try:
            value, end = _DECODER.raw_decode(text, at)
        except json.JSONDecodeError:
            return Parsed(items=items, complete=False, found_array=True)
        if index >= start:
            items.append(drafted_check(index, value))
        index += 1
        at = end
