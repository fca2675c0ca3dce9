"""Schema-driven fuzzing of the whole HTTP API with schemathesis, with every check on.

Every operation in the OpenAPI schema gets generated requests (valid and invalid bodies, query
strings and path parameters), once from an authenticated account that owns some data and once
from an anonymous client. Then the stateful phase: schemathesis chains operations along the
links it infers from the schema (a prompt's id from `GET /prompts/` into its versions, labels,
links and grants; a version's id into its diff, export, runs, revert; a run's id into its
stream, cancel and continue, ...) and checks every answer on the way. Every schemathesis check
must pass (the CLI's `--checks all`): no 5xx, responses that match the schema (status codes,
content types, headers, bodies with their nullable fields), negative data refused, valid data
accepted, deleted resources gone, created ones available, and so on.
"""

import json

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

pytestmark = [pytest.mark.django_db, pytest.mark.schema_checked_by_test]


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
    settings.RUN_STREAM_MAX_SECONDS = 0.2


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
# - a well-formed request can still be refused with 400 where its validity depends on the
#   database or on rules across fields that OpenAPI 3.0 cannot state: a `parent`/`version`/
#   `expected` that must be a version of this prompt, a `revision`, `username` or `question` that
#   must exist, a quote that must occur in the document, an `expires_at` that must be in the
#   future, a content whose empty message list needs a system prompt, an upload larger than
#   UPLOAD_MAX_BYTES, variables the version must declare, a review still in draft, an
#   alternative that needs a tradeoff, a text range within the stored version, estimator inputs
#   that depend on the question, an export's `full=1` that is text only (not with `as=json`).
#   For those operations only, a 400 counts as an accepted answer;
#   it must still be JSON that matches the schema. Everywhere else (PATCH of a prompt, a label
#   or a document's constraints, every other read) a request the schema calls valid is accepted.
_POSITIVE = '["2xx", "400", "401", "403", "404", "409", "429"]'
_DB_DEPENDENT_PATCHES = (
    "v1_reviews_partial_update",
    "v1_annotations_partial_update",
    "v1_replies_partial_update",
)
CONFIG = SchemathesisConfig.from_str(
    "[generation]\nallow-x00 = false\n\n"
    '[[operations]]\ninclude-method = ["POST", "PUT"]\n'
    f"checks.positive_data_acceptance.expected-statuses = {_POSITIVE}\n\n"
    f"[[operations]]\ninclude-operation-id = {json.dumps(_DB_DEPENDENT_PATCHES)}\n"
    f"checks.positive_data_acceptance.expected-statuses = {_POSITIVE}\n\n"
    '[[operations]]\ninclude-path-regex = "/(diff|text|text/download|estimate|export)/$"\n'
    f"checks.positive_data_acceptance.expected-statuses = {_POSITIVE}\n"
)

# The stateful phase's bounds: scenarios, and steps in each.
STATEFUL_SCENARIOS = 60
STATEFUL_STEPS = 6

# Loaded through the app itself (in-process WSGI, no server); generating it touches no database.
schema = schemathesis.openapi.from_wsgi("/api/schema/", application, config=CONFIG)


@schema.parametrize()
@settings(
    max_examples=10,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
def test_every_check_passes(case, auth_headers):
    case.call_and_validate(headers=auth_headers)


def test_stateful_every_check_passes_along_the_links():
    """The stateful phase, as the owner of a prompt: scenarios of linked calls, every check on
    every answer. Bounded: a fixed number of scenarios of a few steps each."""
    from django.core.cache import cache

    from accounts.services import api_token_create

    cache.clear()
    owner = make_user("stateful")
    prompt_create(actor=owner, title="linked", content=content())
    _, key = api_token_create(actor=owner)
    machine = schema.as_state_machine()
    assert machine.bundles, "no links between operations: the stateful phase would test nothing"

    headers = {"Authorization": f"Token {key}"}

    reached: set[str] = set()

    class AsTheOwner(machine):  # type: ignore[misc,valid-type]
        def get_call_kwargs(self, case):
            return {"headers": headers}

        def after_call(self, response, case):
            super().after_call(response, case)
            if "{" in case.operation.path and 200 <= response.status_code < 300:
                reached.add(f"{case.method} {case.operation.path}")

        def validate_response(self, response, case, additional_checks=None, **kwargs):
            # As `case.call_and_validate(headers=...)` does: the checks must know which
            # headers carried the credentials (the ignored-auth check sends the call without).
            case.validate_response(
                response,
                additional_checks=additional_checks,
                headers=headers,
                transport_kwargs=kwargs,
                recorder=getattr(self, "recorder", None),
            )

    AsTheOwner.run(
        settings=settings(
            max_examples=STATEFUL_SCENARIOS,
            stateful_step_count=STATEFUL_STEPS,
            # The same scenarios every run: what they reach is asserted below.
            derandomize=True,
            deadline=None,
            suppress_health_check=list(HealthCheck),
        )
    )
    # The links carried real ids: operations on a prompt's (a document's, ...) own path answered.
    assert len(reached) >= 3, reached
