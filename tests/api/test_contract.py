"""The schema is the truth: what `/api/schema/` says about a request or an answer is what the
server does (issue #22). Every answer in these tests is also checked against the schema by the
suite-wide fixture (tests/schemacheck.py); the tests below pin the places where the two used to
disagree, and the checker itself."""

import json

import pytest
from django.http import JsonResponse
from rest_framework.response import Response

from accounts.models import ApiToken
from accounts.services import api_token_create, api_token_revoke
from playground.services import label_move
from tests.factories import api_client_for, make_user
from tests.playground.factories import make_prompt, save
from tests.schemacheck import SchemaMismatch

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner():
    return make_user("owner")


@pytest.fixture
def api(owner):
    return api_client_for(owner)


def _operation(api_schema, method: str, template: str) -> dict:
    return api_schema.document["paths"][template][method]


def _body_schema(api_schema, method: str, template: str) -> dict:
    ref = _operation(api_schema, method, template)["requestBody"]["content"]["application/json"]
    name = ref["schema"]["$ref"].rsplit("/", 1)[1]
    return api_schema.document["components"]["schemas"][name]


def _param(api_schema, method: str, template: str, name: str) -> dict:
    params = _operation(api_schema, method, template)["parameters"]
    return next(p for p in params if p["name"] == name)


# --- the checker ------------------------------------------------------------------------------


def test_the_checker_names_the_operation_status_path_and_what_failed(api_schema):
    from tests.schemacheck import ResponseChecker

    checker = ResponseChecker(api_schema)
    wrong_body = checker.problem("GET", "/api/v1/runs/5/", JsonResponse({"id": "five"}))
    assert wrong_body is not None
    message = str(wrong_body)
    assert "GET /api/v1/runs/5/ -> 200" in message
    assert "operation v1_runs_retrieve (GET /api/v1/runs/{run_id}/)" in message
    assert "does not validate" in message

    undocumented = checker.problem("GET", "/api/v1/runs/5/", JsonResponse({}, status=202))
    assert undocumented is not None and "status 202 is not documented" in str(undocumented)

    wrong_type = checker.problem(
        "GET", "/api/v1/prompts/1/", JsonResponse({"detail": "x"}, status=404)
    )
    assert wrong_type is None  # a documented error body

    method = checker.problem("PUT", "/api/v1/versions/1/", JsonResponse({}, status=200))
    assert method is not None and "PUT is not documented" in str(method)
    # Paths outside the API and Django's own 405 for an undocumented method are not operations.
    assert checker.problem("GET", "/api/v1/no-such-thing/", JsonResponse({}, status=404)) is None
    assert checker.problem("PUT", "/api/v1/versions/1/", JsonResponse({}, status=405)) is None


def test_the_suite_fixture_fails_a_test_whose_answer_breaks_the_schema(api, owner, monkeypatch):
    """Every test's answers go through the checker: a view that answers off-schema fails the
    request it was made by, with the operation named."""
    from playground.api.prompts import PromptDetailApi

    prompt, _ = make_prompt(owner)
    monkeypatch.setattr(
        PromptDetailApi, "get", lambda self, request, prompt_id: Response({"id": "not a number"})
    )
    with pytest.raises(
        SchemaMismatch,
        match=r"GET /api/v1/prompts/\d+/ -> 200, operation v1_prompts_retrieve .*does not validate",
    ):
        api.get(f"/api/v1/prompts/{prompt.pk}/")


# --- nullability, statuses, media types ---------------------------------------------------------


def test_run_timings_are_nullable_integers_in_the_schema(api_schema):
    run = api_schema.document["components"]["schemas"]["Run"]["properties"]
    for name in ("queue_ms", "time_to_first_token_ms", "total_ms"):
        assert run[name]["type"] == "integer"
        assert run[name]["nullable"] is True, name


def test_revert_documents_and_answers_200_when_nothing_changed(api_schema, api, owner):
    responses = _operation(api_schema, "post", "/api/v1/versions/{version_id}/revert/")["responses"]
    assert {"200", "201"} <= set(responses)
    prompt, root = make_prompt(owner)
    # Reverting to the version `main` already holds creates nothing: 200, `unchanged`.
    response = api.post(f"/api/v1/versions/{root.pk}/revert/", {}, format="json")
    assert response.status_code == 200
    assert response.json()["unchanged"] is True


def test_the_stream_is_documented_as_server_sent_events_only(api_schema):
    content = _operation(api_schema, "get", "/api/v1/runs/{run_id}/stream/")["responses"]["200"][
        "content"
    ]
    assert list(content) == ["text/event-stream"]


# --- request constraints: the schema says what the server checks --------------------------------


@pytest.mark.parametrize(
    ("method", "template", "field"),
    [
        ("patch", "/api/v1/prompts/{prompt_id}/labels/{name}/", "protected"),
        ("patch", "/api/v1/docs/{doc_id}/", "constraints"),
    ],
)
def test_a_patch_body_requires_what_the_server_requires(api_schema, method, template, field):
    assert field in _body_schema(api_schema, method, template)["required"]


