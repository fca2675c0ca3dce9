"""common.logging: JSON lines in production with the request id, the task id and the extras;
`key=value` text in development; tokens redacted in extras too."""

import copy
import io
import json
import logging
import logging.config

import pytest
from django.conf import settings as django_settings
from django.http import HttpResponse, StreamingHttpResponse
from django.test import AsyncClient, Client
from django.urls import path

from common.logging import ContextIds, TextFormatter, request_id_bound
from config.celery import app
from tests.aio import run_async

logger = logging.getLogger("redline.test_logging")


def _probe(request):
    logger.info("probe.done", extra={"probe_id": 7, "where": "/s/rl_abcdefghijklmnop/"})
    return HttpResponse("ok")


def _streamed_probe(request):
    def body():
        yield b"first\n"
        logger.info("probe.streamed", extra={"probe_id": 9})  # after the view has returned
        yield b"second\n"

    return StreamingHttpResponse(body())


def _async_streamed_probe(request):
    async def body():
        yield b"first\n"
        logger.info("probe.streamed_async", extra={"probe_id": 10})
        yield b"second\n"

    return StreamingHttpResponse(body())


urlpatterns = [
    path("probe/", _probe),
    path("streamed/", _streamed_probe),
    path("streamed-async/", _async_streamed_probe),
]


@app.task(name="tests.log_probe")
def log_probe() -> None:
    logger.info("probe.task", extra={"probe_id": 8})


@pytest.fixture
def json_lines():
    """The project's LOGGING in production mode (LOG_FORMAT=json); returns the lines its
    console handler wrote while the test ran, parsed."""
    config = copy.deepcopy(django_settings.LOGGING)
    config["handlers"]["console"]["formatter"] = "json"
    logging.config.dictConfig(config)
    (console,) = [h for h in logging.getLogger().handlers if h.name == "console"]
    written = io.StringIO()
    console.setStream(written)  # type: ignore[attr-defined]
    try:
        yield lambda: [json.loads(line) for line in written.getvalue().splitlines()]
    finally:
        logging.config.dictConfig(django_settings.LOGGING)


def test_a_production_line_is_json_with_the_request_id_of_the_response_and_the_extras(
    settings, json_lines
):
    settings.ROOT_URLCONF = __name__
    response = Client().get("/probe/")
    (line,) = [line for line in json_lines() if line["message"] == "probe.done"]
    assert line["request_id"] == response["X-Request-ID"]
    assert len(line["request_id"]) >= 16
    assert line["probe_id"] == 7
    assert line["where"] == "/s/rl_[redacted]/"  # extras are redacted like the message
    assert line["level"] == "INFO"
    assert line["logger"] == "redline.test_logging"
    assert line["task_id"] is None
    assert line["time"].endswith("+00:00")


def test_the_request_id_is_gone_after_the_request(settings, json_lines):
    settings.ROOT_URLCONF = __name__
    Client().get("/probe/")
    logger.info("after.request")
    (line,) = [line for line in json_lines() if line["message"] == "after.request"]
    assert line["request_id"] is None


def test_a_task_line_carries_the_task_id(json_lines):
    result = log_probe.delay()  # eager in tests: the same logging path as in a worker
    (line,) = [line for line in json_lines() if line["message"] == "probe.task"]
    assert line["task_id"] == result.id
    assert line["probe_id"] == 8


def test_a_traceback_stays_in_the_json_line(json_lines):
    try:
        raise ValueError("kaboom")
    except ValueError:
        logger.exception("probe.failed", extra={"probe_id": 9})
    (line,) = [line for line in json_lines() if line["message"] == "probe.failed"]
    assert "ValueError: kaboom" in line["exc_info"]
    assert line["probe_id"] == 9


def test_development_text_shows_the_ids_and_extras_as_key_value():
    record = logger.makeRecord(
        logger.name, logging.INFO, __file__, 1, "run.done", (), None, extra={"run_id": 3}
    )
    with request_id_bound("r1"):
        ContextIds().filter(record)
    text = TextFormatter().format(record)
    assert text.endswith("INFO redline.test_logging run.done request_id=r1 run_id=3")


def test_development_text_without_extras_is_the_plain_line():
    record = logger.makeRecord(logger.name, logging.INFO, __file__, 1, "started", (), None)
    ContextIds().filter(record)
    assert TextFormatter().format(record).endswith("INFO redline.test_logging started")


def test_a_streamed_body_logs_with_its_request_id(settings, json_lines):
    settings.ROOT_URLCONF = __name__
    response = Client().get("/streamed/")
    assert b"".join(response.streaming_content) == b"first\nsecond\n"
    (line,) = [line for line in json_lines() if line["message"] == "probe.streamed"]
    assert line["request_id"] == response["X-Request-ID"]
    logger.info("after.stream")
    (after,) = [line for line in json_lines() if line["message"] == "after.stream"]
    assert after["request_id"] is None


def test_an_async_streamed_body_logs_with_its_request_id(settings, json_lines):
    settings.ROOT_URLCONF = __name__

    async def read():
        response = await AsyncClient().get("/streamed-async/")
        body = b"".join([part async for part in response.streaming_content])
        return response["X-Request-ID"], body

    request_id, body = run_async(read())
    assert body == b"first\nsecond\n"
    (line,) = [line for line in json_lines() if line["message"] == "probe.streamed_async"]
    assert line["request_id"] == request_id
