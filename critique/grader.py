"""The `answer-key` grader of evaluations: a critique scored like a human mock review.

Registered with the evaluations app from `CritiqueConfig.ready()` (evals does not import this
app). A cell's output is parsed as the critique JSON, each annotation's quote anchored in the
row's document with the same code as a draft's suggestions, and the annotations scored against
the document's answer key by the review desk's scorer (`reviews.practice.scoring`). The score is
the scorecard's (planted items' credit ÷ items, 0–1); the reason is the scorecard in counts only
— found, missed, constraint traps fallen into, led with the worst, already-considered noticed —
so an evaluation never shows the key's passages or explanations. Even the counts tell of the
key (its item count, what was missed), so the grade carries the document as its `secret`, and
evaluations show its reason only to the document's key readers, the score to everyone
(`answer_key_reason_visible`; docs/design.md, Answer keys stay secret until submit). The row's
document is recognised by the SHA-256 of its text, so it must be a practice document's revision
exactly (the practice test set's rows are).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from common.auth import Viewer
from evals.exceptions import EvalInvalid
from evals.graders import CellOutcome, Grade, GraderSpec
from reviews.practice.scoring import Note, Scorecard
from reviews.practice.selectors import (
    answer_key_readable,
    practice_notes_score,
    practice_revision_for_text_sha,
)

from .anchor import fold, pinned_constraint_index, quote_anchor
from .parsing import annotations_parse

TYPE = "answer-key"
DEFAULT_THRESHOLD = 0.5
DOC_PREFIX = "practice-doc:"


def answer_key_reason_visible(reader: Viewer, secret: str) -> bool:
    """A grade's reason (the scorecard in counts) only to a reader of the document's key: the
    reviewer of a submitted review of it. Everyone else sees the score alone (issue #31: the
    counts told a probing author the key's item count, missed areas and worst risk)."""
    if not secret.startswith(DOC_PREFIX) or not secret[len(DOC_PREFIX) :].isdigit():
        return False
    return answer_key_readable(user=reader, doc_id=int(secret[len(DOC_PREFIX) :]))


def answer_key_parse(spec: Mapping[str, Any], where: str) -> GraderSpec:
    """`{"type": "answer-key", "threshold"?: 0..1}` (a cell passes at or above it)."""
    threshold = spec.get("threshold", DEFAULT_THRESHOLD)
    if isinstance(threshold, bool) or not isinstance(threshold, int | float):
        raise EvalInvalid(f"{where}.threshold must be a number.", field=f"{where}.threshold")
    if not 0 <= threshold <= 1:
        raise EvalInvalid(f"{where}.threshold must be between 0 and 1.", field=f"{where}.threshold")
    return GraderSpec(type=TYPE, options={"threshold": float(threshold)})


def _fail(reason: str) -> Grade:
    return Grade(TYPE, False, 0.0, reason)


def scorecard_reason(title: str, card: Scorecard, unanchored: int) -> str:
    """The scorecard in counts (no item of the key is named)."""
    missed = card.total - card.found - card.partial
    traps = sum(1 for item in card.items if item.trapped_by)
    considered = sum(1 for item in card.items if item.kind == "already-considered")
    parts = [
        f"{title}: found {card.found} of {card.total}"
        + (f" (+{card.partial} under another area)" if card.partial else ""),
        f"missed {missed}",
        f"constraint traps fallen into {traps}",
        f"led with the worst: {'yes' if card.led_with_worst else 'no'}",
        f"already-considered noticed {card.noticed_already_considered} of {considered}",
        f"score {card.score:.2f}",
    ]
    reason = "; ".join(parts) + "."
    if unanchored:
        reason += f" {unanchored} quote(s) matched no passage of the document."
    return reason


def answer_key_grade(spec: GraderSpec, outcome: CellOutcome) -> Grade:
    document = outcome.variables.get("document") or ""
    if not document:
        return _fail(
            "No document: the answer-key grader needs the version to declare the `document`"
            " variable and the row to fill it (the practice documents test set does)."
        )
    revision = practice_revision_for_text_sha(
        body_sha=hashlib.sha256(document.encode("utf-8")).hexdigest()
    )
    if revision is None:
        return _fail("The row's document is not a practice document with an answer key.")
    parsed = annotations_parse(outcome.output)
    if not parsed.found_array:
        return _fail("The output is not the critique JSON (no annotations array).")
    folded = fold(document)
    constraints = list(revision.doc.constraints)
    notes = []
    unanchored = 0
    for item in parsed.items:
        if item is None:
            continue
        selector = quote_anchor(text=document, exact=item.quote, folded=folded)
        if item.quote.strip() and selector is None:
            unanchored += 1
        index = pinned_constraint_index(
            constraints=constraints, given=item.constraint, kind=item.kind
        )
        notes.append(
            Note(
                id=item.position + 1,
                kind=item.kind,
                area=item.area,
                severity=item.severity,
                span=(selector.start, selector.end) if selector else None,
                rank=item.rank,
                body=item.body,
                tradeoff=item.tradeoff,
                constraint=constraints[index] if index is not None else "",
            )
        )
    scored = practice_notes_score(revision=revision, notes=tuple(notes))
    if scored is None:
        return _fail("The row's document has no answer key.")
    card = scored.scorecard
    threshold = float(spec.options.get("threshold", DEFAULT_THRESHOLD))
    return Grade(
        TYPE,
        card.score >= threshold,
        round(card.score, 4),
        scorecard_reason(scored.doc.title, card, unanchored),
        secret=f"{DOC_PREFIX}{revision.doc_id}",
    )
