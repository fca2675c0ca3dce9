"""Threads under annotations: replies once the review is submitted, edits by their author with
the earlier text kept (a write-once history)."""

import logging

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from ..exceptions import Forbidden, ReviewsError
from ..models import Annotation, BodyEdit, Reply, Review
from ..notifications import inbox_notify_reply

logger = logging.getLogger(__name__)

REPLY_MAX_CHARS = 10_000


def reply_body_clean(body: object) -> str:
    """Markdown text: 1 to REPLY_MAX_CHARS characters once trimmed, LF line endings."""
    if not isinstance(body, str):
        raise ReviewsError("body: must be text (Markdown).", field="body")
    body = body.replace("\r\n", "\n").replace("\r", "\n").strip()
    if not body:
        raise ReviewsError("body: the reply is empty.", field="body")
    if len(body) > REPLY_MAX_CHARS:
        raise ReviewsError(f"body: at most {REPLY_MAX_CHARS} characters.", field="body")
    if "\x00" in body:
        raise ReviewsError("body: must not contain NUL characters.", field="body")
    return body


@transaction.atomic
def reply_create(*, actor: User, annotation: Annotation, body: str) -> Reply:
    """Reply to an annotation of a submitted review; anyone who can see the review may.

    Draft annotations are private (callers find them only through a selector scoped to the
    reviewer); even their author cannot reply before submitting. The annotation's author and
    the thread's earlier participants get an inbox row in this transaction.
    """
    body = reply_body_clean(body)
    review_status = (
        Review.objects.filter(pk=annotation.review_id).values_list("status", flat=True).first()
    )
    if review_status != Review.Status.SUBMITTED:
        raise ReviewsError("Replies open once the review is submitted.", field="annotation")
    participants = set(
        Reply.objects.filter(annotation=annotation).values_list("author_id", flat=True)
    )
    reply = Reply.objects.create(annotation=annotation, author_id=actor.pk, body=body)
    inbox_notify_reply(reply=reply, annotation=annotation, participant_ids=participants)
    logger.info(
        "reply.created",
        extra={"reply_id": reply.pk, "annotation_id": annotation.pk, "actor_id": actor.pk},
    )
    return reply


@transaction.atomic
def reply_update(*, actor: User, reply: Reply, body: str) -> tuple[Reply, bool]:
    """Edit a reply (its author only); returns (reply, changed). The earlier text is kept as
    a BodyEdit; the same text again changes nothing."""
    if reply.author_id != actor.pk:
        raise Forbidden("Only the reply's author can edit it.")
    body = reply_body_clean(body)
    locked = Reply.objects.select_for_update().get(pk=reply.pk)
    if locked.body == body:
        return locked, False
    BodyEdit.objects.create(
        reply=locked, body=locked.body, written_at=locked.edited_at or locked.created_at
    )
    locked.body = body
    locked.edited_at = timezone.now()
    locked.save(update_fields=["body", "edited_at"])
    logger.info("reply.edited", extra={"reply_id": locked.pk, "actor_id": actor.pk})
    return locked, True
