"""Each account's share (issue #21): run rate and unfinished-run cap, the fair queue the
workers take runs from, and the upload limits (reserved bytes, rate). Every limit is a setting
and past it the answer is a 429 with Retry-After and a JSON detail."""

from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest
from django.utils import timezone

from playground.models import Run, Upload
from playground.runs import fair
from playground.runs.services import run_create
from playground.services import grant_set
from tests.factories import api_client_for, make_user
from tests.playground.factories import make_prompt

pytestmark = pytest.mark.django_db

ECHO = {"provider": "echo", "model": "echo-1"}


def _runs_url(version_id: int) -> str:
    return f"/api/v1/versions/{version_id}/runs/"


def _assert_429(response, says: str) -> None:
    assert response.status_code == 429, response.content
    assert int(response["Retry-After"]) >= 1
    assert says in response.json()["detail"]


# --- runs: the cap on unfinished runs, the rate ------------------------------------------------


def test_unfinished_runs_per_account_are_capped(settings):
    """Runs stay queued here (on_commit callbacks do not run in this test's transaction)."""
    settings.RUN_USER_ACTIVE_MAX = 3
    owner = make_user()
    _, version = make_prompt(owner, **ECHO)
    api = api_client_for(owner)
    for _ in range(3):
        assert api.post(_runs_url(version.pk), {}, format="json").status_code == 201
    _assert_429(api.post(_runs_url(version.pk), {}, format="json"), "RUN_USER_ACTIVE_MAX")
    assert Run.objects.count() == 3
    # a replayed idempotency key is not a new run: never refused
    first = Run.objects.order_by("pk").first()
    assert first is not None
    # another account has its own cap, on the same prompt
    viewer = make_user()
    grant_set(actor=owner, prompt=version.prompt, username=viewer.username, role="viewer")
    assert api_client_for(viewer).post(_runs_url(version.pk), {}, format="json").status_code == 201
    # a finished (or cancelled) run frees a place
    api.post(f"/api/v1/runs/{first.pk}/cancel/")
    assert api.post(_runs_url(version.pk), {}, format="json").status_code == 201


def test_a_replayed_idempotency_key_is_never_refused(settings):
    settings.RUN_USER_ACTIVE_MAX = 1
    owner = make_user()
    _, version = make_prompt(owner, **ECHO)
    api = api_client_for(owner)
    first = api.post(_runs_url(version.pk), {"idempotency_key": "k1"}, format="json")
    assert first.status_code == 201
    again = api.post(_runs_url(version.pk), {"idempotency_key": "k1"}, format="json")
    assert again.status_code == 200
    assert again.json()["id"] == first.json()["id"]
    _assert_429(
        api.post(_runs_url(version.pk), {"idempotency_key": "k2"}, format="json"),
        "queued or running",
    )


def test_run_create_itself_is_not_limited(settings):
    """Code that paces its own runs (an evaluation's cells) calls run_create, not run_start."""
    settings.RUN_USER_ACTIVE_MAX = 1
    settings.RUN_USER_RATE_LIMIT = 1
    owner = make_user()
    _, version = make_prompt(owner, **ECHO)
    assert len(_queue(owner, version, 3)) == 3
    _assert_429(api_client_for(owner).post(_runs_url(version.pk), {}, format="json"), "runs")


def test_run_rate_per_account(settings):
    settings.RUN_USER_RATE_LIMIT = 2
    owner = make_user()
    _, version = make_prompt(owner, **ECHO)
    api = api_client_for(owner)
    for _ in range(2):
        assert api.post(_runs_url(version.pk), {}, format="json").status_code == 201
    _assert_429(api.post(_runs_url(version.pk), {}, format="json"), "Too many runs")
    other = make_user()
    _, theirs = make_prompt(other, **ECHO)
    assert api_client_for(other).post(_runs_url(theirs.pk), {}, format="json").status_code == 201


def test_the_run_page_answers_429_past_the_cap(client, settings):
    settings.RUN_USER_ACTIVE_MAX = 1
    owner = make_user()
    _, version = make_prompt(owner, **ECHO)
    client.force_login(owner)
    url = f"/playground/v/{version.pk}/run/"
    first = client.post(url)
    assert first.status_code == 302
    page = client.post(url)
    assert page.status_code == 429
    assert int(page["Retry-After"]) >= 1


# --- the fair queue ---------------------------------------------------------------------------


def _queue(user, version, count: int) -> list[int]:
    return [run_create(actor=user, version=version).run.pk for _ in range(count)]


