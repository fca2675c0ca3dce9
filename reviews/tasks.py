"""Celery tasks of the review desk: thin, idempotent, primitive ids (docs/style.md, rule 7)."""

from celery import shared_task

from .models import DocRevision
from .services.anchors import revision_anchors_write


@shared_task(name="reviews.revision_reanchor")
def revision_reanchor(revision_id: int) -> dict[str, int]:
    """Re-anchor every annotation of earlier revisions onto revision `revision_id`.

    Safe to run again: annotations already anchored there are skipped.
    """
    revision = DocRevision.objects.filter(pk=revision_id).first()
    if revision is None:
        return {"revision": revision_id, "stored": 0}
    return {"revision": revision_id, "stored": revision_anchors_write(revision=revision)}
