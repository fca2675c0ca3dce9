"""The critique API through URLs: draft, read, accept (with edits), reject; who sees what.
Every answer is checked against the OpenAPI schema by the autouse fixture."""

import pytest

from critique.models import Suggestion
from reviews.services import review_submit
from tests.critique.conftest import practice_review
from tests.factories import api_client_for, make_user

pytestmark = pytest.mark.django_db


def _drafted(client, review, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        created = client.post(
            f"/api/v1/reviews/{review.pk}/drafts/", {"provider": "fixture"}, format="json"
        )
    assert created.status_code == 201, created.json()
    assert set(created.json()) == {"id", "status"}
    answer = client.get(f"/api/v1/review-drafts/{created.json()['id']}/")
    assert answer.status_code == 200
    return answer.json()


def test_draft_accept_edit_reject(practice, fixture_runs, django_capture_on_commit_callbacks):
    review = practice_review("amy")
    client = api_client_for(review.reviewer)
    draft = _drafted(client, review, django_capture_on_commit_callbacks)
    assert draft["status"] == "done" and draft["review"] == review.pk
    suggestions = draft["suggestions"]
    assert len(suggestions) == 8
    first = suggestions[0]
    assert first["anchored"] and first["position"]["end"] > first["position"]["start"]
    assert first["quote"]["exact"].startswith("The run id")
    assert first["state"] == "pending" and first["rank"] == 1
    assert suggestions[4]["quote"] is None and suggestions[4]["position"] is None
    assert suggestions[7]["quote"] is not None and not suggestions[7]["anchored"]

    accepted = client.post(f"/api/v1/suggestions/{first['id']}/accept/", {}, format="json")
    assert accepted.status_code == 201
    body = accepted.json()
    assert body["review"] == review.pk and body["kind"] == "risk" and body["rank"] == 1
    same_shape = client.post(
        f"/api/v1/reviews/{review.pk}/annotations/",
        {"area": "goals", "kind": "question", "severity": "nit", "body": "Why?"},
        format="json",
    )
    assert set(same_shape.json()) == set(body)

    edited = client.post(
        f"/api/v1/suggestions/{suggestions[1]['id']}/accept/",
        {"body": "Lists replace.", "area": "migration"},
        format="json",
    )
    assert edited.status_code == 201
    assert edited.json()["body"] == "Lists replace." and edited.json()["area"] == "migration"

    rejected = client.post(f"/api/v1/suggestions/{suggestions[2]['id']}/reject/")
    assert rejected.status_code == 200 and rejected.json()["state"] == "rejected"
    again = client.post(f"/api/v1/suggestions/{first['id']}/accept/", {}, format="json")
    assert again.status_code == 409
    bad = client.post(
        f"/api/v1/suggestions/{suggestions[3]['id']}/accept/", {"severity": "huge"}, format="json"
    )
    assert bad.status_code == 400
    states = [
        s["state"]
        for s in client.get(f"/api/v1/review-drafts/{draft['id']}/").json()["suggestions"]
    ]
    assert states[:4] == ["accepted", "accepted", "rejected", "pending"]


def test_only_the_reviewer_sees_a_draft(practice, fixture_runs, django_capture_on_commit_callbacks):
    review = practice_review("bea")
    client = api_client_for(review.reviewer)
    draft = _drafted(client, review, django_capture_on_commit_callbacks)
    other = api_client_for(make_user("cal"))
    suggestion = draft["suggestions"][0]["id"]
    assert other.get(f"/api/v1/review-drafts/{draft['id']}/").status_code == 404
    assert (
        other.post(f"/api/v1/suggestions/{suggestion}/accept/", {}, format="json").status_code
        == 404
    )
    assert other.post(f"/api/v1/suggestions/{suggestion}/reject/").status_code == 404
    assert other.post(f"/api/v1/reviews/{review.pk}/drafts/", {}, format="json").status_code == 404
    assert api_client_for(None).get(f"/api/v1/review-drafts/{draft['id']}/").status_code in (
        401,
        403,
    )

    review_submit(actor=review.reviewer, review=review)
    locked = client.post(
        f"/api/v1/reviews/{review.pk}/drafts/", {"provider": "fixture"}, format="json"
    )
    assert locked.status_code == 400
    assert "submitted" in locked.json()["detail"]
    # Submitted: the review is visible to others now, its draft still is not.
    assert other.get(f"/api/v1/review-drafts/{draft['id']}/").status_code == 404


def test_bad_input_names_the_field(practice, fixture_runs):
    review = practice_review("dot")
    client = api_client_for(review.reviewer)
    unknown = client.post(
        f"/api/v1/reviews/{review.pk}/drafts/", {"provider": "nope"}, format="json"
    )
    assert unknown.status_code == 400
    assert unknown.json()["detail"].startswith("provider:")
    hidden = client.post(f"/api/v1/reviews/{review.pk}/drafts/", {"version": 999999}, format="json")
    assert hidden.status_code == 404
    assert not Suggestion.objects.exists()
