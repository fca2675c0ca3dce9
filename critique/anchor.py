"""Anchor a drafted quote to its passage in the reviewed revision, or leave it unanchored.

A model copies passages from the Markdown source it was given, but not always byte for byte:
line breaks become spaces, backticks and emphasis marks go missing, straight quotes turn curly.
Both the revision's text and the quote are folded the same way (whitespace runs to one space,
those marks dropped) and the review desk's anchoring engine (`reviews.anchoring.quote_find`)
looks for the folded quote in the folded text, choosing among occurrences by the prefix and
suffix. The passage found maps back to offsets in the revision, and its selector is built
from the revision's own text (`selector_from_position`).

What it never does: attach a quote to a passage that only resembles it. A quote that occurs
nowhere (even folded) is unanchored, and so is one that occurs several times with no context
to tell the occurrences apart. An unanchored suggestion can still be accepted, as a comment on
the whole document, or edited onto a passage first.
"""

from __future__ import annotations

from dataclasses import dataclass

from reviews.anchoring import Selector, quote_find, selector_from_position

_DROPPED = frozenset("`*_")
_SAME = {"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": "-"}
CONTEXT = 32  # the selector context stored with an anchored suggestion


@dataclass(frozen=True)
class Folded:
    """A text folded for matching, with each folded character's offset in the original."""

    text: str
    offsets: list[int]


def fold(text: str) -> Folded:
    chars: list[str] = []
    offsets: list[int] = []
    space = False
    for index, char in enumerate(text):
        if char.isspace():
            space = bool(chars)
            continue
        if char in _DROPPED:
            continue
        if space:
            chars.append(" ")
            offsets.append(index - 1)
            space = False
        chars.append(_SAME.get(char, char))
        offsets.append(index)
    return Folded(text="".join(chars), offsets=offsets)


def quote_anchor(
    *, text: str, exact: str, prefix: str = "", suffix: str = "", folded: Folded | None = None
) -> Selector | None:
    """The selector of the passage `exact` quotes in `text`, or None (unanchored)."""
    if not exact.strip():
        return None
    if text.count(exact) == 1 or (exact in text and (prefix or suffix)):
        at = quote_find(text=text, exact=exact, prefix=prefix, suffix=suffix)
        if at is not None:
            return selector_from_position(text=text, start=at, end=at + len(exact), context=CONTEXT)
    folded = folded or fold(text)
    needle = fold(exact).text
    if not needle:
        return None
    count = folded.text.count(needle)
    if count == 0 or (count > 1 and not (prefix or suffix)):
        return None
    at = quote_find(
        text=folded.text, exact=needle, prefix=fold(prefix).text, suffix=fold(suffix).text
    )
    if at is None:
        return None
    start = folded.offsets[at]
    end = folded.offsets[at + len(needle) - 1] + 1
    return selector_from_position(text=text, start=start, end=end, context=CONTEXT)


def pinned_constraint_index(*, constraints: list[str], given: str, kind: str) -> int | None:
    """Which pinned constraint a drafted `constraint` names (a model copies it loosely): the
    one it equals once folded; for a `constraint` annotation on a document with a single
    pinned constraint, that one; else None."""
    if given.strip():
        wanted = fold(given.strip().lstrip("-•").strip()).text
        for index, pinned in enumerate(constraints):
            if fold(pinned).text == wanted:
                return index
    if kind == "constraint" and len(constraints) == 1:
        return 0
    return None
