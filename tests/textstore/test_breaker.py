"""S3 faults fail fast (issue #21): with the object store hung (a moto server process stopped
with SIGSTOP), calls time out within the configured bounds, the circuit breaker opens and
every later call answers 503 at once, a capped number of calls wait on S3 at all, pages that
need no object storage answer as usual, and the store is used again once it is back.

The moto server here is this module's own process, so stopping it touches no other test."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator

import boto3
import pytest

from playground.services import prompt_create
from tests.conftest import free_port, wait_for_port
from tests.factories import api_client_for, make_user
from tests.playground.factories import content
from textstore import objects
from textstore.cache import text_cache
from textstore.exceptions import ObjectStoreUnavailable

pytestmark = pytest.mark.django_db

BIG = "A large system prompt line.\n" * 400  # ~11 KB: over the inline limit set below
# While the store is stopped every call waits out the read timeout: a short one, set once the
# store is stopped, so that the tests do not sit out seconds (a running moto gets 1 s).
HUNG_READ_TIMEOUT = 0.25


@pytest.fixture(scope="module")
def moto_process() -> Iterator[dict]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, process=proc)
        yield {"proc": proc, "endpoint_url": f"http://127.0.0.1:{port}"}
    finally:
        os.kill(proc.pid, signal.SIGCONT)
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture
def own_s3(moto_process, settings) -> Iterator[dict]:
    bucket = f"breaker-{uuid.uuid4().hex[:12]}"
    boto3.client(
        "s3",
        endpoint_url=moto_process["endpoint_url"],
        aws_access_key_id="test",
        aws_secret_access_key="test",
        region_name="us-east-1",
    ).create_bucket(Bucket=bucket)
    settings.S3_ENDPOINT_URL = moto_process["endpoint_url"]
    settings.S3_BUCKET = bucket
    settings.S3_ACCESS_KEY_ID = "test"
    settings.S3_SECRET_ACCESS_KEY = "test"
    settings.S3_REGION = "us-east-1"
    settings.TEXTSTORE_INLINE_MAX = 1024
    settings.S3_CONNECT_TIMEOUT = 1
    settings.S3_READ_TIMEOUT = 1
    settings.S3_MAX_ATTEMPTS = 1
    settings.S3_BREAKER_FAILURES = 2
    settings.S3_BREAKER_COOLDOWN = 300
    text_cache.clear()
    yield moto_process
    os.kill(moto_process["proc"].pid, signal.SIGCONT)
    text_cache.clear()


def _stop(s3) -> None:
    os.kill(s3["proc"].pid, signal.SIGSTOP)


def _resume(s3) -> None:
    os.kill(s3["proc"].pid, signal.SIGCONT)


def test_breaker_opens_after_the_threshold_and_fails_fast(own_s3, settings):
    objects.object_put(key="blobs/a", data=b"a")
    _stop(own_s3)
    settings.S3_READ_TIMEOUT = HUNG_READ_TIMEOUT
    for _ in range(2):  # each waits out the read timeout
        with pytest.raises(ObjectStoreUnavailable) as timed_out:
            objects.object_get(key="blobs/a")
        assert "circuit" not in str(timed_out.value)
    assert objects.breaker.state() == "open"
    with pytest.raises(ObjectStoreUnavailable) as refused:
        objects.object_get(key="blobs/a")  # refused without a call to S3
    assert "circuit open" in str(refused.value)
    assert 1 <= refused.value.retry_after <= 300
    # back, and the cooldown over: one trial call goes through and closes the breaker
    _resume(own_s3)
    settings.S3_READ_TIMEOUT = 1
    settings.S3_BREAKER_COOLDOWN = 0
    objects.breaker._open_until = 1.0  # the cooldown has passed (monotonic time 1 s)
    assert objects.breaker.state() == "half-open"
    assert objects.object_get(key="blobs/a") == b"a"
    assert objects.breaker.state() == "closed"


def test_a_failed_trial_opens_the_breaker_again(own_s3, settings):
    objects.object_put(key="blobs/b", data=b"b")
    _stop(own_s3)
    settings.S3_READ_TIMEOUT = HUNG_READ_TIMEOUT
    for _ in range(2):
        with pytest.raises(ObjectStoreUnavailable):
            objects.object_size(key="blobs/b")
    objects.breaker._open_until = 1.0
    with pytest.raises(ObjectStoreUnavailable) as trial:
        objects.object_size(key="blobs/b")  # the trial, which times out
    assert "circuit" not in str(trial.value)
    assert objects.breaker.state() == "open"


def test_missing_objects_do_not_count_as_failures(own_s3, settings):
    settings.S3_BREAKER_FAILURES = 1
    for _ in range(3):
        with pytest.raises(objects.ObjectNotFound):
            objects.object_get(key="blobs/none")
    assert objects.breaker.state() == "closed"


def test_calls_past_the_in_flight_cap_fail_at_once(own_s3, settings):
    settings.S3_MAX_IN_FLIGHT = 1
    settings.S3_IN_FLIGHT_WAIT = 0
    settings.S3_READ_TIMEOUT = 30  # the first call waits on the hung store meanwhile
    settings.S3_BREAKER_FAILURES = 100
    objects.object_put(key="blobs/c", data=b"c")
    _stop(own_s3)
    held = threading.Event()
    outcome: list[BaseException] = []
    slots = objects.breaker._semaphore(1)

    def waiting() -> None:
        try:
            objects.object_get(key="blobs/c")
        except BaseException as error:  # noqa: BLE001 - recorded for the assertion below
            outcome.append(error)
        finally:
            held.set()

    thread = threading.Thread(target=waiting)
    thread.start()
    while slots._value != 0 and not held.is_set():  # noqa: SLF001 - wait until it is in flight
        threading.Event().wait(0.01)
    with pytest.raises(ObjectStoreUnavailable) as refused:
        objects.object_get(key="blobs/c")
    assert "too many calls" in str(refused.value)
    _resume(own_s3)
    thread.join()
    assert outcome == []  # the waiting call got its answer once S3 was back


def test_over_http_a_hung_store_is_a_503_and_other_pages_answer(own_s3, settings):
    owner = make_user("owner")
    _, root = prompt_create(actor=owner, title="big", content=content(system=BIG))
    api = api_client_for(owner)
    text_cache.clear()
    _stop(own_s3)
    settings.S3_READ_TIMEOUT = HUNG_READ_TIMEOUT
    answers = [api.get(f"/api/v1/versions/{root.pk}/") for _ in range(3)]
    for response in answers:
        assert response.status_code == 503, response.content[:200]
        assert response["Content-Type"].startswith("application/json")
        assert "unavailable" in response.json()["detail"]
        assert int(response["Retry-After"]) >= 1
    assert objects.breaker.state() == "open"
    # a request that needs no object storage is not held up
    listed = api.get("/api/v1/prompts/")
    assert listed.status_code == 200
    assert listed.json()["count"] == 1
    _resume(own_s3)
