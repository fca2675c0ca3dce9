"""GET /api/v1/versions/{id}/export/: the exporter's text over HTTP, scoped like every read."""

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from playground.exports.api_calls import export_render
from playground.selectors import version_content
from tests.factories import api_client_for, make_user
from tests.playground.factories import content, make_prompt, save

pytestmark = pytest.mark.django_db

APIS = ("anthropic", "openai")
FORMATS = ("curl", "python", "typescript", "json")
EXTENSIONS = {"curl": "sh", "python": "py", "typescript": "mts", "json": "json"}


@pytest.fixture
def owner():
    return make_user("owner")


@pytest.fixture
def api(owner):
    return api_client_for(owner)


@pytest.fixture
def version(owner):
    _, root = make_prompt(owner, title="Design critic: “caches”")
    return root


def _url(version_id, **params) -> str:
    query = "&".join(f"{key}={value}" for key, value in params.items())
    return f"/api/v1/versions/{version_id}/export/?{query}"


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("api_name", APIS)
def test_export_is_the_exporters_text(api, version, api_name, fmt):
    response = api.get(_url(version.pk, api=api_name, format=fmt))

    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    stored = version_content(version=version)
    assert stored == content()  # what was saved, read back from textstore
    expected = export_render(content=stored, api=api_name, format=fmt)
    assert response.content.decode("utf-8") == expected
    assert "a cache in front of PostgreSQL" in expected  # the variable's default, substituted
    filename = f"design-critic-caches-v1-{api_name}.{EXTENSIONS[fmt]}"
    assert response["Content-Disposition"] == f'inline; filename="{filename}"'
    assert "Accept" in response["Vary"]


@pytest.mark.parametrize("fmt", ["python", "typescript"])
def test_variables_keep_leaves_placeholders_for_the_code_to_fill(api, version, fmt):
    kept = api.get(_url(version.pk, api="openai", format=fmt, variables="keep"))
    default = api.get(_url(version.pk, api="openai", format=fmt))
    explicit = api.get(_url(version.pk, api="openai", format=fmt, variables="substitute"))

    stored = version_content(version=version)
    text = kept.content.decode()
    assert text == export_render(content=stored, api="openai", format=fmt, variables="keep")
    assert "{{design}}" in text
    assert "fill(" in text
    assert default.content == explicit.content != kept.content


def test_json_representation_via_query_or_accept(api, version):
    params = {"api": "anthropic", "format": "json", "variables": "keep"}
    by_query = api.get(_url(version.pk, **params, **{"as": "json"}))
    by_accept = api.get(
        _url(version.pk, api="anthropic", format="json", variables="keep"),
        HTTP_ACCEPT="application/json",
    )
    as_text = api.get(
        _url(version.pk, api="anthropic", format="json", variables="keep", **{"as": "text"}),
        HTTP_ACCEPT="application/json",  # `as` wins over Accept
    )

    assert by_query.status_code == by_accept.status_code == 200
    assert by_query["Content-Type"] == "application/json"
    assert "Content-Disposition" not in by_query
    body = by_query.json()
    assert body == by_accept.json()
    text = export_render(
        content=version_content(version=version), api="anthropic", format="json", variables="keep"
    )
    assert body == {
        "version": version.pk,
        "api": "anthropic",
        "format": "json",
        "variables": "keep",
        "filename": "design-critic-caches-v1-anthropic.json",
        "text": text,
        "warnings": [],
        "truncated": False,
        "total": body["total"],
        "full_url": f"/api/v1/versions/{version.pk}/export/"
        "?api=anthropic&format=json&variables=keep&full=1",
    }
    assert as_text["Content-Type"].startswith("text/plain")
    assert as_text.content.decode() == text
    # The JSON export is the request body itself.
    assert json.loads(text)["messages"] == [
        {"role": "user", "content": "Review this design: {{design}}"}
    ]


