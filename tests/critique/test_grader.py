"""The answer-key grader: an evaluation of the starter over the six practice documents on the
fixture provider, scored with the same scorer as a mock review, and the leaderboard it feeds."""

import io

import pytest
from django.core.management import call_command

from critique import services
from critique.grader import answer_key_grade, answer_key_parse
from critique.models import Suggestion
from critique.selectors import leaderboard_for_user, practice_columns
from evals.exceptions import EvalInvalid
from evals.graders import CellOutcome
from evals.models import EvalCell
from playground.models import Role
from reviews.practice.selectors import scorecard_get_for_user
from reviews.services import review_submit
from tests.critique.conftest import practice_review
from tests.factories import make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def inline_evals(settings, fixture_runs):
    settings.EVAL_EAGER_MODE = "inline"


def _evaluate(django_capture_on_commit_callbacks):
    version = services.starter_version_ensure()
    owner = version.prompt.owner
    revision = services.practice_testset_ensure(
        actor=owner, prompt=version.prompt, role=Role.OWNER, docs=practice_columns(user=owner)
    )
    with django_capture_on_commit_callbacks(execute=True):
        evaluation = services.practice_evaluation_create(
            actor=owner,
            prompt=version.prompt,
            role=Role.OWNER,
            revision=revision,
            versions=[version.pk],
            models=[{"provider": "fixture", "model": "fixture-1"}],
        )
    evaluation.refresh_from_db()
    return evaluation


def test_an_evaluation_over_the_six_documents(
    practice, inline_evals, django_capture_on_commit_callbacks
):
    evaluation = _evaluate(django_capture_on_commit_callbacks)
    assert evaluation.status == "done"
    cells = list(EvalCell.objects.filter(evaluation=evaluation).select_related("row__content"))
    assert len(cells) == 6
    for cell in cells:
        assert cell.status == "graded", cell.error
        grade = cell.grades[0]
        assert grade["type"] == "answer-key"
        assert 0 < grade["score"] < 1
        assert "found" in grade["reason"] and "led with the worst" in grade["reason"]
        assert cell.row.content.note in grade["reason"]  # the document's title
    reasons = " ".join(c.grades[0]["reason"] for c in cells)
    assert "constraint traps fallen into 1" in reasons  # the inference server's batching fix
    assert "led with the worst: no" in reasons  # the inference server again
    assert "quote(s) matched no passage" in reasons

    board = leaderboard_for_user(user=make_user("reader"))
    [row] = board.rows
    assert row.starter and not row.evaluation_visible
    assert all(score is not None for score in row.scores)
    assert row.mean == pytest.approx(sum(row.scores) / 6)


def test_the_grader_scores_like_the_scorecard_of_the_accepted_suggestions(
    practice, inline_evals, django_capture_on_commit_callbacks
):
    """Accept every suggestion of the ML config draft and submit: the mock-review scorecard
    and the answer-key grader give the same score."""
    evaluation = _evaluate(django_capture_on_commit_callbacks)
    cell = next(
        c
        for c in EvalCell.objects.filter(evaluation=evaluation).select_related("row__content")
        if c.row.content.note.startswith("Layered YAML")
    )
    review = practice_review("ida")
    with django_capture_on_commit_callbacks(execute=True):
        draft = services.draft_create(
            actor=review.reviewer,
            review=review,
            version=services.starter_version_ensure(),
            provider="fixture",
        )
    services.draft_sync(draft=draft)
    for suggestion in Suggestion.objects.filter(draft=draft).order_by("position"):
        services.suggestion_accept(actor=review.reviewer, suggestion=suggestion)
    review_submit(actor=review.reviewer, review=review)
    card = scorecard_get_for_user(user=review.reviewer, review_id=review.pk).scorecard
    assert cell.score == pytest.approx(round(card.score, 4))


def test_the_grader_without_a_practice_document(practice):
    spec = answer_key_parse({"type": "answer-key"}, "graders.0")
    assert not answer_key_grade(spec, CellOutcome(output="{}")).passed
    outcome = CellOutcome(output='{"annotations": []}', variables={"document": "# Not practice"})
    grade = answer_key_grade(spec, outcome)
    assert not grade.passed and "not a practice document" in grade.reason
    with pytest.raises(EvalInvalid):
        answer_key_parse({"type": "answer-key", "threshold": 2}, "graders.0")


def test_the_command_prints_per_document_scores(practice, fixture_runs, settings):
    out = io.StringIO()
    call_command("critique_leaderboard", stdout=out)
    text = out.getvalue()
    assert text.count("fixture/fixture-1  0.") == 6
    assert "mean fixture/fixture-1" in text
