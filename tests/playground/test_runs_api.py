"""The runs API end to end: who may run, idempotency, variables, SSE, cancel, continue."""

from __future__ import annotations

import json
import threading
import time

import pytest
from django.db import connection, connections
from django.test.utils import CaptureQueriesContext

from playground.models import PromptVersion, Run
from playground.runs.services import run_execute
from playground.services import grant_set, share_link_create
from tests.factories import api_client_for, make_user
from tests.playground.exportkit.providers import Behaviour
from tests.playground.factories import make_prompt

pytestmark = pytest.mark.django_db

ECHO = {"provider": "echo", "model": "echo-1"}


@pytest.fixture
def owner():
    return make_user("owner")


@pytest.fixture
def echo_version(owner):
    _, version = make_prompt(owner, **ECHO)
    return version


def _post(client, version_id, capture=None, **body):
    if capture is None:
        return client.post(f"/api/v1/versions/{version_id}/runs/", body, format="json")
    with capture(execute=True):
        return client.post(f"/api/v1/versions/{version_id}/runs/", body, format="json")


def _events(response) -> list[tuple[str, dict]]:
    assert response["Content-Type"].startswith("text/event-stream")
    raw = b"".join(response.streaming_content).decode()
    events = []
    for block in raw.split("\n\n"):
        fields = dict(
            line.split(": ", 1) for line in block.splitlines() if ": " in line and line[0] != ":"
        )
        if "event" in fields:
            events.append((fields["event"], json.loads(fields["data"])))
    return events


def test_echo_run_end_to_end(owner, echo_version, inline_runs, django_capture_on_commit_callbacks):
    api = api_client_for(owner)
    response = _post(
        api, echo_version.pk, django_capture_on_commit_callbacks, variables={"design": "a CDN"}
    )
    assert response.status_code == 201
    created = response.json()
    assert created["status"] == "queued"
    assert created["version"] == echo_version.pk
    run = api.get(f"/api/v1/runs/{created['id']}/").json()
    assert run["status"] == "done"
    assert run["output"].startswith("Echo of a call to echo-1: 1 turn")
    assert "Review this design: a CDN" in run["output"]
    assert run["usage"]["output_tokens"] == len(run["output"].split())
    assert run["usage"]["input_tokens"] > 0
    assert run["variables"] == {"design": "a CDN"}
    # Its request is the export's Anthropic-shaped body, variables filled, at its own URL: run
    # answers never echo the prompt.
    assert "request" not in run and "request" not in created
    request = api.get(run["request_url"]).json()
    assert request["body"]["messages"][0]["content"] == "Review this design: a CDN"
    assert request["variables_filled"] is True

    listing = api.get(f"/api/v1/versions/{echo_version.pk}/runs/").json()
    assert [r["id"] for r in listing["results"]] == [run["id"]]

    events = _events(api.get(f"/api/v1/runs/{run['id']}/stream/"))
    assert [name for name, _ in events] == ["token", "done"]
    assert events[0][1]["text"] == run["output"]
    assert events[-1][1]["status"] == "done"
    assert events[-1][1]["output"] == run["output"]
    # Resuming from an offset sends only the rest.
    rest = _events(api.get(f"/api/v1/runs/{run['id']}/stream/", HTTP_LAST_EVENT_ID="10"))
    assert rest[0][1]["text"] == run["output"][10:]


