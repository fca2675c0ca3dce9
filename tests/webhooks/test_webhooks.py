"""Webhooks end to end against a real HTTP receiver on loopback (issue #32): registered through
the API, fired by real saves, sent after commit by the sender (a thread of this process: the
embedded default, no broker), signed, retried, redelivered, refused for private addresses, and
never holding the request whose save fired them."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time

import pytest
from django.db import connection

from playground.models import Role
from tests.factories import api_client_for, make_user
from tests.playground.factories import content, make_prompt
from tests.webhooks.receiver import receiver_running, wait_until
from webhooks.dispatch import eager_drain
from webhooks.models import Delivery

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def hooks(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True  # the receiver is on loopback
    settings.WEBHOOK_EAGER_MODE = "thread"
    settings.WEBHOOK_RETRY_BASE_SECONDS = 0.05
    settings.WEBHOOK_TIMEOUT_SECONDS = 5
    with receiver_running() as receiver:
        yield receiver
        receiver.release.set()
        # The sender finishes its last write (and closes its connection) before the test
        # database goes.
        assert eager_drain(timeout=60)


@pytest.fixture
def owner():
    return make_user("owner")


@pytest.fixture
def prompt_v1(owner):
    return make_prompt(owner)


def _register(client, prompt, url, events=("version.created",)):
    response = client.post(
        f"/api/v1/prompts/{prompt.pk}/webhooks/",
        {"url": url, "events": list(events)},
        format="json",
    )
    assert response.status_code == 201, response.content
    return response.json()


def _save(client, prompt, parent, system):
    response = client.post(
        f"/api/v1/prompts/{prompt.pk}/versions/",
        {"parent": parent, "content": content(system=system)},
        format="json",
    )
    assert response.status_code == 201, response.content
    return response.json()


def _verified(secret: str, request) -> bool:
    """What a receiver does, written here from the documented scheme (not Redline's code)."""
    timestamp = request.headers["Redline-Timestamp"]
    if abs(time.time() - int(timestamp)) > 300:
        return False
    mac = hmac.new(secret.encode(), timestamp.encode() + b"." + request.body, hashlib.sha256)
    return hmac.compare_digest("v1=" + mac.hexdigest(), request.headers["Redline-Signature"])


def _delivery_done(delivery_id):
    return lambda: Delivery.objects.get(pk=delivery_id).status != Delivery.Status.PENDING


def test_a_saved_version_reaches_the_receiver_signed_and_the_secret_is_shown_once(
    hooks, owner, prompt_v1
):
    prompt, v1 = prompt_v1
    client = api_client_for(owner)
    created = _register(client, prompt, hooks.url, ["version.created", "label.moved"])
    secret = created["secret"]
    assert secret.startswith("whsec_")
    # Never answered again, nor stored.
    listed = client.get(f"/api/v1/prompts/{prompt.pk}/webhooks/").json()
    assert [h["id"] for h in listed] == [created["id"]] and "secret" not in listed[0]
    assert secret not in json.dumps(client.get(f"/api/v1/webhooks/{created['id']}/").json())

    saved = _save(client, prompt, v1.pk, "Be brief.")
    requests = hooks.wait_for(2)
    by_event = {r.headers["Redline-Event"]: r for r in requests}
    assert set(by_event) == {"version.created", "label.moved"}
    for request in requests:
        assert request.path == "/hooks/redline"
        assert request.headers["Content-Type"] == "application/json"
        assert _verified(secret, request), request.headers
        # One byte changed: the signature no longer verifies.
        tampered = type(request)(request.path, request.headers, request.body + b" ")
        assert not _verified(secret, tampered)
    version_event = json.loads(by_event["version.created"].body)
    assert version_event["event"] == "version.created"
    assert version_event["prompt"] == {"id": prompt.pk, "title": prompt.title}
    assert version_event["data"]["version"]["id"] == saved["id"]
    assert version_event["data"]["version"]["number"] == 2
    label_event = json.loads(by_event["label.moved"].body)
    assert label_event["data"]["label"] == "main"
    assert (label_event["data"]["from_version"], label_event["data"]["to_version"]) == (
        v1.pk,
        saved["id"],
    )

    # The log: each delivery succeeded on its first attempt with the receiver's 200.
    wait_until(lambda: not Delivery.objects.filter(status=Delivery.Status.PENDING).exists())
    log = client.get(f"/api/v1/webhooks/{created['id']}/deliveries/").json()
    assert sorted(d["event"] for d in log) == ["label.moved", "version.created"]
    for delivery in log:
        assert delivery["status"] == "succeeded"
        assert [(a["number"], a["status_code"]) for a in delivery["attempt_log"]] == [(1, 200)]


def test_a_500_is_retried_with_backoff_until_the_receiver_takes_it(hooks, owner, prompt_v1):
    prompt, v1 = prompt_v1
    client = api_client_for(owner)
    created = _register(client, prompt, hooks.url)
    hooks.statuses[:] = [500, 503]
    _save(client, prompt, v1.pk, "Retry me.")
    first, second, third = hooks.wait_for(3)
    delivery = Delivery.objects.get(webhook_id=created["id"])
    wait_until(_delivery_done(delivery.pk))
    # The same delivery and body each time, each attempt signed afresh.
    assert {r.headers["Redline-Delivery"] for r in (first, second, third)} == {str(delivery.pk)}
    assert first.body == second.body == third.body
    assert all(_verified(created["secret"], r) for r in (first, second, third))
    log = client.get(f"/api/v1/webhooks/{created['id']}/deliveries/").json()
    assert log[0]["status"] == "succeeded" and log[0]["attempts"] == 3
    assert [a["status_code"] for a in log[0]["attempt_log"]] == [500, 503, 200]
    assert "500" in log[0]["attempt_log"][0]["error"]


def test_out_of_attempts_the_delivery_fails_then_a_redelivery_sends_it_again(
    hooks, owner, prompt_v1, settings
):
    settings.WEBHOOK_MAX_ATTEMPTS = 2
    prompt, v1 = prompt_v1
    client = api_client_for(owner)
    created = _register(client, prompt, hooks.url)
    hooks.statuses[:] = [500, 500]
    _save(client, prompt, v1.pk, "Fail twice.")
    hooks.wait_for(2)
    failed = Delivery.objects.get(webhook_id=created["id"])
    wait_until(_delivery_done(failed.pk))
    failed.refresh_from_db()
    assert (failed.status, failed.attempts) == ("failed", 2)

    again = client.post(f"/api/v1/deliveries/{failed.pk}/redeliver/")
    assert again.status_code == 201, again.content
    assert again.json()["redelivery_of"] == failed.pk
    third = hooks.wait_for(3)[2]
    wait_until(_delivery_done(again.json()["id"]))
    # The same event (its id and body), a new delivery id, signed afresh.
    assert third.body == hooks.requests[0].body
    assert third.headers["Redline-Delivery"] == str(again.json()["id"])
    assert _verified(created["secret"], third)
    log = client.get(f"/api/v1/webhooks/{created['id']}/deliveries/").json()
    assert [(d["id"], d["status"]) for d in log] == [
        (again.json()["id"], "succeeded"),
        (failed.pk, "failed"),
    ]
    # Not yours: 404, and nothing is sent.
    stranger = api_client_for(make_user("stranger"))
    assert stranger.post(f"/api/v1/deliveries/{failed.pk}/redeliver/").status_code == 404


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:9/hook",
        "http://localhost/hook",
        "http://10.1.2.3/hook",
        "http://192.168.0.10/hook",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]/hook",
        "http://[::ffff:127.0.0.1]/hook",
        "http://100.64.0.1/hook",
        "http://0.0.0.0/hook",
    ],
)
def test_a_private_address_is_refused_at_registration(settings, owner, prompt_v1, url):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = False
    prompt, _ = prompt_v1
    response = api_client_for(owner).post(
        f"/api/v1/prompts/{prompt.pk}/webhooks/",
        {"url": url, "events": ["version.created"]},
        format="json",
    )
    assert response.status_code == 400, response.content
    assert response.json()["field"] == "url"
    assert "address" in response.json()["detail"]


