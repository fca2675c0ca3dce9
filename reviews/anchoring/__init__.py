"""Re-anchor review annotations on a new revision of a design document (docs/design.md, Invariants).

A passage is identified by a W3C TextQuoteSelector (exact, prefix, suffix) and a
TextPositionSelector (start/end: Python ``str`` offsets into the old Markdown source). For a new
revision we decide where it is now, in the order the design asks for:

1. map the old span through the revision diff: an untouched span whose context still checks
   out lands as ``exact``, whatever text was added or removed around it (its offsets shift
   with them); the same words found anywhere else are ``moved``;
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

from collections.abc import Sequence

from .base import SELECTOR_CONTEXT, Anchor, Diff, Selector, Status
from .blocks import RevisionPair
from .locate import quote_find, selector_locate
from .revdiff import anchor_diff_compute
from .text import Headings, text_similarity

# The one similarity measure of the engine (Dice over a semantic diff), for callers that judge
# a landed passage against a reference the way the engine judges a quote.
quote_similarity = text_similarity


def selector_from_position(
    *, text: str, start: int, end: int, context: int = SELECTOR_CONTEXT
) -> Selector:
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
        heading_path=Headings(text).path_at(start),
    )


def anchor_locate(
    *, selector: Selector, old_text: str, new_text: str, diffs: Diff | None = None
) -> Anchor:
    """Re-anchor one annotation from ``old_text`` onto ``new_text``.

    Guarantees: ``exact``/``moved`` anchors satisfy ``new_text[start:end] == selector.exact``
    (score 1.0), ``exact`` also sits where the revision diff maps the old span (the passage
    the diff keeps, offsets shifted by the edits before it; the old offsets when the stored
    span is not the quote); ``fuzzy`` anchors passed the minimum
    similarity for the quote and its context (score = quote similarity in (0, 1)); a passage
    kept unchanged elsewhere in the old text never captures the annotation. Anything else is
    ``orphaned``. ``diffs`` may be a shared ``anchor_diff_compute`` result for the same texts.
    """
    revision = RevisionPair(old_text, new_text, diffs)
    return selector_locate(selector, revision)


def anchors_locate(
    *,
    selectors: Sequence[Selector],
    old_text: str,
    new_text: str,
    diffs: Diff | None = None,
) -> list[Anchor]:
    """Re-anchor many annotations, computing the revision diff (and the folded texts) once;
    same guarantees as ``anchor_locate``, results in the order of ``selectors``."""
    revision = RevisionPair(old_text, new_text, diffs)
    return [selector_locate(selector, revision) for selector in selectors]


__all__ = [
    "Anchor",
    "Selector",
    "Status",
    "anchor_diff_compute",
    "anchor_locate",
    "anchors_locate",
    "quote_find",
    "selector_from_position",
]
