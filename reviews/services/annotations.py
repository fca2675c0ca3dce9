"""Annotations: where they point, what they say, their rank and issue status, re-attaching.

Content and ranks change on a draft, by its reviewer; after submission the annotation's author
may still edit its content (the earlier text is kept), and the issue status may be changed by
the document's author or the annotation's author.
"""

import logging
import re
from typing import Any, TypedDict

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from common.exceptions import text_input

from ..anchoring import quote_find, selector_from_position
from ..exceptions import Forbidden, RankTaken, ReviewLocked, ReviewsError, SelectorInvalid
from ..models import (
    Annotation,
    AnnotationAnchor,
    Area,
    BodyEdit,
    DesignDoc,
    DocRevision,
    Review,
)
from ..selectors import revision_text
from .anchors import ANCHOR_CONTEXT
from .documents import reanchor_on_commit
from .reviews import review_lock_for_edit

logger = logging.getLogger(__name__)

QUOTE_MAX_CHARS = 10_000
TEXT_MAX_CHARS = 10_000
RANK_MAX = 1000
CONSTRAINT_INDEX = re.compile(r"[0-9]{1,6}")


def _int_or_error(value: object, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SelectorInvalid(f"{field}: must be a whole number.", field=field)
    return value


def selector_resolve(
    *,
    text: str,
    exact: str | None,
    prefix: str = "",
    suffix: str = "",
    start: int | None = None,
    end: int | None = None,
) -> tuple[int, int] | None:
    """The span `[start, end)` of the revision's Markdown that an annotation is about, or None
    for the whole document.

    A position must lie in the text and, with a quote, hold exactly that quote. A quote alone
    must occur in the text; when it occurs more than once, the prefix/suffix pick the
    occurrence, and with neither it is ambiguous (400, asking for a position).
    """
    has_position = start is not None or end is not None
    if has_position:
        if start is None or end is None:
            raise SelectorInvalid("position: give both start and end.", field="position")
        start = _int_or_error(start, "position.start")
        end = _int_or_error(end, "position.end")
        if not 0 <= start < end <= len(text):
            raise SelectorInvalid(
                f"position: {start}-{end} is out of range (the revision has {len(text)} "
                "characters; start < end).",
                field="position",
            )
        if exact is not None and text[start:end] != exact:
            raise SelectorInvalid(
                "quote: the text at the given position is not the quote.", field="quote"
            )
        if not text[start:end].strip():
            raise SelectorInvalid("position: the passage is only whitespace.", field="position")
        return start, end
    if exact is None:
        return None
    if not isinstance(exact, str) or not exact.strip():
        raise SelectorInvalid("quote.exact: must not be empty.", field="quote")
    if len(exact) > QUOTE_MAX_CHARS:
        raise SelectorInvalid(f"quote.exact: at most {QUOTE_MAX_CHARS} characters.", field="quote")
    count = text.count(exact)
    if count == 0:
        raise SelectorInvalid("quote: the quote does not occur in this revision.", field="quote")
    if count > 1 and not (prefix or suffix):
        raise SelectorInvalid(
            f"quote: the quote occurs {count} times in this revision; give a prefix or suffix, "
            "or a position.",
            field="quote",
        )
    found = quote_find(text=text, exact=exact, prefix=prefix or "", suffix=suffix or "")
    if found is None:  # count > 0 says it occurs; quote_find agrees unless it changed
        raise SelectorInvalid("quote: the quote does not occur in this revision.", field="quote")
    return found, found + len(exact)


def _constraint_match(doc: DesignDoc, constraint: object) -> str:
    """The pinned constraint `constraint` refers to: its text, or its index (0-based)."""
    constraints: list[str] = doc.constraints  # a JSON list of texts (DesignDoc.constraints)
    if not constraints:
        raise ReviewsError(
            "constraint: this document has no pinned constraints.", field="constraint"
        )
    if isinstance(constraint, int) and not isinstance(constraint, bool):
        if 0 <= constraint < len(constraints):
            return constraints[constraint]
    elif isinstance(constraint, str):
        wanted = " ".join(constraint.split())
        if wanted in constraints:
            return wanted
        # ASCII digits only: "²".isdigit() is true but int() refuses it.
        if CONSTRAINT_INDEX.fullmatch(wanted) and int(wanted) < len(constraints):
            return constraints[int(wanted)]
    raise ReviewsError(
        "constraint: must be one of the document's pinned constraints.", field="constraint"
    )


def _choice(value: object, choices: list[str], field: str) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ReviewsError(f"{field}: must be one of {', '.join(choices)}.", field=field)
    return value


def _text(value: object, field: str, *, required: bool) -> str:
    return text_input(value, field, max_chars=TEXT_MAX_CHARS, required=required, error=ReviewsError)


def _rank_check(review: Review, kind: str, rank: object, *, exclude: int | None = None) -> None:
    if rank is None:
        return
    if kind != Annotation.Kind.RISK:
        raise ReviewsError("rank: only risks are ranked.", field="rank")
    if isinstance(rank, bool) or not isinstance(rank, int) or not 1 <= rank <= RANK_MAX:
        raise ReviewsError(f"rank: a whole number from 1 to {RANK_MAX}.", field="rank")
    holders = Annotation.objects.filter(review=review, rank=rank)
    if exclude is not None:
        holders = holders.exclude(pk=exclude)
    holder = holders.first()
    if holder is not None:
        raise RankTaken(
            f"rank: {rank} is already taken by annotation {holder.pk}; reorder the risks "
            f"instead (POST /api/v1/reviews/{review.pk}/ranking/).",
            field="rank",
        )


def _content_validate(doc: DesignDoc, data: dict[str, Any]) -> dict[str, Any]:
    """The annotation's content fields, validated together (kind decides what is required)."""
    kind = _choice(data.get("kind"), Annotation.Kind.values, "kind")
    cleaned = {
        "area": _choice(data.get("area"), Area.values, "area"),
        "kind": kind,
        "severity": _choice(data.get("severity"), Annotation.Severity.values, "severity"),
        "body": _text(data.get("body"), "body", required=True),
        "tradeoff": _text(
            data.get("tradeoff"), "tradeoff", required=kind == Annotation.Kind.ALTERNATIVE
        ),
        "constraint": "",
    }
    if kind == Annotation.Kind.ALTERNATIVE and not cleaned["tradeoff"]:
        raise ReviewsError("tradeoff: an alternative needs its tradeoff.", field="tradeoff")
    constraint = data.get("constraint")
    if kind == Annotation.Kind.CONSTRAINT and constraint in (None, ""):
        raise ReviewsError(
            "constraint: a constraint annotation must name one of the document's pinned "
            "constraints.",
            field="constraint",
        )
    if constraint not in (None, ""):
        cleaned["constraint"] = _constraint_match(doc, constraint)
    return cleaned


def _next_rank(review: Review) -> int:
    return (Annotation.objects.filter(review=review).aggregate(r=Max("rank"))["r"] or 0) + 1


_SEVERITY_INDEX = {value: index for index, value in enumerate(Annotation.Severity.values)}


def _rank_by_severity(review: Review, severity: str, *, exclude: int | None = None) -> int:
    """The rank a new risk takes so the list stays worst first (issue 33: a new blocker landed
    below ranked minors): just before the first ranked risk of a lower severity, the risks from
    there moving down one; last when none is lower. The caller holds the review's lock."""
    worse = _SEVERITY_INDEX.get(severity, len(_SEVERITY_INDEX))
    rows = Annotation.objects.filter(review=review, rank__isnull=False)
    if exclude is not None:
        rows = rows.exclude(pk=exclude)
    ranked = [
        (pk, rank, sev)
        for pk, rank, sev in rows.order_by("rank").values_list("pk", "rank", "severity")
        if rank is not None
    ]
    place = next((rank for _, rank, sev in ranked if _SEVERITY_INDEX.get(sev, 99) > worse), None)
    if place is None:
        return _next_rank(review)
    below = [(pk, rank) for pk, rank, _ in ranked if rank >= place]
    # Clear first, then renumber one by one: the unique (review, rank) holds after each statement.
    Annotation.objects.filter(pk__in=[pk for pk, _ in below]).update(rank=None)
    for pk, rank in below:
        Annotation.objects.filter(pk=pk).update(rank=rank + 1)
    return place


@transaction.atomic
def annotation_create(
    *,
    actor: User,
    review: Review,
    area: str,
    kind: str,
    severity: str,
    body: str,
    exact: str | None = None,
    prefix: str = "",
    suffix: str = "",
    start: int | None = None,
    end: int | None = None,
    tradeoff: str = "",
    constraint: str | int | None = None,
    rank: int | None = None,
) -> Annotation:
    """Annotate a passage of the reviewed revision (or, with no quote and no position, the
    whole document). Reviewer only, draft only.

    The stored selector is derived from the revision's text, never taken from the client:
    exact = text[start:end], prefix/suffix = ANCHOR_CONTEXT characters around it, and the
    heading path. A risk without a rank takes its place by severity, worst first (before the
    first ranked risk of a lower severity, else last). The annotation's own revision gets an
    `exact` anchor now; later revisions, if any, are re-anchored after commit.
    """
    review = review_lock_for_edit(actor, review)
    revision = DocRevision.objects.select_related("doc").get(pk=review.revision_id)
    content = _content_validate(
        revision.doc,
        {
            "area": area,
            "kind": kind,
            "severity": severity,
            "body": body,
            "tradeoff": tradeoff,
            "constraint": constraint,
        },
    )
    _rank_check(review, content["kind"], rank)
    text = revision_text(revision=revision)
    span = selector_resolve(
        text=text, exact=exact, prefix=prefix, suffix=suffix, start=start, end=end
    )
    selector = None
    if span is not None:
        selector = selector_from_position(
            text=text, start=span[0], end=span[1], context=ANCHOR_CONTEXT
        )
    if content["kind"] == Annotation.Kind.RISK and rank is None:
        rank = _rank_by_severity(review, content["severity"])
    annotation = Annotation.objects.create(
        review=review,
        revision=revision,
        author=actor,
        whole_document=selector is None,
        exact=selector.exact if selector else "",
        prefix=selector.prefix if selector else "",
        suffix=selector.suffix if selector else "",
        start=selector.start if selector else None,
        end=selector.end if selector else None,
        heading_path=list(selector.heading_path) if selector else [],
        rank=rank,
        **content,
    )
    AnnotationAnchor.objects.create(
        annotation=annotation,
        revision=revision,
        status=AnnotationAnchor.Status.EXACT,
        start=annotation.start,
        end=annotation.end,
        score=1.0,
    )
    latest = DocRevision.objects.filter(doc_id=revision.doc_id).order_by("-number").first()
    if latest is not None and latest.pk != revision.pk:
        reanchor_on_commit(latest.pk)
    logger.info(
        "annotation.created", extra={"annotation_id": annotation.pk, "review_id": review.pk}
    )
    return annotation


CONTENT_FIELDS = ("area", "kind", "severity", "body", "tradeoff", "constraint")


class AnnotationChanges(TypedDict, total=False):
    """What `annotation_update` may change; every key optional. Values are validated by the
    service (the HTML form sends strings), so the types say what a valid change holds."""

    area: str
    kind: str
    severity: str
    body: str
    tradeoff: str
    constraint: str | int | None
    rank: int | None
    status: str


@transaction.atomic
def annotation_update(
    *, actor: User, annotation: Annotation, changes: AnnotationChanges
) -> Annotation:
    """Change an annotation. `changes` may hold `status` and, on a draft, content fields
    (area, kind, severity, body, tradeoff, constraint) and `rank`.

    The issue status may be changed by the document's author or the annotation's author, also
    after submission. Content: by the reviewer of a draft; after submission by the annotation's
    author only, each change keeping the earlier content as a BodyEdit and setting
    `edited_at` (the rank is then fixed). A rank already held by
    another risk is refused (RankTaken) — reorder with `review_risks_rank`. All or nothing.
    """
    unknown = set(changes) - {*CONTENT_FIELDS, "rank", "status"}
    if unknown:
        field = sorted(unknown)[0]
        raise ReviewsError(f"{field}: cannot be changed.", field=field)
    annotation = (
        Annotation.objects.select_for_update()
        .select_related("review", "revision__doc")
        .get(pk=annotation.pk)
    )
    edits: dict[str, Any] = {k: v for k, v in changes.items() if k != "status"}
    before = {field: getattr(annotation, field) for field in CONTENT_FIELDS}
    if edits:
        review = _edit_authorize(actor, annotation, edits)
        _content_apply(annotation, review, edits)
    if "status" in changes:
        _status_apply(actor, annotation, changes["status"])
    if annotation.review.status == Review.Status.SUBMITTED and edits:
        _earlier_content_keep(annotation, before)
    annotation.save()
    logger.info(
        "annotation.updated",
        extra={"annotation_id": annotation.pk, "fields": sorted(changes), "actor_id": actor.pk},
    )
    return annotation


def _edit_authorize(actor: User, annotation: Annotation, edits: dict[str, Any]) -> Review:
    """Who may change an annotation's content: the reviewer of a draft (the review locked for
    the edit, which is returned), or after submission the annotation's author, rank excepted."""
    review = annotation.review
    if review.status != Review.Status.SUBMITTED:
        return review_lock_for_edit(actor, review)
    # After submission the annotation's author may still correct what it says; the earlier
    # text is kept. Ranking is part of the submitted review and stays.
    if actor.pk != annotation.author_id:
        raise Forbidden("Only the annotation's author can edit it.")
    if "rank" in edits:
        raise ReviewLocked("rank: a submitted review's ranking cannot change.", field="rank")
    return review


def _content_apply(annotation: Annotation, review: Review, edits: dict[str, Any]) -> None:
    """Merge content edits into the annotation, validated together with what they keep, and
    settle its rank: a risk keeps its rank or takes its place by severity, anything else leaves
    the ranking."""
    merged = {field: getattr(annotation, field) for field in CONTENT_FIELDS}
    merged.update({k: v for k, v in edits.items() if k in CONTENT_FIELDS})
    if (
        "kind" in edits
        and merged["kind"] != Annotation.Kind.CONSTRAINT
        and "constraint" not in edits
    ):
        merged["constraint"] = ""
    content = _content_validate(annotation.revision.doc, merged)
    is_risk = content["kind"] == Annotation.Kind.RISK
    if "rank" in edits:
        rank = edits["rank"]
    elif not is_risk:
        rank = None  # no longer a risk: it leaves the ranking
    elif annotation.kind != Annotation.Kind.RISK:
        # A new risk takes its place by severity, worst first.
        rank = _rank_by_severity(review, content["severity"], exclude=annotation.pk)
    else:
        rank = annotation.rank
    _rank_check(review, content["kind"], rank, exclude=annotation.pk)
    for field, value in content.items():
        setattr(annotation, field, value)
    annotation.rank = rank


def _status_apply(actor: User, annotation: Annotation, value: object) -> None:
    """The issue status: the document's author or the annotation's author, at any time."""
    status = _choice(value, Annotation.Status.values, "status")
    if actor.pk not in (annotation.author_id, annotation.revision.doc.author_id):
        raise Forbidden(
            "Only the document's author or the annotation's author can change its status."
        )
    if status != annotation.status:
        annotation.status = status
        annotation.status_changed_by = actor
        annotation.status_changed_at = timezone.now()


def _earlier_content_keep(annotation: Annotation, before: dict[str, Any]) -> None:
    """A submitted annotation's content changed: keep what it said as a BodyEdit."""
    if all(getattr(annotation, field) == value for field, value in before.items()):
        return
    BodyEdit.objects.create(
        annotation=annotation,
        body=before["body"],
        fields={f: v for f, v in before.items() if f != "body"},
        written_at=annotation.edited_at or annotation.created_at,
    )
    annotation.edited_at = timezone.now()


@transaction.atomic
def review_risks_rank(*, actor: User, review: Review, order: list[int]) -> list[int]:
    """Rank the review's risks in `order` (annotation ids, worst first): ranks 1..n, atomically.

    `order` must list every risk of the review exactly once. Returns the ids in rank order.
    """
    review = review_lock_for_edit(actor, review)
    if not isinstance(order, list) or not all(
        isinstance(i, int) and not isinstance(i, bool) for i in order
    ):
        raise ReviewsError("order: a list of annotation ids.", field="order")
    risks = list(
        Annotation.objects.select_for_update().filter(review=review, kind=Annotation.Kind.RISK)
    )
    if len(order) != len(set(order)) or set(order) != {risk.pk for risk in risks}:
        raise ReviewsError(
            "order: must list every risk of this review exactly once.", field="order"
        )
    by_id = {risk.pk: risk for risk in risks}
    # Clear first: the unique (review, rank) constraint holds after every statement.
    Annotation.objects.filter(review=review, rank__isnull=False).update(rank=None)
    for position, annotation_id in enumerate(order, start=1):
        by_id[annotation_id].rank = position
    Annotation.objects.bulk_update(list(by_id.values()), ["rank"])
    return order


@transaction.atomic
def annotation_delete(*, actor: User, annotation: Annotation) -> None:
    """Delete an annotation of a draft (reviewer only); the remaining risks close ranks."""
    review = review_lock_for_edit(actor, annotation.review)
    annotation.delete()
    remaining = list(Annotation.objects.filter(review=review, rank__isnull=False).order_by("rank"))
    if any(risk.rank != index for index, risk in enumerate(remaining, start=1)):
        Annotation.objects.filter(review=review, rank__isnull=False).update(rank=None)
        for index, risk in enumerate(remaining, start=1):
            risk.rank = index
        Annotation.objects.bulk_update(remaining, ["rank"])


@transaction.atomic
def annotation_reattach(
    *,
    actor: User,
    annotation: Annotation,
    revision: DocRevision,
    start: int,
    end: int,
) -> AnnotationAnchor:
    """Attach an annotation by hand to `revision[start:end]` (typically an orphan).

    The annotation's author or the document's author may do this, also after submission: it
    says where the comment belongs in a newer text, not what the review said. The anchor is
    stored as `reattached` (score 1: the user's word) and `manual`; from then on that passage is
    what later revisions are compared with, and their computed anchors are recomputed.
    """
    annotation = Annotation.objects.select_related("revision__doc").get(pk=annotation.pk)
    doc = annotation.revision.doc
    if actor.pk not in (annotation.author_id, doc.author_id):
        raise Forbidden("Only the annotation's author or the document's author can re-attach it.")
    if annotation.whole_document:
        raise ReviewsError("This annotation is about the whole document.", field="annotation")
    if revision.doc_id != doc.pk:
        raise ReviewsError("revision: belongs to another document.", field="revision")
    if revision.number <= annotation.revision.number:
        raise ReviewsError(
            "revision: re-attach on a revision after the one the annotation was made on.",
            field="revision",
        )
    text = revision_text(revision=revision)
    span = selector_resolve(text=text, exact=None, start=start, end=end)
    if span is None:
        raise SelectorInvalid("position: required.", field="position")
    start, end = span
    status, score = AnnotationAnchor.Status.REATTACHED, 1.0
    anchor, _ = AnnotationAnchor.objects.update_or_create(
        annotation=annotation,
        revision=revision,
        defaults={"status": status, "start": start, "end": end, "score": score, "manual": True},
    )
    later = AnnotationAnchor.objects.filter(
        annotation=annotation, revision__doc=doc, revision__number__gt=revision.number, manual=False
    )
    if later.exists():
        later.delete()
        latest = DocRevision.objects.filter(doc=doc).order_by("-number").first()
        if latest is not None:  # always: `revision` itself is one
            reanchor_on_commit(latest.pk)
    logger.info(
        "annotation.reattached",
        extra={"annotation_id": annotation.pk, "revision_id": revision.pk},
    )
    return anchor