def test_a_private_address_is_refused_again_at_send_time(hooks, owner, prompt_v1, settings):
    """Registered while allowed (or while its name resolved elsewhere): the sender resolves
    and checks again, and refuses without a request or a retry."""
    prompt, v1 = prompt_v1
    client = api_client_for(owner)
    created = _register(client, prompt, hooks.url)
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = False
    _save(client, prompt, v1.pk, "Nowhere private.")
    delivery = Delivery.objects.get(webhook_id=created["id"])
    wait_until(_delivery_done(delivery.pk))
    log = client.get(f"/api/v1/webhooks/{created['id']}/deliveries/").json()
    assert log[0]["status"] == "failed"
    assert [a["status_code"] for a in log[0]["attempt_log"]] == [None]
    assert "127.0.0.1" in log[0]["attempt_log"][0]["error"]
    assert hooks.requests == []


def test_a_receiver_that_never_answers_does_not_hold_the_api_call(
    hooks, owner, prompt_v1, settings
):
    settings.WEBHOOK_TIMEOUT_SECONDS = 60  # longer than the test waits for the API call
    hooks.hang = True
    prompt, v1 = prompt_v1
    client = api_client_for(owner)
    _register(client, prompt, hooks.url)
    answers = []

    def save_in_a_thread():
        try:
            answers.append(_save(client, prompt, v1.pk, "Nobody home."))
        finally:
            connection.close()  # this thread's own connection

    call = threading.Thread(target=save_in_a_thread, daemon=True)
    call.start()
    hooks.wait_for(1)  # the delivery is being sent, and the receiver holds it...
    call.join(timeout=30)
    # ...while the API call has returned its answer.
    assert not call.is_alive() and answers and answers[0]["number"] == 2
    assert hooks.answered == 0 and not hooks.release.is_set()