def test_idempotency_key_returns_the_same_run(
    owner, echo_version, inline_runs, django_capture_on_commit_callbacks
):
    api = api_client_for(owner)
    first = _post(api, echo_version.pk, django_capture_on_commit_callbacks, idempotency_key="k1")
    again = _post(api, echo_version.pk, django_capture_on_commit_callbacks, idempotency_key="k1")
    assert first.status_code == 201
    assert again.status_code == 200
    assert again["Idempotent-Replayed"] == "true"
    assert first.json()["id"] == again.json()["id"]
    assert Run.objects.count() == 1
    other = _post(
        api, echo_version.pk, idempotency_key="k1", variables={"design": "something else"}
    )
    assert other.status_code == 409
    assert "idempotency_key" in other.json()["detail"]
    # Keys are per caller: someone else's "k1" is their own run.
    viewer = make_user()
    grant_set(actor=owner, prompt=echo_version.prompt, username=viewer.username, role="viewer")
    theirs = _post(api_client_for(viewer), echo_version.pk, idempotency_key="k1")
    assert theirs.status_code == 201
    assert theirs.json()["id"] != first.json()["id"]


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        ({"variables": {"nope": "x"}}, "variables.nope: this version declares no such variable"),
        ({"variables": {"design": 3}}, "variables.design"),
        ({"variables": "design"}, "variables"),
        ({"provider": "gemini"}, "provider"),
        ({"model": "x" * 300}, "model"),
        ({"idempotency_key": "k" * 101}, "idempotency_key"),
    ],
)
def test_bad_input_is_a_400_and_no_run(owner, echo_version, body, detail):
    response = _post(api_client_for(owner), echo_version.pk, **body)
    assert response.status_code == 400
    assert detail in response.json()["detail"]
    assert not Run.objects.exists()


def test_unfilled_placeholder_is_an_error_before_sending(owner, providers):
    _, version = make_prompt(
        owner, messages=[{"role": "user", "content": "Compare {{design}} with {{other}}"}]
    )
    response = _post(api_client_for(owner), version.pk)
    assert response.status_code == 400
    assert "{{other}} is used in the prompt but has no value" in response.json()["detail"]
    assert providers.requests == []
    assert not Run.objects.exists()


def test_who_may_run(owner, echo_version, inline_runs):
    editor, viewer, stranger, revoked = make_user(), make_user(), make_user(), make_user()
    prompt = echo_version.prompt
    grant_set(actor=owner, prompt=prompt, username=editor.username, role="editor")
    grant_set(actor=owner, prompt=prompt, username=viewer.username, role="viewer")
    grant_set(actor=owner, prompt=prompt, username=revoked.username, role="viewer")
    from playground.services import grant_revoke

    grant_revoke(actor=owner, prompt=prompt, username=revoked.username)
    for user in (owner, editor, viewer):
        assert _post(api_client_for(user), echo_version.pk).status_code == 201
    run_id = Run.objects.first().pk
    missing = _post(api_client_for(owner), 999_999)
    for user in (stranger, revoked):
        client = api_client_for(user)
        response = _post(client, echo_version.pk)
        assert response.status_code == 404
        assert response.json() == missing.json()
        assert client.get(f"/api/v1/runs/{run_id}/").status_code == 404
        assert client.get(f"/api/v1/runs/{run_id}/stream/").status_code == 404
        assert client.post(f"/api/v1/runs/{run_id}/cancel/").status_code == 404
        assert client.get(f"/api/v1/versions/{echo_version.pk}/runs/").status_code == 404
    assert api_client_for(None).post(f"/api/v1/versions/{echo_version.pk}/runs/").status_code == 401
    # A share link gives no way to run: its token is not an API credential.
    _, token = share_link_create(actor=owner, prompt=prompt, access="public", version=echo_version)
    client = api_client_for(None)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert _post(client, echo_version.pk).status_code == 401
    assert Run.objects.count() == 3


def test_cancel_a_queued_run_and_it_never_executes(owner, echo_version, providers):
    api = api_client_for(owner)
    run_id = _post(api, echo_version.pk).json()["id"]  # on_commit not run: still queued
    cancelled = api.post(f"/api/v1/runs/{run_id}/cancel/").json()
    assert cancelled["status"] == "cancelled"
    assert run_execute(run_id=run_id) == "cancelled"
    assert api.post(f"/api/v1/runs/{run_id}/cancel/").json()["status"] == "cancelled"
    # A viewer may run but not cancel someone else's run.
    viewer = make_user()
    grant_set(actor=owner, prompt=echo_version.prompt, username=viewer.username, role="viewer")
    other = _post(api, echo_version.pk).json()["id"]
    response = api_client_for(viewer).post(f"/api/v1/runs/{other}/cancel/")
    assert response.status_code == 403
    assert Run.objects.get(pk=other).status == "queued"


