"""Through a real Celery worker on Redis and PostgreSQL (the services pass; skipped without
them, failed when the pass expects them): a draft on the fixture provider, and the answer-key
evaluation of the starter over the six documents, whose per-document scores are printed
(`pytest -s`)."""

from __future__ import annotations

import io
import time

import pytest
from django.core.management import call_command
from django.db import connection

from config.celery import app
from tests.critique.conftest import practice_review
from tests.factories import api_client_for
from tests.playground.runkit.worker import EXPECT_SERVICES, run_worker

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def worker(practice, settings):
    if connection.vendor != "postgresql":
        if EXPECT_SERVICES:
            pytest.fail("the services pass must run on PostgreSQL")
        pytest.skip("needs PostgreSQL (the services pass)")
    with run_worker(RUN_FIXTURE_DELAY_MS="5") as running:
        settings.RUN_TASK_QUEUE = running.queue
        settings.EVAL_TASK_QUEUE = running.queue
        previous = app.conf.task_always_eager
        app.conf.task_always_eager = False
        try:
            yield running
        finally:
            app.conf.task_always_eager = previous


def test_a_draft_runs_in_the_worker(worker):
    review = practice_review("wes")
    client = api_client_for(review.reviewer)
    created = client.post(
        f"/api/v1/reviews/{review.pk}/drafts/", {"provider": "fixture"}, format="json"
    )
    assert created.status_code == 201
    deadline = time.monotonic() + 60
    while True:
        draft = client.get(f"/api/v1/review-drafts/{created.json()['id']}/").json()
        if draft["status"] in ("done", "failed") or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert draft["status"] == "done", draft["error"]
    assert len(draft["suggestions"]) == 8


def test_the_answer_key_evaluation_runs_in_the_worker(worker):
    out = io.StringIO()
    call_command("critique_leaderboard", "--timeout", "120", stdout=out)
    text = out.getvalue()
    print("\n" + text)  # the per-document scores, for `pytest -s`
    assert "done" in text.splitlines()[0]
    assert text.count("fixture/fixture-1  0.") == 6
