"""The in-app inbox: marking items read (the rows themselves are written by the services that
make events happen, see reviews/notifications.py)."""

import logging

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from ..models import InboxItem

logger = logging.getLogger(__name__)

# Items one call may name (a page of the inbox is far fewer).
MARK_READ_MAX_IDS = 1000


@transaction.atomic
def inbox_mark_read(*, actor: User, ids: list[int] | None = None) -> int:
    """Mark the actor's unread items read: those in `ids`, or all. Returns how many changed;
    ids that are not the actor's are ignored (a repeated call changes nothing)."""
    items = InboxItem.objects.filter(recipient_id=actor.pk, read_at__isnull=True)
    if ids is not None:
        items = items.filter(pk__in=ids)
    changed = items.update(read_at=timezone.now())
    logger.info("inbox.read", extra={"actor_id": actor.pk, "changed": changed})
    return changed
