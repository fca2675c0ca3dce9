"""The critique panels on the review desk's pages, and the practice page's buttons."""

import pytest
from django.test import Client

from critique import services
from critique.models import CritiquePrompt, Suggestion
from evals.models import Evaluation
from reviews.services import review_submit
from tests.critique.conftest import practice_review
from tests.factories import make_user

pytestmark = pytest.mark.django_db


def _client(user):
    client = Client()
    client.force_login(user)
    return client


def test_the_draft_panel_is_the_reviewers_on_a_draft(
    practice, fixture_runs, django_capture_on_commit_callbacks
):
    review = practice_review("ann")
    page = _client(review.reviewer).get(f"/reviews/r/{review.pk}/")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="draft-panel"' in html and "Starter critique prompt (built in)" in html
    assert "js/critique.js" in html
    other = _client(make_user("bob")).get(f"/reviews/r/{review.pk}/")
    assert other.status_code == 404  # a draft review is the reviewer's alone
    with django_capture_on_commit_callbacks(execute=True):
        draft = services.draft_create(
            actor=review.reviewer,
            review=review,
            version=services.starter_version_ensure(),
            provider="fixture",
        )
    fragment = _client(review.reviewer).get(f"/critique/drafts/{draft.pk}/suggestions/?after=5")
    assert fragment.status_code == 200
    assert fragment.content.decode().count('class="suggestion ') == 2
    assert (
        _client(make_user("cid")).get(f"/critique/drafts/{draft.pk}/suggestions/").status_code
        == 404
    )
    html = _client(review.reviewer).get(f"/reviews/r/{review.pk}/").content.decode()
    assert html.count('class="suggestion ') == 8 and "Unanchored" in html
    review_submit(actor=review.reviewer, review=review)
    assert (
        'id="draft-panel"'
        not in _client(review.reviewer).get(f"/reviews/r/{review.pk}/").content.decode()
    )


def test_practice_page_copy_and_score(
    practice, fixture_runs, settings, django_capture_on_commit_callbacks
):
    settings.EVAL_EAGER_MODE = "inline"
    user = make_user("dee")
    client = _client(user)
    page = client.get("/reviews/practice/")
    assert "Critique prompts on the six documents" in page.content.decode()
    copied = client.post("/critique/copy/")
    assert copied.status_code == 302
    prompt = CritiquePrompt.objects.get(starter=False).prompt
    assert prompt.owner == user
    with django_capture_on_commit_callbacks(execute=True):
        scored = client.post(
            "/critique/score/", {"prompt": prompt.pk, "version": "v1", "provider": "fixture"}
        )
    evaluation = Evaluation.objects.get(prompt=prompt)
    assert scored.status_code == 302 and scored["Location"] == f"/evals/{evaluation.pk}/"
    html = client.get("/reviews/practice/").content.decode()
    assert "My critique prompt v1" in html and "People's mock reviews" in html
    assert not Suggestion.objects.exists()


def test_the_evaluation_form_offers_the_answer_key_grader(practice, fixture_runs):
    user = make_user("fay")
    client = _client(user)
    assert client.post("/critique/copy/").status_code == 302
    prompt = CritiquePrompt.objects.get(starter=False).prompt
    html = client.get(f"/evals/prompt/{prompt.pk}/").content.decode()
    assert 'name="g_registered" value="answer-key"' in html
    assert "score the critique against the practice document" in html
