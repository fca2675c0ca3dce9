"""Writes for practice: start (or resume) a timed mock review of a practice document."""

import logging

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from ..exceptions import ReviewsError
from ..models import DesignDoc, DocRevision, Review
from ..services.reviews import checklist_rows_create
from .models import AnswerKey, TimedReview

logger = logging.getLogger(__name__)


@transaction.atomic
def mock_review_start(*, actor: User, doc: DesignDoc) -> tuple[Review, bool]:
    """Open a timed review of the document's latest revision; returns (review, created).

    Invariants: only documents with an answer key; at most one draft per reviewer and revision
    (a draft in progress is resumed — an untimed one gets its clock now); after a submitted
    review the next mock review is a new attempt, so progress can be tracked over time.
    """
    key = AnswerKey.objects.filter(doc=doc).first()
    if key is None:
        raise ReviewsError("This document has no answer key: timed reviews need a practice one.")
    revision = DocRevision.objects.filter(doc=doc).order_by("-number").first()
    if revision is None:
        raise ReviewsError("This document has no revision to review.")
    draft = (
        Review.objects.select_for_update()
        .filter(revision=revision, reviewer_id=actor.pk, status=Review.Status.DRAFT)
        .first()
    )
    if draft is not None:
        TimedReview.objects.get_or_create(
            review=draft, defaults={"started_at": timezone.now(), "minutes_allowed": key.minutes}
        )
        return draft, False
    attempt = (
        Review.objects.filter(revision=revision, reviewer_id=actor.pk).aggregate(n=Max("attempt"))[
            "n"
        ]
        or 0
    ) + 1
    try:
        with transaction.atomic():
            review = Review.objects.create(revision=revision, reviewer_id=actor.pk, attempt=attempt)
    except IntegrityError:  # a concurrent start won (one draft per reviewer): resume its draft
        return (
            Review.objects.get(revision=revision, reviewer_id=actor.pk, status=Review.Status.DRAFT),
            False,
        )
    checklist_rows_create(review)
    TimedReview.objects.create(
        review=review, started_at=review.created_at, minutes_allowed=key.minutes
    )
    logger.info(
        "review.mock_started",
        extra={"review_id": review.pk, "doc_id": doc.pk, "attempt": attempt},
    )
    return review, True