@pytest.mark.django_db(transaction=True)
def test_cancel_mid_stream_stops_the_provider_call(owner, providers, monkeypatch):
    _, version = make_prompt(owner)  # anthropic, on the loopback server
    monkeypatch.setattr("playground.runs.services.run_enqueue", lambda **kwargs: None)
    api = api_client_for(owner)
    run_id = _post(api, version.pk).json()["id"]  # queued; executed below on a thread
    providers.plan(Behaviour(token_delay=0.3))
    result: list[str] = []
    thread = threading.Thread(
        target=lambda: (result.append(run_execute(run_id=run_id)), connections.close_all())
    )
    thread.start()
    deadline = time.monotonic() + 30  # a loaded machine may take a while to stream the first
    while not Run.objects.get(pk=run_id).output and time.monotonic() < deadline:
        time.sleep(0.02)
    assert Run.objects.get(pk=run_id).output, "no token streamed before the deadline"
    assert api.post(f"/api/v1/runs/{run_id}/cancel/").json()["status"] == "cancelled"
    thread.join(timeout=30)
    run = Run.objects.get(pk=run_id)
    assert result == ["cancelled"]
    assert run.status == "cancelled"
    assert 0 < len(run.output) < len("Hello from the fake provider, streamed token by token.")


def test_continue_makes_a_child_version(
    owner, echo_version, inline_runs, django_capture_on_commit_callbacks
):
    api = api_client_for(owner)
    run = _post(
        api, echo_version.pk, django_capture_on_commit_callbacks, variables={"design": "a CDN"}
    ).json()
    output = Run.objects.get(pk=run["id"]).output
    response = api.post(
        f"/api/v1/runs/{run['id']}/continue/", {"message": "Now rank the risks."}, format="json"
    )
    assert response.status_code == 201, response.json()
    child = api.get(f"/api/v1/versions/{response.json()['id']}/").json()
    assert child["parent"] == echo_version.pk
    assert child["content"]["messages"][-2:] == [
        {"role": "assistant", "content": output},
        {"role": "user", "content": "Now rank the risks."},
    ]
    assert child["content"]["variables"] == {"design": "a CDN"}
    tree = api.get(f"/api/v1/prompts/{echo_version.prompt_id}/versions/").json()
    ids = [v["id"] for v in (tree["results"] if isinstance(tree, dict) else tree)]
    assert child["id"] in ids

    # The new version runs too: the conversation goes on.
    again = _post(api, child["id"], django_capture_on_commit_callbacks).json()
    assert Run.objects.get(pk=again["id"]).status == "done"
    assert "3 turns" in Run.objects.get(pk=again["id"]).output


def test_continue_rules(owner, echo_version, inline_runs, django_capture_on_commit_callbacks):
    api = api_client_for(owner)
    queued = _post(api, echo_version.pk).json()["id"]
    response = api.post(f"/api/v1/runs/{queued}/continue/", {"message": "hi"}, format="json")
    assert response.status_code == 409
    assert "queued" in response.json()["detail"]
    done = _post(api, echo_version.pk, django_capture_on_commit_callbacks).json()["id"]
    response = api.post(f"/api/v1/runs/{done}/continue/", {"message": "  "}, format="json")
    assert response.status_code == 400
    viewer = make_user()
    grant_set(actor=owner, prompt=echo_version.prompt, username=viewer.username, role="viewer")
    response = api_client_for(viewer).post(
        f"/api/v1/runs/{done}/continue/", {"message": "hi"}, format="json"
    )
    assert response.status_code == 403
    assert PromptVersion.objects.count() == 1


def test_run_list_query_count_does_not_grow(
    owner, echo_version, inline_runs, django_capture_on_commit_callbacks
):
    api = api_client_for(owner)
    url = f"/api/v1/versions/{echo_version.pk}/runs/"

    def count() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert api.get(url).status_code == 200
        return len(queries)

    _post(api, echo_version.pk, django_capture_on_commit_callbacks)
    few = count()
    for _ in range(5):
        _post(api, echo_version.pk, django_capture_on_commit_callbacks)
    assert count() == few
