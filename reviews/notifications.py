"""Inbox rows for review-desk events. Called by the service (or re-anchoring step) that made
the event happen, inside its transaction, so an event and its notifications commit or roll
back together. Not signals: the row is part of the write."""

from collections.abc import Iterable

from .models import Annotation, AnnotationAnchor, InboxItem, Reply, Review


def inbox_notify_review_submitted(*, review: Review, doc_author_id: int) -> None:
    """Tell the document's author a review was submitted (not when they reviewed it)."""
    if doc_author_id == review.reviewer_id:
        return
    InboxItem.objects.create(
        recipient_id=doc_author_id,
        kind=InboxItem.Kind.REVIEW_SUBMITTED,
        actor_id=review.reviewer_id,
        review=review,
        revision_id=review.revision_id,
    )


def inbox_notify_reply(*, reply: Reply, annotation: Annotation, participant_ids: set[int]) -> None:
    """Tell the annotation's author and everyone who replied before, except the replier."""
    recipients = ({annotation.author_id} | participant_ids) - {reply.author_id}
    InboxItem.objects.bulk_create(
        InboxItem(
            recipient_id=recipient,
            kind=InboxItem.Kind.REPLY,
            actor_id=reply.author_id,
            review_id=annotation.review_id,
            annotation=annotation,
            reply=reply,
        )
        for recipient in sorted(recipients)
    )


def inbox_notify_orphans(*, anchors: Iterable[AnnotationAnchor], revision_author_id: int) -> None:
    """Tell each annotation's author it was orphaned by a new revision (once per revision;
    not when they wrote the revision themselves)."""
    rows = [
        InboxItem(
            recipient_id=anchor.annotation.author_id,
            kind=InboxItem.Kind.ORPHANED,
            actor_id=revision_author_id,
            review_id=anchor.annotation.review_id,
            annotation_id=anchor.annotation.pk,
            revision_id=anchor.revision_id,
        )
        for anchor in anchors
        if anchor.status == AnnotationAnchor.Status.ORPHANED
        and anchor.annotation.author_id != revision_author_id
    ]
    if rows:
        InboxItem.objects.bulk_create(rows, ignore_conflicts=True)
