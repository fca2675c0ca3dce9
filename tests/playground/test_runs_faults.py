"""Faults: each leaves the run `failed` with a readable reason, never stuck in `running`.

Every fault runs twice: eagerly in-process (the embedded default) and through a real Celery
worker on Redis (the services pass; skipped without a broker, failed if the pass expects one).
The provider is the loopback server speaking the Anthropic/OpenAI wire protocols.
"""

from __future__ import annotations

import os
import signal
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from config.celery import app
from playground.models import Run
from playground.runs.services import run_execute, runs_reap_stale
from playground.runs.tasks import runs_reap_stale as runs_reap_stale_task
from tests.factories import api_client_for, make_user
from tests.playground.exportkit.providers import STREAM_TEXT, Behaviour
from tests.playground.factories import make_prompt
from tests.playground.runkit.worker import run_worker

pytestmark = pytest.mark.django_db(transaction=True)

MODELS = {"anthropic": "claude-sonnet-4-6", "openai": "gpt-4.1-mini"}


def _worker_env(server) -> dict[str, str]:
    return {
        "ANTHROPIC_BASE_URL": server.origin,
        "ANTHROPIC_API_KEY": "sk-ant-test",
        "OPENAI_BASE_URL": f"{server.origin}/v1",
        "OPENAI_API_KEY": "sk-openai-test",
        "RUN_PROVIDER_TIMEOUT": "1",
        "RUN_RETRY_ATTEMPTS": "3",
        "RUN_RETRY_MAX_WAIT": "2",
        "RUN_STALE_SECONDS": "2",
        "RUN_ECHO_DELAY_MS": "0",
    }


@pytest.fixture(scope="module")
def fault_worker(django_db_setup, provider_server):
    with run_worker(**_worker_env(provider_server)) as worker:
        yield worker


@pytest.fixture(params=["eager", "worker"])
def executor(request, providers, settings):
    """Where runs execute: in-process (eager) or in the real worker (Redis)."""
    settings.RUN_PROVIDER_TIMEOUT = 1.0
    settings.RUN_RETRY_ATTEMPTS = 3
    settings.RUN_RETRY_MAX_WAIT = 2.0
    if request.param == "eager":
        yield "eager"
        return
    worker = request.getfixturevalue("fault_worker")
    settings.RUN_TASK_QUEUE = worker.queue
    previous = app.conf.task_always_eager
    app.conf.task_always_eager = False
    yield "worker"
    app.conf.task_always_eager = previous


def _start(owner, provider: str = "anthropic") -> int:
    _, version = make_prompt(owner, provider=provider, model=MODELS[provider])
    response = api_client_for(owner).post(f"/api/v1/versions/{version.pk}/runs/", {}, format="json")
    assert response.status_code == 201, response.json()
    return response.json()["id"]


def _finished(run_id: int, timeout: float = 30) -> Run:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = Run.objects.get(pk=run_id)
        if run.status in Run.FINISHED:
            return run
        time.sleep(0.05)
    raise AssertionError(f"run {run_id} still {Run.objects.get(pk=run_id).status}")


def test_provider_timeout(executor, providers):
    providers.plan(Behaviour(kind="sleep", seconds=2.5))
    run = _finished(_start(make_user()))
    assert run.status == "failed"
    assert "did not answer within 1 s (timeout)" in run.error


def test_429_is_retried_after_its_retry_after(executor, providers):
    providers.plan(
        Behaviour(kind="status", status=429, retry_after="0.2"),
        Behaviour(kind="status", status=429, retry_after="0.2"),
    )
    run = _finished(_start(make_user()))
    assert run.status == "done", run.error
    assert run.output == STREAM_TEXT
    assert len(providers.requests) == 3


def test_429_past_the_attempt_bound_fails(executor, providers):
    providers.plan(*[Behaviour(kind="status", status=429, retry_after="0.1")] * 3)
    run = _finished(_start(make_user()))
    assert run.status == "failed"
    assert "rate limiting" in run.error
    assert "Gave up after 3 attempts" in run.error
    assert len(providers.requests) == 3


def test_429_asking_for_too_long_a_wait_fails_at_once(executor, providers):
    providers.plan(Behaviour(kind="status", status=429, retry_after="120"))
    run = _finished(_start(make_user()))
    assert run.status == "failed"
    assert "retry after 120 s, more than the 2 s a run waits" in run.error
    assert len(providers.requests) == 1


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_server_error(executor, providers, provider):
    providers.plan(Behaviour(kind="status", status=503))
    run = _finished(_start(make_user(), provider))
    assert run.status == "failed"
    assert "server error (503): planned failure" in run.error


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_malformed_stream(executor, providers, provider):
    providers.plan(Behaviour(kind="malformed"))
    run = _finished(_start(make_user(), provider))
    assert run.status == "failed"
    assert "malformed" in run.error
    assert run.output == "Hello from"  # what arrived before the bad event is kept


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_cut_off_stream(executor, providers, provider):
    providers.plan(Behaviour(kind="cut"))
    run = _finished(_start(make_user(), provider))
    assert run.status == "failed"
    assert "cut off" in run.error or "ended before the reply finished" in run.error
    assert run.output == "Hello from the"


