"""Fixtures shared by the review-desk tests: three accounts, a document and a draft review."""

from typing import NamedTuple

import pytest

from reviews.models import DesignDoc, DocRevision
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


class NewDoc(NamedTuple):
    """A document as its author created it: the document and its first revision."""

    design: DesignDoc
    revision: DocRevision


@pytest.fixture
def doc(author) -> NewDoc:
    return NewDoc(*make_doc(author))


@pytest.fixture
def review(doc: NewDoc, reviewer):
    return make_review(reviewer, doc.revision)
