"""Starting a timed review many times at once opens one review with one clock (PostgreSQL)."""

import pytest

from reviews.models import DesignDoc, Review, TimedReview
from reviews.practice.services import mock_review_start
from reviews.seed import practice_docs_load, practice_keys_load
from tests.factories import make_user
from tests.playground.test_concurrency import _needs_postgresql, _run_together  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)
THREADS = 8


def test_concurrent_starts_open_one_timed_review():
    practice_docs_load()
    practice_keys_load()
    doc = DesignDoc.objects.get(title="One-to-one messaging for the support app")
    user = make_user("racer")
    results = _run_together(lambda i: mock_review_start(actor=user, doc=doc), THREADS)
    assert all(not isinstance(r, Exception) for r in results), results
    assert len({review.pk for review, _ in results}) == 1
    assert sum(created for _, created in results) == 1
    review = Review.objects.get(reviewer=user)
    assert review.attempt == 1
    assert review.checklist.count() == 8
    assert TimedReview.objects.filter(review=review).count() == 1
