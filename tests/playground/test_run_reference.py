"""Runs keep a reference to their version, never a copy of the prompt; their request is rebuilt
at `GET /api/v1/runs/{id}/request/`; a viewer sees neither another account's variables nor the
operator's base URL (playground.runs.selectors.run_request, playground.runs.api)."""

from __future__ import annotations

import json
import re

import pytest

from playground.models import Run
from playground.services import grant_set
from tests.factories import api_client_for, make_user
from tests.playground.factories import make_prompt

pytestmark = pytest.mark.django_db

# A long prompt with a marker that must never appear in a run answer.
MARKER = "UNIQUE-PROMPT-MARKER"
LONG = MARKER + "\n" + "Every line of a long prompt that a run must not copy.\n" * 4000


@pytest.fixture
def capture(django_capture_on_commit_callbacks):
    return django_capture_on_commit_callbacks


@pytest.fixture
def owner():
    return make_user("owner")


@pytest.fixture
def version(owner):
    _, version = make_prompt(
        owner,
        provider="echo",
        model="echo-1",
        system=LONG + "Design: {{design}}\n",
        messages=[{"role": "user", "content": "Review it."}],
        variables={"design": "the default design"},
    )
    return version


def _post(api, version, capture, **body):
    with capture(execute=True):
        response = api.post(f"/api/v1/versions/{version.pk}/runs/", body, format="json")
    assert response.status_code == 201, response.content
    return response


def test_run_answers_never_echo_the_prompt(owner, version, inline_runs, capture):
    api = api_client_for(owner)
    created = _post(api, version, capture, variables={"design": "a queue"})
    run_id = created.json()["id"]
    detail = api.get(f"/api/v1/runs/{run_id}/")
    listing = api.get(f"/api/v1/versions/{version.pk}/runs/")
    cancelled = api.post(f"/api/v1/runs/{run_id}/cancel/")  # already done: answers the run
    for response in (created, detail, listing, cancelled):
        body = response.content.decode()
        assert MARKER not in body
        assert len(response.content) < 10_000, len(response.content)  # the text is ~220 KB
    run = detail.json()
    assert "request" not in run
    assert run["request_url"] == f"/api/v1/runs/{run_id}/request/"
    # The row holds a reference (version, provider, model, variables), not the text.
    assert {f.name for f in Run._meta.concrete_fields}.isdisjoint({"request"})
    stored = Run.objects.filter(pk=run_id).values("variables", "output").get()
    assert MARKER not in json.dumps(stored["variables"])

    # The request is rebuilt on demand, whole, with the same builder the worker sent it with.
    request = api.get(run["request_url"]).json()
    assert request["method"] == "POST"
    assert request["body"]["system"] == LONG + "Design: a queue\n"
    assert request["variables_filled"] is True


def test_the_request_has_the_runs_access(owner, version, inline_runs, capture):
    run_id = _post(api_client_for(owner), version, capture).json()["id"]
    stranger = api_client_for(make_user("stranger"))
    assert stranger.get(f"/api/v1/runs/{run_id}/request/").status_code == 404
    assert stranger.get(f"/api/v1/runs/{run_id}/").status_code == 404
    assert api_client_for(None).get(f"/api/v1/runs/{run_id}/request/").status_code in (401, 403)


def test_a_viewer_sees_neither_other_accounts_variables_nor_the_base_url(
    owner, version, inline_runs, capture, client
):
    viewer = make_user("viewer")
    grant_set(actor=owner, prompt=version.prompt, username=viewer.username, role="viewer")
    secret = "the owner's confidential design"
    run_id = _post(api_client_for(owner), version, capture, variables={"design": secret}).json()[
        "id"
    ]
    as_viewer = api_client_for(viewer)

    detail = as_viewer.get(f"/api/v1/runs/{run_id}/")
    listing = as_viewer.get(f"/api/v1/versions/{version.pk}/runs/")
    request = as_viewer.get(f"/api/v1/runs/{run_id}/request/")
    client.force_login(viewer)
    page = client.get(f"/playground/runs/{run_id}/")
    for response in (detail, listing, request):
        assert response.status_code == 200
        assert "confidential" not in response.content.decode()
    assert detail.json()["variables"] is None
    assert listing.json()["results"][0]["variables"] is None
    assert request.json()["variables_filled"] is False
    assert request.json()["body"]["system"].endswith("Design: {{design}}\n")
    assert page.status_code == 200
    assert "confidential" not in page.content.decode()
    assert "run-variables-used" not in page.content.decode()

    # The viewer's own run shows its values to them; the owner sees every run's.
    own_id = _post(as_viewer, version, capture, variables={"design": "mine"}).json()["id"]
    assert as_viewer.get(f"/api/v1/runs/{own_id}/").json()["variables"] == {"design": "mine"}
    assert api_client_for(owner).get(f"/api/v1/runs/{run_id}/").json()["variables"] == {
        "design": secret
    }


def test_the_operators_base_url_is_shown_to_staff_only(providers, owner, capture, settings):
    _, version = make_prompt(owner, provider="anthropic", model="claude-sonnet-4-6")
    run = _post(api_client_for(owner), version, capture).json()
    shown = api_client_for(owner).get(run["request_url"]).json()
    assert not shown["url"].startswith(providers.origin)
    assert shown["url"] == "https://api.anthropic.com/v1/messages"
    staff = make_user("operator")
    staff.is_staff = True
    staff.save()
    grant_set(actor=owner, prompt=version.prompt, username=staff.username, role="viewer")
    assert api_client_for(staff).get(run["request_url"]).json()["url"].startswith(providers.origin)


def test_the_run_page_shows_the_request_that_was_sent(owner, inline_runs, capture, client):
    """Issue 33: the run page did not show the request. A short version's call is on the page
    (method, URL, body with the run's values); a long one's is named, not held, with its size."""
    _, short = make_prompt(
        owner,
        provider="echo",
        model="echo-1",
        system="Design: {{design}}\n",
        variables={"design": "the default design"},
    )
    run_id = _post(api_client_for(owner), short, capture, variables={"design": "a queue"}).json()[
        "id"
    ]
    client.force_login(owner)
    page = client.get(f"/playground/runs/{run_id}/").content.decode()
    assert 'id="run-request"' in page and "Request sent: <code>POST " in page
    assert "Design: a queue" in page and "&quot;model&quot;: &quot;echo-1&quot;" in page
    assert f'href="/api/v1/runs/{run_id}/request/"' in page

    _, long_version = make_prompt(
        owner, title="Long", provider="echo", model="echo-1", system=LONG + "end\n"
    )
    long_id = _post(api_client_for(owner), long_version, capture).json()["id"]
    page = client.get(f"/playground/runs/{long_id}/").content.decode()
    assert 'id="run-request"' in page and MARKER not in page
    size = re.search(r"Its texts are long \(([\d,]+) characters\)", page)
    assert size and int(size.group(1).replace(",", "")) >= len(LONG)
