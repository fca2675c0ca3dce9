"""Fixtures of the critique tests: a reviewer with a draft review of a practice document, runs
inline on the offline fixture provider, and the loopback provider server."""

from typing import Any

import pytest

from reviews.models import DesignDoc, DocRevision, Review
from reviews.seed import practice_docs_load, practice_keys_load
from reviews.services import review_create
from tests.factories import make_user
from tests.playground.runkit.fixtures import inline_runs, provider_server, providers

__all__ = ["inline_runs", "provider_server", "providers"]

ML_CONFIG = "Design: layered YAML configuration for training runs"


@pytest.fixture
def fixture_runs(settings: Any) -> None:
    settings.RUN_EAGER_MODE = "inline"
    settings.RUN_FIXTURE_DELAY_MS = 0


@pytest.fixture
def practice() -> None:
    practice_docs_load()  # the migrations' seed, flushed by earlier transactional tests
    practice_keys_load()


def practice_review(username: str, title_part: str = "Layered YAML") -> Review:
    reviewer = make_user(username)
    doc = DesignDoc.objects.get(title__icontains=title_part, practice=True)
    revision = DocRevision.objects.filter(doc=doc).order_by("-number")[0]
    review, _ = review_create(actor=reviewer, revision=revision)
    return review
