"""Schema-driven fuzzing of the whole HTTP API with schemathesis, with every check on.

Every operation in the OpenAPI schema gets generated requests (valid and invalid bodies, query
strings and path parameters), once from an authenticated account that owns some data and once
from an anonymous client. Every schemathesis check must pass: no 5xx, responses that match the
schema (status codes, content types, headers, bodies with their nullable fields), negative
data refused, and so on.
"""

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.config import SchemathesisConfig

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


@pytest.fixture(params=["token", "anonymous"])
def auth_headers(request) -> dict[str, str]:
    from django.core.cache import cache

    from accounts.services import api_token_create

    cache.clear()  # the fuzzer's failed log-ins must not throttle the next example
    owner = make_user("fuzzer")
    prompt_create(actor=owner, title="fuzzed", content=content())
    if request.param == "anonymous":
        return {}
    _, key = api_token_create(actor=owner)
    return {"Authorization": f"Token {key}"}


# Every check runs for every operation. Two settings say what the schema cannot:
# - no generated string holds NUL: the API refuses NUL everywhere (PostgreSQL cannot store it);
# - a well-formed write (POST/PUT/PATCH) or diff can still be refused with 400, because its
#   validity depends on the database or on rules across fields that OpenAPI 3.0 cannot state:
#   a `parent`/`version`/`against` that must be a version of this prompt, a `revision`, `username`
#   or `question` that must exist, a quote that must occur in the document, an `expires_at` that
#   must be in the future, a content whose empty message list needs a system prompt, a text
#   range's message index or offset that must lie within the stored version. For those
#   only, a 400 counts as an accepted answer; it must still be JSON that matches the schema.
_POSITIVE = '["2xx", "400", "401", "403", "404", "409", "429"]'
CONFIG = SchemathesisConfig.from_str(
    "[generation]\nallow-x00 = false\n\n"
    '[[operations]]\ninclude-method = ["POST", "PUT", "PATCH"]\n'
    f"checks.positive_data_acceptance.expected-statuses = {_POSITIVE}\n\n"
    '[[operations]]\ninclude-path-regex = "/diff/$"\n'
    f"checks.positive_data_acceptance.expected-statuses = {_POSITIVE}\n\n"
    '[[operations]]\ninclude-path-regex = "/text/(download/)?$"\n'
    f"checks.positive_data_acceptance.expected-statuses = {_POSITIVE}\n"
)

# Loaded through the app itself (in-process WSGI, no server); generating it touches no database.
schema = schemathesis.openapi.from_wsgi("/api/schema/", application, config=CONFIG)


@schema.parametrize()
@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
def test_every_check_passes(case, auth_headers):
    case.call_and_validate(headers=auth_headers)
