"""Writes of the review desk, one module per concept. Each service is one transaction with an
explicit acting user.

Rules kept here (docs/design.md, Invariants): revisions are written once, as textstore deltas
against the
previous revision; only a document's author adds revisions or edits its constraints; a review
is edited only by its reviewer and only while it is a draft; an annotation's issue status may be
changed by the document's author or the annotation's author, also after submission; after
submission anyone who can see a review may reply under its annotations, and authors may edit
their annotations and replies, the earlier text kept. Inbox rows are written in the transaction
of the event they announce.
"""

from .annotations import (
    AnnotationChanges,
    annotation_create,
    annotation_delete,
    annotation_reattach,
    annotation_update,
    review_risks_rank,
    selector_resolve,
)
from .documents import constraints_clean, doc_constraints_set, doc_create, doc_revision_create
from .inbox import inbox_mark_read
from .reviews import review_create, review_submit, review_update, verdict_clean
from .threads import reply_create, reply_update

__all__ = [
    "AnnotationChanges",
    "annotation_create",
    "annotation_delete",
    "annotation_reattach",
    "annotation_update",
    "constraints_clean",
    "doc_constraints_set",
    "doc_create",
    "doc_revision_create",
    "inbox_mark_read",
    "reply_create",
    "reply_update",
    "review_create",
    "review_risks_rank",
    "review_submit",
    "review_update",
    "selector_resolve",
    "verdict_clean",
]
