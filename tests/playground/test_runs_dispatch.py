"""Redis down (issue #31): a request that needs the cache answers 503 with Retry-After and
writes nothing; a run accepted while the broker is down is never lost: the reaper sends it once
the broker is back, and sends again a queued run whose message Redis lost. Needs the services
(Redis as the broker); the embedded mode keeps running runs in-process."""

from __future__ import annotations

import socket
from datetime import timedelta

import pytest
from django.utils import timezone

from config.celery import app
from playground.models import Run
from playground.runs.services import runs_redispatch
from tests.factories import api_client_for, make_user
from tests.playground.factories import make_prompt
from tests.playground.runkit.broker import broker_down, fresh_queue, publishing, queue_pop

ECHO = {"provider": "echo", "model": "echo-1"}


def _runs_url(version_id: int) -> str:
    return f"/api/v1/versions/{version_id}/runs/"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.django_db
def test_the_cache_down_is_a_503_with_retry_after_and_nothing_written(settings, client):
    owner = make_user()
    _, version = make_prompt(owner, **ECHO)
    api = api_client_for(owner)
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": f"redis://127.0.0.1:{_closed_port()}/0",
        }
    }
    answer = api.post(_runs_url(version.pk), {}, format="json")
    assert answer.status_code == 503, answer.content
    assert int(answer["Retry-After"]) >= 1
    assert "unavailable" in answer.json()["detail"]
    assert not Run.objects.exists()
    # the page that starts a run answers the same way
    client.force_login(owner)
    page = client.post(f"/playground/v/{version.pk}/run/", {})
    assert page.status_code == 503
    assert int(page["Retry-After"]) >= 1
    assert not Run.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_run_accepted_while_the_broker_is_down_is_sent_once_it_is_back(settings):
    settings.RUN_ECHO_DELAY_MS = 0
    owner = make_user()
    _, version = make_prompt(owner, **ECHO)
    api = api_client_for(owner)
    with publishing(settings, fresh_queue("runs-down")) as queue:
        with broker_down():
            answer = api.post(_runs_url(version.pk), {}, format="json")
            assert answer.status_code == 201, answer.content
            run = Run.objects.get(pk=answer.json()["id"])
            assert (run.status, run.dispatched_at) == ("queued", None)
            # while it is down the reaper sends nothing and loses nothing
            assert runs_redispatch() == 0
            assert Run.objects.get(pk=run.pk).dispatched_at is None
        assert queue_pop(queue, timeout=0.2) is None
        assert runs_redispatch() == 1
        assert Run.objects.get(pk=run.pk).dispatched_at is not None
        message = queue_pop(queue)
        assert message is not None
        assert (message.task, message.args) == ("playground.run_execute", [run.pk])
        assert runs_redispatch() == 0  # sent once
        app.loader.import_default_modules()
        app.tasks[message.task].apply(args=message.args).get()
        assert Run.objects.get(pk=run.pk).status == "done"


@pytest.mark.django_db(transaction=True)
def test_a_queued_run_whose_message_was_lost_is_sent_again(settings):
    settings.RUN_REDISPATCH_SECONDS = 120
    owner = make_user()
    _, version = make_prompt(owner, **ECHO)
    with publishing(settings, fresh_queue("runs-lost")) as queue:
        answer = api_client_for(owner).post(_runs_url(version.pk), {}, format="json")
        run_id = answer.json()["id"]
        assert queue_pop(queue) is not None  # Redis restarted empty: the message is gone
        assert runs_redispatch() == 0  # sent recently: not yet
        Run.objects.filter(pk=run_id).update(dispatched_at=timezone.now() - timedelta(seconds=121))
        assert runs_redispatch() == 1
        message = queue_pop(queue)
        assert message is not None and message.args == [run_id]


@pytest.mark.django_db
def test_the_embedded_mode_still_runs_runs_in_process(settings, django_capture_on_commit_callbacks):
    settings.RUN_EAGER_MODE = "inline"
    owner = make_user()
    _, version = make_prompt(owner, **ECHO)
    with django_capture_on_commit_callbacks(execute=True):
        answer = api_client_for(owner).post(_runs_url(version.pk), {}, format="json")
    run = Run.objects.get(pk=answer.json()["id"])
    assert run.status == "done"
    assert run.dispatched_at is not None
