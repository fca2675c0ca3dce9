"""An empty or missing variable is refused the same way by runs and exports (issue 23, item 4):
a 400 naming `variables.<name>`, unless the version declares a non-empty default."""

import pytest

from playground.models import Run
from tests.factories import api_client_for, make_user
from tests.playground.factories import make_prompt

pytestmark = pytest.mark.django_db

ECHO = {"provider": "echo", "model": "echo-1"}


@pytest.fixture
def owner():
    return make_user("owner")


def _run(owner, version, **body):
    return api_client_for(owner).post(f"/api/v1/versions/{version.pk}/runs/", body, format="json")


def _export(owner, version, **params):
    query = "&".join(f"{k}={v}" for k, v in params.items())
    return api_client_for(owner).get(f"/api/v1/versions/{version.pk}/export/?{query}&as=json")


def test_run_refuses_an_empty_default_and_an_empty_value(owner):
    _, version = make_prompt(owner, variables={"design": ""}, **ECHO)
    for body in ({}, {"variables": {"design": ""}}):
        response = _run(owner, version, **body)
        assert response.status_code == 400
        detail = response.json()["detail"]
        assert detail.startswith("variables.design: {{design}} is used in the prompt but is empty")
    assert not Run.objects.exists()
    assert _run(owner, version, variables={"design": "a CDN"}).status_code == 201


def test_run_refuses_an_undeclared_placeholder_naming_it(owner):
    _, version = make_prompt(
        owner, messages=[{"role": "user", "content": "Compare {{design}} with {{other}}"}], **ECHO
    )
    response = _run(owner, version)
    assert response.status_code == 400
    assert response.json()["detail"].startswith("variables.other: {{other}} is used in the prompt")
    assert "has no value" in response.json()["detail"]


def test_run_an_empty_value_takes_a_non_empty_default(owner):
    _, version = make_prompt(owner, **ECHO)  # design defaults to "a cache in front of PostgreSQL"
    response = _run(owner, version, variables={"design": ""})
    assert response.status_code == 201
    assert Run.objects.get().variables == {"design": "a cache in front of PostgreSQL"}


@pytest.mark.parametrize("fmt", ["curl", "python", "typescript", "json"])
@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_export_refuses_an_empty_variable_in_every_format(owner, api, fmt):
    _, version = make_prompt(owner, variables={"design": ""})
    response = _export(owner, version, api=api, format=fmt)
    assert response.status_code == 400
    assert response.json()["detail"].startswith("variables.design: {{design}} is used")
    assert "non-empty default" in response.json()["detail"]


def test_export_keep_mode_leaves_the_placeholder_for_the_code_to_fill(owner):
    """`variables=keep` fills at run time from an editable block, so nothing is sent empty here."""
    _, version = make_prompt(owner, variables={"design": ""})
    response = _export(owner, version, api="anthropic", format="python", variables="keep")
    assert response.status_code == 200
    assert "{{design}}" in response.json()["text"]


def test_export_sends_an_undeclared_placeholder_literally_with_a_warning(owner):
    _, version = make_prompt(
        owner, messages=[{"role": "user", "content": "Show {{design}} as {{example}} syntax"}]
    )
    body = _export(owner, version, api="anthropic", format="json").json()
    assert "{{example}}" in body["text"]
    assert any("{{example}} is used but not declared" in w for w in body["warnings"])


def test_export_with_a_default_is_unchanged(owner):
    _, version = make_prompt(owner)
    response = _export(owner, version, api="openai", format="json")
    assert response.status_code == 200
    assert "a cache in front of PostgreSQL" in response.json()["text"]