def test_the_fair_queue_alternates_accounts(settings):
    settings.RUN_USER_ACTIVE_MAX = 100
    flood, other = make_user(), make_user()
    _, version = make_prompt(flood, **ECHO)
    grant_set(actor=flood, prompt=version.prompt, username=other.username, role="viewer")
    flooded = _queue(flood, version, 6)
    late = _queue(other, version, 1)[0]
    # first the oldest (both accounts have none running), then the other account's run,
    # although five of the flood's were queued before it
    assert fair.run_claim_next() == flooded[0]
    assert fair.run_claim_next() == late
    assert fair.run_claim_next() == flooded[1]
    assert Run.objects.filter(status="running").count() == 3
    assert fair.runs_waiting_by_account() == {flood.pk: 4}


def test_a_worker_turn_executes_the_fairest_run_and_never_a_taken_one(settings, providers):
    settings.RUN_USER_ACTIVE_MAX = 100
    flood, other = make_user(), make_user()
    _, version = make_prompt(flood, **ECHO)
    grant_set(actor=flood, prompt=version.prompt, username=other.username, role="viewer")
    flooded = _queue(flood, version, 3)
    late = _queue(other, version, 1)[0]
    Run.objects.filter(pk=flooded[0]).update(status="running", heartbeat_at=timezone.now())
    # the message of the flood's second run gives the other account's run its turn
    assert fair.run_execute_next(run_id=flooded[1]) == "done"
    assert Run.objects.get(pk=late).status == "done"
    assert Run.objects.get(pk=flooded[1]).status == "queued"
    assert Run.objects.get(pk=flooded[0]).deliveries == 0  # the running one was not touched
    # more messages than queued runs: the spare turn does nothing
    assert fair.run_execute_next(run_id=flooded[2]) == "done"
    assert fair.run_execute_next(run_id=flooded[1]) == "done"
    assert fair.run_execute_next(run_id=late) == "idle"
    assert providers.requests == []  # echo runs: no provider was called at all


def test_a_redelivered_turn_fails_its_stale_run_and_sends_nothing_twice(settings, providers):
    owner = make_user()
    _, version = make_prompt(owner)  # anthropic, on the loopback server
    run = run_create(actor=owner, version=version).run
    stale = timezone.now() - timedelta(seconds=settings.RUN_STALE_SECONDS + 5)
    Run.objects.filter(pk=run.pk).update(status="running", heartbeat_at=stale, deliveries=1)
    assert fair.run_execute_next(run_id=run.pk) == "idle"
    run.refresh_from_db()
    assert run.status == "failed"
    assert "not sent again" in run.error
    assert providers.requests == []


def test_a_message_for_a_deleted_run_takes_no_turn(settings):
    owner = make_user()
    _, version = make_prompt(owner, **ECHO)
    (queued,) = _queue(owner, version, 1)
    assert fair.run_execute_next(run_id=queued + 1000) == "missing"
    assert Run.objects.get(pk=queued).status == "queued"


def test_cancelled_runs_are_never_picked(settings):
    owner = make_user()
    _, version = make_prompt(owner, **ECHO)
    first, second = _queue(owner, version, 2)
    Run.objects.filter(pk=first).update(status="cancelled")
    assert fair.run_claim_next() == second
    assert fair.run_claim_next() is None


# --- uploads ----------------------------------------------------------------------------------


def _ticket(api, size: int):
    return api.post(
        "/api/v1/uploads/",
        {"size": size, "sha256": hashlib.sha256(b"x").hexdigest()},
        format="json",
    )


def test_reserved_upload_bytes_per_account_are_capped(settings):
    settings.UPLOAD_USER_RESERVED_MAX_BYTES = 250
    settings.UPLOAD_MAX_BYTES = 1000
    owner = make_user()
    api = api_client_for(owner)
    assert _ticket(api, 100).status_code == 201
    assert _ticket(api, 100).status_code == 201
    refused = _ticket(api, 100)
    _assert_429(refused, "UPLOAD_USER_RESERVED_MAX_BYTES")
    assert refused.json()["detail"].startswith("size:")
    assert Upload.objects.filter(owner=owner).count() == 2
    assert _ticket(api, 50).status_code == 201  # what still fits is accepted
    # used or expired uploads reserve nothing any more
    Upload.objects.filter(owner=owner, size=100).update(used_at=timezone.now())
    assert _ticket(api, 100).status_code == 201
    Upload.objects.filter(owner=owner).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert _ticket(api, 250).status_code == 201
    # each account has its own reservation
    assert _ticket(api_client_for(make_user()), 250).status_code == 201


def test_upload_rate_per_account(settings):
    settings.UPLOAD_USER_RATE_LIMIT = 2
    api = api_client_for(make_user())
    assert _ticket(api, 1).status_code == 201
    assert _ticket(api, 1).status_code == 201
    _assert_429(_ticket(api, 1), "Too many uploads")
    assert _ticket(api_client_for(make_user()), 1).status_code == 201
