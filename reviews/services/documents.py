"""Documents and their revisions: only the author adds revisions or edits the constraints.

Revisions are written once, each text a textstore delta against the previous revision's; saving
one re-anchors every annotation of earlier revisions onto it, after commit.
"""

import logging

from celery import current_app
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Max

from common.limits import MESSAGE_MAX_CHARS, TITLE_MAX_CHARS
from questionbank.models import Question
from textstore.services import blob_put

from ..exceptions import Forbidden, ReviewsError
from ..models import CONSTRAINT_MAX_CHARS, DesignDoc, DocRevision

logger = logging.getLogger(__name__)

BODY_MAX_CHARS = 500_000
CONSTRAINTS_MAX = 20


def _title_clean(title: object) -> str:
    title = (title or "").strip() if isinstance(title, str) else ""
    if not title or len(title) > TITLE_MAX_CHARS:
        raise ReviewsError(f"title: must be 1-{TITLE_MAX_CHARS} characters.", field="title")
    return title


def _body_clean(body: object) -> str:
    """Markdown as stored: LF line endings (browsers post CRLF), never empty."""
    if not isinstance(body, str):
        raise ReviewsError("body: must be a string of Markdown.", field="body")
    body = body.replace("\r\n", "\n").replace("\r", "\n")
    if not body.strip():
        raise ReviewsError("body: the document is empty.", field="body")
    if len(body) > BODY_MAX_CHARS:
        raise ReviewsError(f"body: at most {BODY_MAX_CHARS} characters.", field="body")
    return body


def constraints_clean(constraints: object) -> list[str]:
    """A list of short, distinct statements (blank entries dropped)."""
    if constraints is None:
        return []
    if not isinstance(constraints, list) or not all(isinstance(c, str) for c in constraints):
        raise ReviewsError("constraints: must be a list of strings.", field="constraints")
    cleaned: list[str] = []
    for item in constraints:
        statement = " ".join(item.split())
        if not statement:
            continue
        if len(statement) > CONSTRAINT_MAX_CHARS:
            raise ReviewsError(
                f"constraints: each at most {CONSTRAINT_MAX_CHARS} characters.",
                field="constraints",
            )
        if statement not in cleaned:
            cleaned.append(statement)
    if len(cleaned) > CONSTRAINTS_MAX:
        raise ReviewsError(f"constraints: at most {CONSTRAINTS_MAX}.", field="constraints")
    return cleaned


def _author_only(actor: User, doc: DesignDoc, what: str) -> None:
    if doc.author_id != actor.pk:
        raise Forbidden(f"Only the document's author can {what}.")


# The task by its name (reviews/tasks.py registers it, imported by ReviewsConfig.ready()): the
# task module imports the re-anchoring service from this package, so importing it here would
# close a circle (the acyclic_siblings contract in pyproject.toml).
REVISION_REANCHOR = "reviews.revision_reanchor"


def reanchor_on_commit(revision_id: int) -> None:
    """Enqueue re-anchoring onto `revision_id` once the current transaction commits."""
    task = current_app.tasks[REVISION_REANCHOR]
    transaction.on_commit(lambda: task.delay(revision_id))


@transaction.atomic
def doc_create(
    *,
    actor: User,
    title: str,
    body: str,
    question: Question | None = None,
    constraints: list[str] | None = None,
    message: str = "",
    practice: bool = False,
    kind: str = DesignDoc.Kind.DESIGN,
) -> tuple[DesignDoc, DocRevision]:
    """A new document with its first revision (`kind` change: a change request's text, made
    by the `changes` app and hidden from the review desk)."""
    doc = DesignDoc.objects.create(
        author=actor,
        title=_title_clean(title),
        question=question,
        constraints=constraints_clean(constraints),
        practice=practice,
        kind=kind,
    )
    blob = blob_put(text=_body_clean(body))
    revision = DocRevision.objects.create(
        doc=doc,
        number=1,
        body_sha=blob.sha256,
        author=actor,
        message=_message_clean(message) or "First draft",
    )
    logger.info("doc.created", extra={"doc_id": doc.pk, "actor_id": actor.pk})
    return doc, revision


def _message_clean(message: object) -> str:
    message = (message or "").strip() if isinstance(message, str) else ""
    if len(message) > MESSAGE_MAX_CHARS:
        raise ReviewsError(f"message: at most {MESSAGE_MAX_CHARS} characters.", field="message")
    return message


@transaction.atomic
def doc_revision_create(
    *, actor: User, doc: DesignDoc, body: str, message: str = ""
) -> tuple[DocRevision, bool]:
    """Save `body` as the next revision (author only); returns (revision, created).

    The text is stored as a delta against the latest revision's. A body identical to the
    latest revision's creates nothing and returns that revision, so a replayed save is a
    no-op. After commit, every annotation of earlier revisions is re-anchored onto it.
    """
    _author_only(actor, doc, "add revisions")
    body = _body_clean(body)
    message = _message_clean(message)
    # Serialise saves on this document, so numbers are taken in order.
    DesignDoc.objects.select_for_update().filter(pk=doc.pk).first()
    latest = DocRevision.objects.filter(doc=doc).order_by("-number").first()
    blob = blob_put(text=body, base=latest.body_sha if latest else None)
    if latest is not None and blob.sha256 == latest.body_sha:
        return latest, False
    number = (doc.revisions.aggregate(n=Max("number"))["n"] or 0) + 1
    revision = DocRevision.objects.create(
        doc=doc, number=number, body_sha=blob.sha256, author=actor, message=message
    )
    reanchor_on_commit(revision.pk)
    logger.info("doc.revised", extra={"doc_id": doc.pk, "revision": number})
    return revision, True


@transaction.atomic
def doc_constraints_set(*, actor: User, doc: DesignDoc, constraints: list[str]) -> DesignDoc:
    """Replace the pinned constraints (author only). Annotations keep the text they cited."""
    _author_only(actor, doc, "edit its constraints")
    doc.constraints = constraints_clean(constraints)
    DesignDoc.objects.filter(pk=doc.pk).update(constraints=doc.constraints)
    return doc
