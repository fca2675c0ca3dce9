"""The fetch path: a version by id or by label, ETag/304, and access checked before any cache."""

import html

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from playground.fetch import content_cache, content_key
from playground.models import AccessLogEntry
from playground.services import grant_revoke, grant_set, label_move
from tests.factories import api_client_for, make_user
from tests.playground.factories import make_prompt, save

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner():
    return make_user("owner")


@pytest.fixture
def history(owner):
    prompt, v1 = make_prompt(owner, title="Fetched", system="First system prompt.\n")
    v2 = save(owner, prompt, v1, "second", system="Second system prompt.\n").version
    label_move(actor=owner, prompt=prompt, name="production", version=v1)
    return prompt, v1, v2


def test_fetch_by_label_returns_the_labelled_version_like_the_version_api(owner, history):
    prompt, v1, _ = history
    api = api_client_for(owner)
    by_label = api.get(f"/api/v1/prompts/{prompt.pk}/labels/production/version/")
    by_id = api.get(f"/api/v1/versions/{v1.pk}/")
    assert by_label.status_code == 200
    assert by_label.json() == by_id.json()
    body = by_label.json()
    assert body["id"] == v1.pk
    assert body["content"]["system"] == "First system prompt.\n"
    # The ETag names the representation (the version and its body), not the content alone.
    assert by_label.headers["ETag"] == by_id.headers["ETag"]
    assert by_label.headers["ETag"].startswith(f'"v{v1.pk}-')
    assert v1.content_hash not in by_label.headers["ETag"]
    assert by_label.headers["Cache-Control"] == "private, no-cache"
    assert by_label.content == by_id.content


def test_fetch_by_label_follows_the_label(owner, history):
    prompt, v1, v2 = history
    api = api_client_for(owner)
    url = f"/api/v1/prompts/{prompt.pk}/labels/production/version/"
    first = api.get(url)
    label_move(
        actor=owner, prompt=prompt, name="production", version=v2, expected=v1, expected_given=True
    )
    moved = api.get(url, HTTP_IF_NONE_MATCH=first.headers["ETag"])
    assert moved.status_code == 200
    assert moved.json()["id"] == v2.pk
    assert moved.json()["content"]["system"] == "Second system prompt.\n"
    assert moved.headers["ETag"].startswith(f'"v{v2.pk}-')


@pytest.mark.parametrize("kind", ["label", "id"])
def test_matching_etag_gets_304_without_a_body(owner, history, kind):
    prompt, v1, _ = history
    api = api_client_for(owner)
    url = (
        f"/api/v1/prompts/{prompt.pk}/labels/production/version/"
        if kind == "label"
        else f"/api/v1/versions/{v1.pk}/"
    )
    etag = api.get(url).headers["ETag"]
    again = api.get(url, HTTP_IF_NONE_MATCH=etag)
    assert again.status_code == 304
    assert again.content == b""
    assert again.headers["ETag"] == etag
    assert again.headers["Cache-Control"] == "private, no-cache"
    stale = api.get(url, HTTP_IF_NONE_MATCH='"0000"')
    assert stale.status_code == 200


def test_revoked_viewer_with_a_valid_etag_gets_404_not_304(owner, history):
    prompt, v1, _ = history
    viewer = make_user("viewer")
    grant_set(actor=owner, prompt=prompt, username="viewer", role="viewer")
    api = api_client_for(viewer)
    urls = [f"/api/v1/prompts/{prompt.pk}/labels/production/version/", f"/api/v1/versions/{v1.pk}/"]
    etags = [api.get(url).headers["ETag"] for url in urls]
    assert [
        api.get(u, HTTP_IF_NONE_MATCH=e).status_code for u, e in zip(urls, etags, strict=True)
    ] == [304, 304]

    grant_revoke(actor=owner, prompt=prompt, username="viewer")
    after = [api.get(u, HTTP_IF_NONE_MATCH=e) for u, e in zip(urls, etags, strict=True)]
    assert [r.status_code for r in after] == [404, 404]
    assert all(r.json() == {"detail": "Not found."} for r in after)
    assert all("ETag" not in r.headers for r in after)


def test_cached_content_is_never_served_without_access(owner, history):
    """The owner's fetch warms the content cache; a stranger still gets 404 on both paths, with
    the same body as for an id that does not exist."""
    prompt, v1, _ = history
    api_client_for(owner).get(f"/api/v1/versions/{v1.pk}/")
    assert content_cache.get(content_key(v1.content_hash)) is not None
    stranger = api_client_for(make_user("stranger"))
    for url in (
        f"/api/v1/versions/{v1.pk}/",
        f"/api/v1/prompts/{prompt.pk}/labels/production/version/",
    ):
        response = stranger.get(url, HTTP_IF_NONE_MATCH=f'"{v1.content_hash}"')
        assert response.status_code == 404
        assert b"First system prompt" not in response.content
    missing = stranger.get("/api/v1/versions/999999/")
    assert missing.content == stranger.get(f"/api/v1/versions/{v1.pk}/").content


def test_anonymous_and_unknown_labels(owner, history):
    prompt, _, _ = history
    anonymous = api_client_for(None)
    assert (
        anonymous.get(f"/api/v1/prompts/{prompt.pk}/labels/production/version/").status_code == 401
    )
    api = api_client_for(owner)
    assert api.get(f"/api/v1/prompts/{prompt.pk}/labels/staging/version/").status_code == 404
    assert api.get("/api/v1/prompts/999999/labels/production/version/").status_code == 404


def test_fetch_costs_one_query_whatever_the_history(owner, history):
    """The API key, the version and the caller's access together, in one query."""
    prompt, v1, v2 = history
    api = api_client_for(owner)
    url = f"/api/v1/prompts/{prompt.pk}/labels/production/version/"
    api.get(url)  # the key's last_used_at is written at most once a minute: not here again
    with CaptureQueriesContext(connection) as small:
        assert api.get(url).status_code == 200
    parent = v2
    for number in range(30):
        parent = save(owner, prompt, parent, f"v{number}", system=f"Text {number}\n").version
    with CaptureQueriesContext(connection) as large:
        assert api.get(url).status_code == 200
    assert len(small) == len(large) == 1, [q["sql"] for q in large.captured_queries]


def test_grantee_fetches_are_logged_once_a_minute(owner, history):
    prompt, v1, _ = history
    viewer = make_user("viewer")
    grant_set(actor=owner, prompt=prompt, username="viewer", role="viewer")
    api = api_client_for(viewer)
    for _ in range(5):
        assert api.get(f"/api/v1/versions/{v1.pk}/").status_code == 200
    assert AccessLogEntry.objects.filter(prompt=prompt, via="grant", user=viewer).count() == 1


def test_export_panel_shows_the_fetch_by_label_call(owner, history, client):
    prompt, v1, _ = history
    client.force_login(owner)
    page = client.get(f"/playground/p/{prompt.pk}/?v={v1.pk}").content.decode()
    assert f"/api/v1/prompts/{prompt.pk}/labels/production/version/" in page
    etag = api_client_for(owner).get(f"/api/v1/versions/{v1.pk}/").headers["ETag"]
    assert f"If-None-Match: {html.escape(etag)}" in page
