"""Every failure under /api/ is JSON with a `detail` (issue #10 §2): deep or hostile JSON,
NUL characters, over-long labels, odd digits, too many form fields, unhandled exceptions."""

import json
import logging

import pytest
from django.db import connection
from django.test import Client
from django.urls import path

from common.logging import ContextIds
from playground.models import Label, Prompt, PromptVersion
from tests.factories import api_client_for, make_user
from tests.playground.factories import content, make_prompt
from tests.reviews.factories import make_doc, make_review

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner():
    return make_user("owner")


@pytest.fixture
def api(owner):
    return api_client_for(owner)


def _snapshot() -> tuple[int, int, int]:
    return Prompt.objects.count(), PromptVersion.objects.count(), Label.objects.count()


def _assert_json_error(response, status: int, needle: str) -> None:
    assert response.status_code == status, response.content[:300]
    assert response["Content-Type"].startswith("application/json"), response["Content-Type"]
    assert needle in response.json()["detail"], response.json()


def _nested(depth: int) -> dict:
    schema: dict = {"type": "string"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"x": schema}}
    return schema


def test_a_body_nested_5000_deep_is_a_400(api):
    before = _snapshot()
    body = '{"title": "deep", "content": ' + "[" * 5000 + "]" * 5000 + "}"
    response = api.post("/api/v1/prompts/", body, content_type="application/json")
    _assert_json_error(response, 400, "nested")
    assert _snapshot() == before


@pytest.mark.parametrize("where", ["tools", "response_format"])
def test_deep_schemas_are_refused_at_save_time(api, where):
    deep = _nested(200)  # well under Python's recursion limit, far over ours
    if where == "tools":
        changes = {"tools": [{"name": "t", "description": "", "input_schema": deep}]}
    else:
        changes = {"response_format": {"name": "r", "schema": deep}}
    before = _snapshot()
    response = api.post(
        "/api/v1/prompts/",
        json.dumps({"title": "deep", "content": content(**changes)}),
        content_type="application/json",
    )
    _assert_json_error(response, 400, "nested")
    assert _snapshot() == before


@pytest.mark.parametrize("bad", ["nul\u0000inside", "lone \ud800 surrogate"])
@pytest.mark.parametrize("where", ["tool_value", "tool_key", "response_format"])
def test_nul_and_surrogates_in_schemas_are_refused(api, bad, where):
    if where == "tool_value":
        changes = {"tools": [{"name": "t", "input_schema": {"type": "object", "title": bad}}]}
    elif where == "tool_key":
        changes = {"tools": [{"name": "t", "input_schema": {"type": "object", bad: 1}}]}
    else:
        changes = {"response_format": {"name": "r", "schema": {"description": bad}}}
    before = _snapshot()
    # ensure_ascii keeps the lone surrogate as a \\ud800 escape, as a hostile client sends it.
    body = json.dumps({"title": "t", "content": content(**changes)})
    response = api.post("/api/v1/prompts/", body, content_type="application/json")
    _assert_json_error(response, 400, "tools" if where.startswith("tool") else "response_format")
    assert _snapshot() == before


def test_put_label_with_a_41_character_name_is_a_400(api, owner):
    prompt, root = make_prompt(owner)
    before = _snapshot()
    name = "l" * 41
    response = api.put(
        f"/api/v1/prompts/{prompt.pk}/labels/{name}/", {"version": root.pk}, format="json"
    )
    _assert_json_error(response, 400, "name")
    assert _snapshot() == before
    assert (
        api.put(
            f"/api/v1/prompts/{prompt.pk}/labels/{'l' * 40}/", {"version": root.pk}, format="json"
        ).status_code
        == 200
    )


@pytest.mark.parametrize(
    "url",
    [
        "/api/v1/questions/?kind=%00",
        "/api/v1/prompts/?search=a%00b",
        "/api/v1/prompts/1/grants/bo%00b/",
    ],
)
def test_nul_in_query_or_path_is_a_400(api, url):
    response = api.get(url) if "grants" not in url else api.delete(url)
    _assert_json_error(response, 400, "NUL")


def test_nul_in_a_page_url_is_a_400_page(owner):
    client = Client()
    client.force_login(owner)
    response = client.get("/questions/?kind=%00")
    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/html")


def test_nul_in_a_grant_username_body_is_a_400(api, owner):
    prompt, _ = make_prompt(owner)
    response = api.post(
        f"/api/v1/prompts/{prompt.pk}/grants/",
        {"username": "bo\u0000b", "role": "viewer"},
        format="json",
    )
    _assert_json_error(response, 400, "username")


@pytest.mark.parametrize("constraint", ["²", "٣", "9" * 5000])
def test_annotation_constraint_with_odd_digits_is_a_400(constraint):
    author, reviewer = make_user("author"), make_user("reviewer")
    _, revision = make_doc(author)
    review = make_review(reviewer, revision)
    response = api_client_for(reviewer).post(
        f"/api/v1/reviews/{review.pk}/annotations/",
        {
            "area": "scale-cost",
            "kind": "constraint",
            "severity": "minor",
            "body": "x",
            "constraint": constraint,
        },
        format="json",
    )
    _assert_json_error(response, 400, "constraint")


def test_a_form_with_too_many_fields_is_a_json_400(api):
    body = "&".join(f"f{i}=1" for i in range(1_500))
    response = api.post("/api/v1/prompts/", body, content_type="application/x-www-form-urlencoded")
    _assert_json_error(response, 400, "fields")


def _boom(request):
    raise RuntimeError("kaboom")


urlpatterns = [path("api/v1/boom/", _boom), path("boom/", _boom)]


def test_an_unhandled_exception_under_api_is_a_json_500_with_a_request_id(settings, caplog):
    settings.ROOT_URLCONF = __name__
    client = Client(raise_request_exception=False)
    caplog.handler.addFilter(ContextIds())  # as the console handler has (config/settings.py)
    with caplog.at_level(logging.ERROR):
        response = client.get("/api/v1/boom/")
    assert response.status_code == 500
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert "detail" in body
    assert len(body["request_id"]) >= 16
    assert response["X-Request-ID"] == body["request_id"]
    (failed,) = [r for r in caplog.records if r.getMessage() == "request.failed"]
    assert failed.request_id == body["request_id"]
    assert "kaboom" in caplog.text
    assert "kaboom" not in response.content.decode()


def test_every_response_carries_a_request_id(api):
    response = api.get("/api/v1/questions/")
    assert len(response["X-Request-ID"]) >= 16
    assert connection.vendor in ("sqlite", "postgresql")
