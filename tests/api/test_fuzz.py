"""Schema-driven fuzzing of the whole HTTP API with schemathesis: no input is a server error.

Every operation in the OpenAPI schema gets generated requests (valid and invalid bodies, query
strings and path parameters) from an authenticated account that owns some data; any 5xx fails.
"""

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error

from config.wsgi import application
from playground.services import prompt_create
from tests.factories import make_user
from tests.playground.factories import content

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _keep_the_test_connection():
    """Requests go straight through the WSGI app, not Django's test client, so the end of each
    request would close the database connection inside the test's transaction (PostgreSQL).
    Do what the test client does: keep it open."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture(autouse=True)
def _short_run_streams(settings) -> None:
    """A fuzzed run stays queued (its task is enqueued on commit, which never comes inside the
    test's transaction), so its event stream would wait for it: cut streams short."""
    settings.RUN_STREAM_MAX_SECONDS = 1


@pytest.fixture
def auth_headers() -> dict[str, str]:
    from accounts.services import api_token_create

    owner = make_user("fuzzer")
    prompt_create(actor=owner, title="fuzzed", content=content())
    _, key = api_token_create(actor=owner)
    return {"Authorization": f"Token {key}"}


# Loaded through the app itself (in-process WSGI, no server); generating it touches no database.
schema = schemathesis.openapi.from_wsgi("/api/schema/", application)


@schema.parametrize()
@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
def test_no_request_is_a_server_error(case, auth_headers):
    response = case.call(headers=auth_headers)
    case.validate_response(response, checks=[not_a_server_error])