def test_owners_only_and_a_limit_per_account(settings, owner, prompt_v1):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    settings.WEBHOOKS_PER_USER = 2
    prompt, _ = prompt_v1
    editor = make_user("editor")
    from playground.services import grant_set

    grant_set(actor=owner, prompt=prompt, username="editor", role=Role.EDITOR)
    body = {"url": "http://127.0.0.1:9/hook", "events": ["label.moved"]}
    path = f"/api/v1/prompts/{prompt.pk}/webhooks/"
    assert api_client_for(editor).post(path, body, format="json").status_code == 403
    assert api_client_for(editor).get(path).status_code == 403
    assert api_client_for(make_user("stranger")).get(path).status_code == 404
    client = api_client_for(owner)
    for _ in range(2):
        assert client.post(path, body, format="json").status_code == 201
    third = client.post(path, body, format="json")
    assert third.status_code == 429 and int(third["Retry-After"]) > 0
    bad = client.post(path, {"url": "ftp://example.com/", "events": ["label.moved"]}, format="json")
    assert bad.status_code == 400 and bad.json()["field"] == "url"
    unknown = client.post(
        path, {"url": "http://127.0.0.1:9/", "events": ["prompt.deleted"]}, format="json"
    )
    assert unknown.status_code == 400
    hook = client.get(path).json()[0]["id"]
    assert api_client_for(editor).delete(f"/api/v1/webhooks/{hook}/").status_code == 404
    assert client.delete(f"/api/v1/webhooks/{hook}/").status_code == 204
    assert len(client.get(path).json()) == 1


@pytest.mark.services
def test_on_a_real_celery_worker_a_500_is_retried_by_the_task(hooks, owner, prompt_v1, settings):
    """With a broker: the web process only queues the task; a worker sends, and a failed
    attempt queues the next one with its countdown."""
    import uuid

    from config.celery import app
    from tests.playground.runkit.worker import run_worker

    queue = f"webhooks-test-{uuid.uuid4().hex[:10]}"
    settings.WEBHOOK_TASK_QUEUE = queue
    prompt, v1 = prompt_v1
    client = api_client_for(owner)
    created = _register(client, prompt, hooks.url)
    hooks.statuses[:] = [500]
    with run_worker(
        queue=queue,
        WEBHOOK_TASK_QUEUE=queue,
        WEBHOOK_ALLOW_PRIVATE_URLS="1",
        WEBHOOK_RETRY_BASE_SECONDS="0.2",
    ):
        previous = app.conf.task_always_eager
        app.conf.task_always_eager = False
        try:
            _save(client, prompt, v1.pk, "Through the worker.")
            first, second = hooks.wait_for(2, timeout=60)
            delivery = Delivery.objects.get(webhook_id=created["id"])
            wait_until(_delivery_done(delivery.pk), timeout=60)
        finally:
            app.conf.task_always_eager = previous
    assert first.body == second.body and _verified(created["secret"], second)
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("succeeded", 2)
    assert eager_drain(timeout=0)  # the web process sent nothing itself


def test_a_finished_evaluation_is_announced_once_with_its_summary(hooks, owner, settings):
    settings.EVAL_EAGER_MODE = "inline"
    settings.RUN_ECHO_DELAY_MS = 0
    prompt, v1 = make_prompt(owner, provider="echo", model="echo-1")
    client = api_client_for(owner)
    created = _register(client, prompt, hooks.url, ["evaluation.finished"])
    testset = client.post(
        f"/api/v1/prompts/{prompt.pk}/testsets/",
        {"name": "designs", "rows": [{"variables": {"design": "a cache"}}] * 3},
        format="json",
    ).json()
    evaluation = client.post(
        f"/api/v1/prompts/{prompt.pk}/evals/",
        {"testset": testset["id"], "versions": [v1.pk], "graders": [{"type": "json-valid"}]},
        format="json",
    )
    assert evaluation.status_code == 201, evaluation.content
    (request,) = hooks.wait_for(1)
    wait_until(lambda: not Delivery.objects.filter(status=Delivery.Status.PENDING).exists())
    assert _verified(created["secret"], request)
    event = json.loads(request.body)
    assert event["event"] == "evaluation.finished"
    finished = event["data"]["evaluation"]
    assert (finished["id"], finished["status"]) == (evaluation.json()["id"], "done")
    assert finished["summary"][0]["cells"] == 3 and finished["summary"][0]["failed"] == 3
    # Three cells finished it, and it was announced once (no delivery per cell).
    assert Delivery.objects.filter(webhook_id=created["id"]).count() == 1
