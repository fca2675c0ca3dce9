"""The answer-key grader tells nothing of a key to someone who may not read it (issue #31): an
author whose `echo` output carries probe JSON sees the score of each cell but no reason — the
reason's counts would give the key's item count, what was missed and where the worst risk is —
on the results page, the results API and both exports; a reader of the key (the reviewer of a
submitted review of the document) sees the reasons."""

import csv
import io
import json

import pytest

from evals.models import EvalCell
from evals.services import testsets
from evals.services.evaluations import evaluation_create, evaluation_dispatch
from playground.models import Role
from playground.services import grant_set
from reviews.models import DesignDoc, DocRevision
from reviews.selectors import revision_text
from reviews.services import review_submit
from tests.critique.conftest import practice_review
from tests.factories import api_client_for, make_user
from tests.playground.factories import make_prompt

pytestmark = pytest.mark.django_db

PROBE = '{"annotations": []} {{document}}'
# What the scorecard's reason says; none of it may reach a reader who may not read the key.
REASON_WORDS = ("found 0 of", "missed", "constraint traps", "led with the worst")


@pytest.fixture
def inline(settings):
    settings.EVAL_EAGER_MODE = "inline"
    settings.RUN_EAGER_MODE = "inline"
    settings.RUN_ECHO_DELAY_MS = 0


def _probe_evaluation(author):
    doc = DesignDoc.objects.get(title__icontains="Layered YAML", practice=True)
    revision = DocRevision.objects.filter(doc=doc).order_by("-number")[0]
    prompt, version = make_prompt(
        author,
        title="Probe",
        provider="echo",
        model="echo-1",
        messages=[{"role": "user", "content": PROBE}],
        variables={"document": ""},
    )
    testset = testsets.testset_create(
        actor=author,
        prompt=prompt,
        role=Role.OWNER,
        name="probe",
        rows=testsets.testset_rows_parse(
            [{"variables": {"document": revision_text(revision=revision)}}]
        ),
    )
    evaluation = evaluation_create(
        actor=author,
        prompt=prompt,
        role=Role.OWNER,
        revision=testset,
        versions=[version.pk],
        graders=[{"type": "answer-key"}],
    )
    evaluation_dispatch(evaluation_id=evaluation.pk)
    return prompt, evaluation


def _text(response) -> str:
    assert response.status_code == 200
    body = b"".join(response.streaming_content) if response.streaming else response.content
    return body.decode()


def _surfaces(client, api, evaluation) -> dict[str, str]:
    return {
        "page": _text(client.get(f"/evals/{evaluation.pk}/")),
        "api": _text(api.get(f"/api/v1/evals/{evaluation.pk}/results/")),
        "csv": _text(client.get(f"/evals/{evaluation.pk}/export.csv")),
        "json": _text(client.get(f"/evals/{evaluation.pk}/export.json")),
    }


def test_the_probe_shows_the_score_and_nothing_of_the_key(client, practice, inline):
    author = make_user("prober")
    _, evaluation = _probe_evaluation(author)
    cell = EvalCell.objects.get(evaluation=evaluation)
    assert cell.status == "graded", cell.error
    assert "found 0 of" in cell.grades[0]["reason"]  # what the stored grade knows

    client.force_login(author)
    surfaces = _surfaces(client, api_client_for(author), evaluation)
    for name, body in surfaces.items():
        for words in REASON_WORDS:
            assert words not in body, (name, words)
    [result] = json.loads(surfaces["api"])["results"]
    assert result["grades"][0]["score"] == cell.grades[0]["score"] == 0
    assert result["grades"][0]["reason"].startswith("Reason hidden")
    assert "secret" not in result["grades"][0]
    [exported] = json.loads(surfaces["json"])
    assert exported["score"] == 0 and exported["grades"][0]["reason"].startswith("Reason hidden")
    rows = list(csv.reader(io.StringIO(surfaces["csv"])))
    assert rows[1][rows[0].index("score")] == "0.0"


def test_a_reader_of_the_key_sees_the_reasons(client, practice, inline):
    author = make_user("prober")
    prompt, evaluation = _probe_evaluation(author)
    review = practice_review("ida")  # a draft review of the same document
    reader = review.reviewer
    grant_set(actor=author, prompt=prompt, username=reader.username, role="viewer")
    client.force_login(reader)
    before = _surfaces(client, api_client_for(reader), evaluation)
    assert "found 0 of" not in before["api"]  # a draft does not open the key

    review_submit(actor=reader, review=review)
    after = _surfaces(client, api_client_for(reader), evaluation)
    for name, body in after.items():
        assert "found 0 of" in body, name
