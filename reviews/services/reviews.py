"""Reviews: draft (private, edited by its reviewer) → submitted (read-only, visible to all)."""

import logging
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from ..exceptions import Forbidden, ReviewLocked, ReviewsError
from ..models import NOTE_MAX_CHARS, Area, ChecklistItem, DesignDoc, DocRevision, Review, Verdict
from ..notifications import inbox_notify_review_submitted

logger = logging.getLogger(__name__)

SUMMARY_MAX_CHARS = 20_000


@transaction.atomic
def review_create(
    *, actor: User, revision: DocRevision, again: bool = False
) -> tuple[Review, bool]:
    """Start (or resume) the actor's review of `revision`, with its eight checklist rows.

    One review per revision and reviewer: asking again returns the existing one. With `again`,
    a reviewer whose latest review of the revision is submitted starts a new attempt (a change
    request's reviewer who approves after commenting on the same revision); a draft is resumed.
    """
    existing = (
        Review.objects.filter(revision=revision, reviewer=actor).order_by("-attempt", "-id").first()
    )
    if existing is not None and (not again or existing.status == Review.Status.DRAFT):
        return existing, False
    attempt = existing.attempt + 1 if existing is not None else 1
    try:
        with transaction.atomic():
            review = Review.objects.create(revision=revision, reviewer=actor, attempt=attempt)
    except IntegrityError:  # a concurrent start won: resume theirs
        raced = (
            Review.objects.filter(revision=revision, reviewer=actor)
            .order_by("-attempt", "-id")
            .first()
        )
        assert raced is not None
        return raced, False
    checklist_rows_create(review)
    logger.info("review.created", extra={"review_id": review.pk, "revision_id": revision.pk})
    return review, True


def checklist_rows_create(review: Review) -> None:
    """The eight checklist rows of a new review, in checklist order."""
    ChecklistItem.objects.bulk_create(
        ChecklistItem(review=review, area=area, position=index)
        for index, area in enumerate(Area.values)
    )


def review_lock_for_edit(actor: User, review: Review) -> Review:
    """The review row, locked, if the actor may edit it now: its reviewer, while a draft."""
    if review.reviewer_id != actor.pk:
        raise Forbidden("Only the reviewer can edit this review.")
    locked = Review.objects.select_for_update().get(pk=review.pk)
    if locked.status != Review.Status.DRAFT:
        raise ReviewLocked("Submitted reviews cannot be edited.")
    return locked


def _checklist_clean(checklist: object) -> dict[str, dict[str, str]]:
    if not isinstance(checklist, list):
        raise ReviewsError("checklist: must be a list of {area, status, note}.", field="checklist")
    changes: dict[str, dict[str, str]] = {}
    for entry in checklist:
        if not isinstance(entry, dict):
            raise ReviewsError("checklist: each entry is {area, status, note}.", field="checklist")
        area = entry.get("area")
        if area not in Area.values:
            raise ReviewsError(
                f"checklist: unknown area {area!r}; one of {', '.join(Area.values)}.",
                field="checklist",
            )
        if area in changes:
            raise ReviewsError(f"checklist: area {area!r} given twice.", field="checklist")
        change: dict[str, str] = {}
        if "status" in entry:
            status = entry["status"] if entry["status"] is not None else ""
            if status not in ChecklistItem.Status.values:
                raise ReviewsError(
                    f"checklist: status of {area!r} must be covered, gap, na or empty.",
                    field="checklist",
                )
            change["status"] = status
        if "note" in entry:
            note = entry["note"] if entry["note"] is not None else ""
            if not isinstance(note, str) or len(note) > NOTE_MAX_CHARS:
                raise ReviewsError(
                    f"checklist: note of {area!r} must be text of at most {NOTE_MAX_CHARS} "
                    "characters.",
                    field="checklist",
                )
            change["note"] = note.strip()
        changes[area] = change
    return changes


@transaction.atomic
def review_update(
    *,
    actor: User,
    review: Review,
    summary: str | None = None,
    checklist: list[dict[str, Any]] | None = None,
) -> Review:
    """Edit a draft's summary and checklist (reviewer only). Submitted reviews are read-only."""
    review = review_lock_for_edit(actor, review)
    changes = _checklist_clean(checklist) if checklist is not None else {}
    if summary is not None:
        review.summary = _summary_clean(summary)
    items = {item.area: item for item in ChecklistItem.objects.filter(review=review)}
    changed = []
    for area, change in changes.items():
        item = items[area]
        for field, value in change.items():
            setattr(item, field, value)
        changed.append(item)
    if changed:
        ChecklistItem.objects.bulk_update(changed, ["status", "note"])
    review.save(update_fields=["summary", "updated_at"])
    return review


def _summary_clean(summary: object) -> str:
    if not isinstance(summary, str) or len(summary) > SUMMARY_MAX_CHARS:
        raise ReviewsError(
            f"summary: text of at most {SUMMARY_MAX_CHARS} characters.", field="summary"
        )
    return summary.strip()


def verdict_clean(verdict: object) -> str:
    """approve, request-changes or comment; None means comment."""
    if verdict is None:
        return Verdict.COMMENT
    if verdict not in Verdict.values:
        raise ReviewsError(f"verdict: must be one of {', '.join(Verdict.values)}.", field="verdict")
    return str(verdict)


@transaction.atomic
def review_submit(
    *,
    actor: User,
    review: Review,
    summary: str | None = None,
    verdict: str | None = None,
) -> tuple[Review, bool]:
    """draft → submitted with a verdict (reviewer only; default `comment`); returns
    (review, changed).

    A conditional update, so submitting twice is a no-op (the first verdict stands); after it
    the review is read-only and visible to every signed-in account, and the document's author
    finds it in their inbox (written in this transaction).
    """
    if review.reviewer_id != actor.pk:
        raise Forbidden("Only the reviewer can submit this review.")
    fields: dict[str, Any] = {
        "status": Review.Status.SUBMITTED,
        "submitted_at": timezone.now(),
        "verdict": verdict_clean(verdict),
    }
    if summary is not None:
        fields["summary"] = _summary_clean(summary)
    changed = Review.objects.filter(pk=review.pk, status=Review.Status.DRAFT).update(
        updated_at=timezone.now(), **fields
    )
    review.refresh_from_db()
    if changed:
        doc_author_id = DesignDoc.objects.filter(revisions=review.revision_id).values_list(
            "author_id", flat=True
        )[0]
        inbox_notify_review_submitted(review=review, doc_author_id=doc_author_id)
        logger.info("review.submitted", extra={"review_id": review.pk, "verdict": review.verdict})
    return review, bool(changed)