def test_session_auth_works_for_the_page(client, owner, version):
    client.force_login(owner)
    response = client.get(_url(version.pk, api="openai", format="curl"))
    assert response.status_code == 200
    assert response.content.decode().startswith('curl -sS "${OPENAI_BASE_URL:-')


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"format": "curl"}, "api"),
        ({"api": "gemini", "format": "curl"}, "api"),
        ({"api": "openai"}, "format"),
        ({"api": "openai", "format": "xml"}, "format"),
        ({"api": "openai", "format": "python", "variables": "drop"}, "variables"),
        ({"api": "openai", "format": "python", "as": "yaml"}, "as"),
    ],
)
def test_bad_parameters_are_400_naming_the_parameter(api, version, params, field):
    # Errors are JSON even when the caller asked for text.
    response = api.get(_url(version.pk, **params), HTTP_ACCEPT="text/plain")

    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert body["field"] == field
    assert body["detail"].startswith(f"{field}: ")


def test_other_users_versions_are_404_like_missing_ones(owner, version):
    stranger = api_client_for(make_user("stranger"))
    params = {"api": "anthropic", "format": "python"}

    theirs = stranger.get(_url(version.pk, **params))
    missing = stranger.get(_url(987654, **params))
    assert theirs.status_code == missing.status_code == 404
    assert theirs.content == missing.content
    assert theirs["Content-Type"] == missing["Content-Type"] == "application/json"
    assert "Content-Disposition" not in theirs

    anonymous = api_client_for(None).get(_url(version.pk, **params))
    assert anonymous.status_code == 401
    assert anonymous.json()["detail"]


def test_viewers_may_export_until_their_grant_is_revoked(owner, version):
    from playground.services import grant_revoke, grant_set

    viewer = api_client_for(make_user("viewer2"))
    grant_set(actor=owner, prompt=version.prompt, username="viewer2", role="viewer")
    params = {"api": "openai", "format": "typescript"}

    shared = viewer.get(_url(version.pk, **params))
    assert shared.status_code == 200
    assert shared.content.decode() == export_render(
        content=version_content(version=version), api="openai", format="typescript"
    )

    grant_revoke(actor=owner, prompt=version.prompt, username="viewer2")
    revoked = viewer.get(_url(version.pk, **params))
    assert revoked.status_code == 404
    assert revoked.content == viewer.get(_url(987654, **params)).content


def test_query_count_does_not_grow_with_history_or_format(owner, api):
    from textstore.cache import caches_clear

    prompt, root = make_prompt(owner)
    parent = root
    counts = {}

    def measure(version_id: int) -> set[int]:
        seen = set()
        for api_name in APIS:
            for fmt in FORMATS:
                caches_clear()  # cold reads each time
                with CaptureQueriesContext(connection) as captured:
                    response = api.get(_url(version_id, api=api_name, format=fmt))
                assert response.status_code == 200
                seen.add(len(captured.captured_queries))
        return seen

    api.get("/api/v1/prompts/")  # the key's first use records last_used_at (once a minute)
    counts["short"] = measure(parent.pk)
    for i in range(30):  # a long delta chain behind the last version
        parent = save(owner, prompt, parent, system=f"{content()['system']}rule {i}\n").version
    counts["long"] = measure(parent.pk)

    assert len(counts["short"]) == 1, counts  # the same for every api and format
    assert counts["short"] == counts["long"], counts


def test_export_for_the_other_api_names_its_model_and_says_so(api, owner):
    prompt, v1 = make_prompt(
        owner,
        messages=[{"role": "user", "content": "Review {{design}} for {{audience}}"}],
    )
    body = api.get(f"/api/v1/versions/{v1.pk}/export/?api=openai&format=json&as=json").json()
    assert any("{{audience}}" in w and "literally" in w for w in body["warnings"])
    # The OpenAI export of a Claude version names the model a run of it on openai uses ...
    assert '"model": "gpt-4.1-mini"' in body["text"]
    # ... and never silently: the warning names both models.
    assert any("'claude-sonnet-4-6'" in w and "'gpt-4.1-mini'" in w for w in body["warnings"])
    assert not any("{{design}}" in w for w in body["warnings"])
    own = api.get(f"/api/v1/versions/{v1.pk}/export/?api=anthropic&format=curl&as=json").json()
    assert [w for w in own["warnings"] if "model" in w.lower()] == []