def test_worker_killed_mid_run_is_failed_by_the_reaper(provider_server, settings):
    """SIGKILL the worker while it streams: the run is failed (not re-sent) by the periodic
    reaper, which here runs in a second real worker."""
    provider_server.clear()
    settings.ANTHROPIC_BASE_URL = provider_server.origin
    settings.ANTHROPIC_API_KEY = "sk-ant-test"
    env = _worker_env(provider_server)
    with run_worker(**env) as victim, run_worker(**env) as survivor:
        settings.RUN_TASK_QUEUE = victim.queue
        previous = app.conf.task_always_eager
        app.conf.task_always_eager = False
        try:
            provider_server.plan(Behaviour(token_delay=0.4))
            run_id = _start(make_user())
            deadline = time.monotonic() + 30
            while not Run.objects.get(pk=run_id).output and time.monotonic() < deadline:
                time.sleep(0.05)
            assert Run.objects.get(pk=run_id).status == "running"
            os.kill(victim.process.pid, signal.SIGKILL)
            victim.process.wait(timeout=10)
            # The survivor's reaper fails the run once its heartbeat is RUN_STALE_SECONDS old:
            # asked again until it does (or 30 s), instead of sleeping past the threshold.
            deadline = time.monotonic() + 30
            while not (
                reaped := runs_reap_stale_task.apply_async(queue=survivor.queue).get(timeout=30)
            ):
                assert time.monotonic() < deadline, "the reaper never failed the killed run"
                time.sleep(0.2)
        finally:
            app.conf.task_always_eager = previous
    run = Run.objects.get(pk=run_id)
    assert reaped == 1
    assert run.status == "failed"
    assert "stopped responding" in run.error
    assert run.output.startswith("Hello")  # the part that streamed is kept
    assert len(provider_server.requests) == 1  # never sent twice


def test_redelivered_task_never_sends_the_call_twice(providers, settings):
    """acks_late re-delivers a dead worker's task: a run still being worked on (fresh
    heartbeat) is left alone, one whose worker went silent is failed — neither is re-sent."""
    settings.RUN_EAGER_MODE = "thread"
    settings.RUN_STALE_SECONDS = 60
    owner = make_user()
    _, version = make_prompt(owner)
    now = timezone.now()
    run = Run.objects.create(
        version=version,
        created_by=owner,
        provider="anthropic",
        model="m",
        status="running",
        started_at=now,
        heartbeat_at=now,
    )
    assert run_execute(run_id=run.pk) == "running"
    Run.objects.filter(pk=run.pk).update(heartbeat_at=now - timedelta(seconds=61))
    assert run_execute(run_id=run.pk) == "failed"
    run.refresh_from_db()
    assert "stopped mid-run" in run.error
    assert providers.requests == []
    assert run_execute(run_id=run.pk) == "failed"  # and again: a no-op


def test_reaper_fails_silent_and_unclaimed_runs_only(providers, settings):
    settings.RUN_STALE_SECONDS = 60
    settings.RUN_QUEUED_MAX_SECONDS = 600
    owner = make_user()
    _, version = make_prompt(owner)
    now = timezone.now()
    base = {
        "version": version,
        "created_by": owner,
        "provider": "anthropic",
        "model": "m",
    }
    silent = Run.objects.create(**base, status="running", heartbeat_at=now - timedelta(seconds=90))
    alive = Run.objects.create(**base, status="running", heartbeat_at=now)
    waiting = Run.objects.create(**base, status="queued")
    Run.objects.filter(pk=waiting.pk).update(created_at=now - timedelta(seconds=700))
    fresh = Run.objects.create(**base, status="queued")
    done = Run.objects.create(**base, status="done", heartbeat_at=now - timedelta(days=1))
    assert runs_reap_stale() == 2
    statuses = dict(Run.objects.values_list("pk", "status"))
    assert statuses == {
        silent.pk: "failed",
        alive.pk: "running",
        waiting.pk: "failed",
        fresh.pk: "queued",
        done.pk: "done",
    }
    assert "No worker took this run" in Run.objects.get(pk=waiting.pk).error
    assert runs_reap_stale() == 0


def test_reaped_runs_stream_readers_are_told(
    settings, monkeypatch, django_capture_on_commit_callbacks
):
    """A run the reaper fails is announced on its channel like one its worker fails, so an open
    stream ends at once instead of at its next poll of the row (issue #35: one write path).
    The channel's publish is recorded here; the services pass runs the real Redis path."""
    from playground.runs import notify

    settings.RUN_STALE_SECONDS = 60
    settings.RUN_QUEUED_MAX_SECONDS = 600
    settings.REDIS_URL = settings.REDIS_URL or "redis://127.0.0.1:1/0"  # the channel is on
    sent: list[tuple[str, dict]] = []
    monkeypatch.setattr(
        notify, "_publish", lambda channel, message: sent.append((channel, message))
    )
    owner = make_user()
    _, version = make_prompt(owner)
    now = timezone.now()
    base = {"version": version, "created_by": owner, "provider": "anthropic", "model": "m"}
    silent = Run.objects.create(**base, status="running", heartbeat_at=now - timedelta(seconds=90))
    alive = Run.objects.create(**base, status="running", heartbeat_at=now)
    with django_capture_on_commit_callbacks(execute=True):
        assert runs_reap_stale() == 1
    assert sent == [(notify.run_channel(silent.pk), {"s": "failed"})]
    assert Run.objects.get(pk=alive.pk).status == "running"
