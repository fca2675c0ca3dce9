"""Concurrent edits of one reply or annotation on PostgreSQL with real threads: every earlier
text lands in the history exactly once, none is lost (issue #15)."""

import pytest

from reviews.models import Annotation, BodyEdit, Reply
from reviews.services import annotation_update, reply_create, reply_update, review_submit
from tests.factories import make_user
from tests.playground.test_concurrency import _needs_postgresql, _run_together  # noqa: F401
from tests.reviews.factories import annotate, make_doc, make_review
from tests.reviews.threads_fixtures import KV

pytestmark = pytest.mark.django_db(transaction=True)
THREADS = 8


def _chain_is_complete(original: str, final: str, history: list[str], bodies: set[str]) -> None:
    """Each edit replaced exactly the text before it: the history is the original plus every
    new body but the last one written, each once."""
    assert len(history) == THREADS
    assert len(set(history)) == THREADS
    assert set(history) | {final} == bodies | {original}


def test_concurrent_reply_edits_keep_every_earlier_text():
    author, reviewer = make_user("author"), make_user("reviewer")
    _, revision = make_doc(author)
    review = make_review(reviewer, revision)
    annotation = annotate(review, KV)
    review_submit(actor=reviewer, review=review)
    reply = reply_create(actor=author, annotation=annotation, body="original")
    bodies = {f"edit {i}" for i in range(THREADS)}
    results = _run_together(
        lambda i: reply_update(actor=author, reply=reply, body=f"edit {i}"), THREADS
    )
    assert all(not isinstance(r, Exception) for r in results), results
    history = list(
        BodyEdit.objects.filter(reply=reply).order_by("id").values_list("body", flat=True)
    )
    _chain_is_complete("original", Reply.objects.get(pk=reply.pk).body, history, bodies)


def test_concurrent_annotation_edits_keep_every_earlier_text():
    author, reviewer = make_user("author"), make_user("reviewer")
    _, revision = make_doc(author)
    review = make_review(reviewer, revision)
    annotation = annotate(review, KV, body="original")
    review_submit(actor=reviewer, review=review)
    bodies = {f"edit {i}" for i in range(THREADS)}
    results = _run_together(
        lambda i: annotation_update(
            actor=reviewer, annotation=annotation, changes={"body": f"edit {i}"}
        ),
        THREADS,
    )
    assert all(not isinstance(r, Exception) for r in results), results
    history = list(
        BodyEdit.objects.filter(annotation=annotation).order_by("id").values_list("body", flat=True)
    )
    _chain_is_complete("original", Annotation.objects.get(pk=annotation.pk).body, history, bodies)
