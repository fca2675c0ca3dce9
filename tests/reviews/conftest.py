"""Fixtures shared by the review-desk tests: three accounts, a document and a draft review."""

import pytest

from tests.factories import make_user
from tests.reviews.factories import make_doc, make_review


@pytest.fixture
def author():
    return make_user("author")


@pytest.fixture
def reviewer():
    return make_user("reviewer")


@pytest.fixture
def third():
    return make_user("third")


@pytest.fixture
def doc(author):
    """(DesignDoc, its first DocRevision)."""
    return make_doc(author)


@pytest.fixture
def review(doc, reviewer):
    return make_review(reviewer, doc[1])
