"""A lone surrogate anywhere in a JSON body is a 400 naming the field (common.parsers), and
share tokens never reach a log line, percent-encoded or not (common.logging)."""

import logging

import pytest

from common.logging import REDACTED, RedactTokens, redact
from playground.services import grant_set
from tests.factories import api_client_for, make_user
from tests.playground.factories import make_prompt

pytestmark = pytest.mark.django_db

SURROGATE = '"\\ud800"'  # valid JSON, not valid UTF-8 once decoded


def _post(client, url, body: str, method="post"):
    return getattr(client, method)(url, body, content_type="application/json")


def _assert_names(response, field):
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["field"] == field
    assert body["detail"].startswith(f"{field}:")
    assert "surrogate" in body["detail"]


def test_lone_surrogates_in_playground_bodies_are_400s_naming_the_field():
    owner = make_user()
    prompt, version = make_prompt(owner, provider="echo", model="echo-1")
    api = api_client_for(owner)
    _assert_names(
        _post(
            api, f"/api/v1/prompts/{prompt.pk}/links/", '{"access": @@}'.replace("@@", SURROGATE)
        ),
        "access",
    )
    _assert_names(
        _post(
            api,
            f"/api/v1/prompts/{prompt.pk}/grants/",
            '{"username": "x", "role": @@}'.replace("@@", SURROGATE),
        ),
        "role",
    )
    _assert_names(
        _post(
            api, f"/api/v1/versions/{version.pk}/runs/", '{"provider": @@}'.replace("@@", SURROGATE)
        ),
        "provider",
    )
    _assert_names(
        _post(
            api,
            f"/api/v1/versions/{version.pk}/runs/",
            '{"variables": {"a": ["ok", @@]}}'.replace("@@", SURROGATE),
        ),
        "variables.a.1",
    )
    # in a key: the path names it with the surrogate escaped, so the 400 itself renders
    response = _post(api, f"/api/v1/prompts/{prompt.pk}/links/", '{"\\udfff": 1}')
    assert response.status_code == 400
    assert response.json()["field"] == "\\udfff"
    assert not prompt.links.exists()


def test_lone_surrogates_in_review_bodies_are_400s_naming_the_field():
    author = make_user()
    api = api_client_for(author)
    doc = api.post("/api/v1/docs/", {"title": "T", "body": "Some text."}, format="json").json()
    reviewer = api_client_for(make_user())
    review = reviewer.post("/api/v1/reviews/", {"revision": doc["latest_revision"]}, format="json")
    assert review.status_code == 201, review.content
    url = f"/api/v1/reviews/{review.json()['id']}/annotations/"
    good = {"area": "security", "kind": "risk", "severity": "major", "body": "b"}
    for field in ("area", "kind", "severity"):
        body = (
            "{"
            + ", ".join(
                f'"{k}": {SURROGATE if k == field else chr(34) + v + chr(34)}'
                for k, v in good.items()
            )
            + "}"
        )
        _assert_names(_post(reviewer, url, body), field)
    created = reviewer.post(url, good, format="json")
    assert created.status_code == 201, created.content
    _assert_names(
        _post(
            reviewer,
            f"/api/v1/annotations/{created.json()['id']}/",
            '{"status": @@}'.replace("@@", SURROGATE),
            method="patch",
        ),
        "status",
    )


def test_grants_with_a_surrogate_username_store_nothing():
    owner = make_user()
    prompt, _ = make_prompt(owner)
    viewer = make_user()
    grant_set(actor=owner, prompt=prompt, username=viewer.username, role="viewer")
    response = _post(
        api_client_for(owner),
        f"/api/v1/prompts/{prompt.pk}/grants/",
        '{"username": @@, "role": "editor"}'.replace("@@", SURROGATE),
    )
    _assert_names(response, "username")
    assert prompt.grants.count() == 1


TOKEN = "rl_" + "SecretTokenValue0123456789abcdefghij"


@pytest.mark.parametrize(
    "line",
    [
        f"GET /s/{TOKEN} HTTP/1.1",
        "GET /s/%72%6C%5F" + TOKEN[3:] + " HTTP/1.1",
        "GET /s/rl%5F" + TOKEN[3:] + "/copy HTTP/1.1",
        "GET /api/v1/shared/%2572l_" + TOKEN[3:] + "/ HTTP/1.1",
        "GET /%73/" + TOKEN + " HTTP/1.1",
        "GET /api/v1/shared/" + TOKEN[3:] + "/text/ HTTP/1.1",  # no rl_ prefix at all
        "referer https://x.example/s/%72l_" + TOKEN[3:],
    ],
)
def test_redact_blanks_tokens_however_they_are_spelled(line):
    redacted = redact(line)
    assert TOKEN[3:20] not in redacted
    assert REDACTED in redacted


def test_redact_leaves_other_lines_alone():
    for line in ("GET /s/resume HTTP/1.1", "GET /prompts/3/?q=a%20b HTTP/1.1", "plain text"):
        assert redact(line) == line


def test_the_log_filter_redacts_encoded_tokens():
    record = logging.LogRecord(
        "x", logging.INFO, __file__, 1, "GET %s", ("/s/%72l_" + TOKEN[3:],), None
    )
    RedactTokens().filter(record)
    assert TOKEN[3:20] not in record.getMessage()