def test_an_empty_label_patch_is_a_400_naming_protected(api, owner):
    prompt, _ = make_prompt(owner)
    response = api.patch(f"/api/v1/prompts/{prompt.pk}/labels/main/", {}, format="json")
    assert response.status_code == 400
    assert response.json()["detail"].startswith("protected:")


@pytest.mark.parametrize("value", [0, 1, "true", "yes", None, []])
def test_booleans_take_only_true_or_false(api, owner, value):
    prompt, _ = make_prompt(owner)
    archived = api.patch(f"/api/v1/prompts/{prompt.pk}/", {"archived": value}, format="json")
    assert archived.status_code == 400
    assert archived.json()["detail"].startswith("archived:")
    protected = api.patch(
        f"/api/v1/prompts/{prompt.pk}/labels/main/", {"protected": value}, format="json"
    )
    assert protected.status_code == 400
    assert protected.json()["detail"].startswith("protected:")
    # Real booleans are taken.
    ok = api.patch(f"/api/v1/prompts/{prompt.pk}/labels/main/", {"protected": True}, format="json")
    assert ok.status_code == 200 and ok.json()["protected"] is True


@pytest.mark.parametrize("page_size", ["null", "", "0", "-1", "abc", "1.5", "1001"])
def test_a_page_size_outside_the_schema_is_a_400_naming_it(api_schema, api, owner, page_size):
    param = _param(api_schema, "get", "/api/v1/prompts/{prompt_id}/versions/", "page_size")
    assert (param["schema"]["minimum"], param["schema"]["maximum"]) == (1, 1000)
    prompt, _ = make_prompt(owner)
    response = api.get(f"/api/v1/prompts/{prompt.pk}/versions/?page_size={page_size}")
    assert response.status_code == 400
    assert response.json()["field"] == "page_size"


def test_a_page_size_inside_the_schema_pages(api, owner):
    prompt, root = make_prompt(owner)
    save(owner, prompt, root, system="second")
    body = api.get(f"/api/v1/prompts/{prompt.pk}/versions/?page_size=1").json()
    assert (body["count"], len(body["results"])) == (2, 1)


def test_upload_sha256_and_size_constraints_are_in_the_schema(api_schema, api):
    schema = _body_schema(api_schema, "post", "/api/v1/uploads/")
    assert schema["properties"]["sha256"]["pattern"] == "^[0-9a-fA-F]{64}$"
    assert schema["properties"]["size"]["minimum"] == 0
    bad = api.post("/api/v1/uploads/", {"size": 3, "sha256": "ab" * 31 + "zz"}, format="json")
    assert bad.status_code == 400 and bad.json()["detail"].startswith("sha256:")
    negative = api.post("/api/v1/uploads/", {"size": -1, "sha256": "ab" * 32}, format="json")
    assert negative.status_code == 400 and negative.json()["detail"].startswith("size:")
    upper = api.post("/api/v1/uploads/", {"size": 3, "sha256": "AB" * 32}, format="json")
    assert upper.status_code == 201


def test_estimator_ranges_are_in_the_schema(api_schema, api):
    template = "/api/v1/questions/{slug}/estimate/"
    rate = _param(api_schema, "get", template, "rate")["schema"]
    assert (rate["type"], rate["minimum"], rate["maximum"]) == ("number", 0.001, 1_000_000)
    hosts = _param(api_schema, "get", template, "hosts")["schema"]
    assert (hosts["type"], hosts["minimum"], hosts["exclusiveMinimum"]) == ("integer", 0, True)
    response = api.get(
        "/api/v1/questions/llm-inference-api/estimate/",
        {"rate": "0", "batch": "8", "latency_ms": "200", "fill": "0.5"},
    )
    assert response.status_code == 400 and response.json()["field"] == "rate"


# --- small contract items -----------------------------------------------------------------------


def test_a_diff_against_an_unknown_version_is_404(api, owner):
    prompt, root = make_prompt(owner)
    other_prompt, foreign = make_prompt(owner, title="other")
    for against in (99_999_999, foreign.pk):
        response = api.get(f"/api/v1/versions/{root.pk}/diff/", {"against": against})
        assert response.status_code == 404, against
        assert response.json() == {"detail": "Not found."}
    not_an_id = api.get(f"/api/v1/versions/{root.pk}/diff/", {"against": "v1"})
    assert not_an_id.status_code == 400 and not_an_id.json()["field"] == "against"
    missing = api.get(f"/api/v1/versions/{root.pk}/diff/")
    assert missing.status_code == 400 and missing.json()["field"] == "against"


def test_a_revoked_api_key_gets_401_even_with_an_etag(owner):
    from rest_framework.test import APIClient

    prompt, root = make_prompt(owner)
    label_move(
        actor=owner,
        prompt=prompt,
        name="production",
        version=root,
        expected=None,
        expected_given=True,
    )
    token, key = api_token_create(actor=owner)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    url = f"/api/v1/prompts/{prompt.pk}/labels/production/version/"
    first = client.get(url)
    assert first.status_code == 200
    api_token_revoke(actor=owner, token=ApiToken.objects.get(pk=token.pk))
    again = client.get(url, HTTP_IF_NONE_MATCH=first["ETag"])
    assert again.status_code == 401  # a bad credential: never 304, never 404
    assert again["WWW-Authenticate"].startswith("Token")
    assert "detail" in json.loads(again.content)
