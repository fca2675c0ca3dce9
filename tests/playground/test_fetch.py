"""The fetch path: a version by id or by label, ETag/304, and access checked before any cache."""

import html
import json
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.renderers import JSONRenderer
from rest_framework.test import APIClient

from accounts.models import ApiToken
from accounts.services import api_token_create
from common.jsonstream import STREAM_FLUSH_BYTES
from playground.models import AccessLogEntry
from playground.services import grant_revoke, grant_set, label_move, prompt_version_revert
from playground.sharing.fetch import content_cache, content_key
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
    assert by_label.headers["ETag"].startswith(f'"v{v1.number}-')
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
    assert moved.headers["ETag"].startswith(f'"v{v2.number}-')


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


# --- long texts: a head and a range URL, or `?full=1` whole (issue #21) ------------------------


@pytest.fixture
def long_version(owner, settings):
    """A version whose system prompt and first message are longer than the head (100
    characters here); its second message is short."""
    settings.PLAYGROUND_JSON_TEXT_HEAD_CHARS = 100
    settings.PLAYGROUND_TEXT_STREAM_CHARS = 1000
    system = "".join(
        f'Rule {n:04d}: answer with care, é ✓ "quoted" \\ \u2028.\n' for n in range(600)
    )
    messages = [
        {"role": "user", "content": "Design: " + "x" * 150},
        {"role": "assistant", "content": "Short reply."},
    ]
    prompt, version = make_prompt(owner, title="Long", system=system, messages=messages)
    label_move(actor=owner, prompt=prompt, name="production", version=version)
    return prompt, version, system, messages


def test_long_texts_come_as_a_head_and_the_range_url(owner, long_version):
    prompt, version, system, messages = long_version
    api = api_client_for(owner)
    body = api.get(f"/api/v1/versions/{version.pk}/").json()
    assert body["content"]["system"] == {
        "text": system[:100],
        "truncated": True,
        "total": len(system),
        "text_url": f"/api/v1/versions/{version.pk}/text/?field=system",
    }
    first = body["content"]["messages"][0]["content"]
    assert first["text"] == messages[0]["content"][:100]
    assert first["text_url"] == f"/api/v1/versions/{version.pk}/text/?field=messages.0.content"
    assert body["content"]["messages"][1] == {"role": "assistant", "content": "Short reply."}
    assert body["content_hash"] == version.content_hash  # the whole content's hash, always
    # The range URL gives the rest.
    rest = api.get(body["content"]["system"]["text_url"] + f"&offset=100&length={len(system)}")
    assert rest.status_code == 200
    assert system[:100] + rest.json()["text"] == system
    by_label = api.get(f"/api/v1/prompts/{prompt.pk}/labels/production/version/")
    assert by_label.content == api.get(f"/api/v1/versions/{version.pk}/").content


def test_full_streams_every_text_whole_in_pieces(owner, long_version, monkeypatch):
    """`?full=1` writes the JSON a range at a time: the long texts are streamed with
    blob_stream, never read whole with blob_read, and the answer parses to the content."""
    prompt, version, system, messages = long_version
    import playground.sharing.fetch as fetch_module

    whole_reads: list[str] = []
    real_read = fetch_module.blob_read
    monkeypatch.setattr(
        fetch_module, "blob_read", lambda *, sha: whole_reads.append(sha) or real_read(sha=sha)
    )
    fetch_module.content_cache.clear()
    api = api_client_for(owner)
    response = api.get(f"/api/v1/versions/{version.pk}/?full=1")
    assert response.status_code == 200
    assert response.streaming
    assert response["Content-Type"] == "application/json"
    pieces = list(response.streaming_content)
    body = json.loads(b"".join(pieces))
    assert body["content"]["system"] == system
    assert body["content"]["messages"] == messages
    assert version.system_sha not in whole_reads
    assert version.messages[0]["sha"] not in whole_reads
    # The same bytes DRF's renderer would write for the whole body.
    assert b"".join(pieces) == JSONRenderer().render(body)
    # Each written piece is bounded (a flush plus one range), not the whole text.
    assert max(len(p) for p in pieces) <= STREAM_FLUSH_BYTES + 4 * 1000 * 6
    by_label = api.get(f"/api/v1/prompts/{prompt.pk}/labels/production/version/?full=1")
    assert b"".join(by_label.streaming_content) == b"".join(pieces)


def test_full_of_a_small_version_is_the_same_answer(owner, history):
    _, v1, _ = history
    api = api_client_for(owner)
    plain = api.get(f"/api/v1/versions/{v1.pk}/")
    full = api.get(f"/api/v1/versions/{v1.pk}/?full=1")
    assert full.status_code == 200
    assert not full.streaming
    assert full.content == plain.content
    assert full.headers["ETag"] == plain.headers["ETag"]


def test_cut_and_whole_answers_of_a_long_version_have_their_own_etags(owner, long_version):
    _, version, _, _ = long_version
    api = api_client_for(owner)
    url = f"/api/v1/versions/{version.pk}/"
    cut, whole = api.get(url).headers["ETag"], api.get(url + "?full=1").headers["ETag"]
    assert cut != whole
    assert api.get(url, HTTP_IF_NONE_MATCH=cut).status_code == 304
    assert api.get(url + "?full=1", HTTP_IF_NONE_MATCH=whole).status_code == 304
    # The other representation's ETag is not this one's.
    assert api.get(url + "?full=1", HTTP_IF_NONE_MATCH=cut).status_code == 200
    assert api.get(url, HTTP_IF_NONE_MATCH=whole).status_code == 200


@pytest.mark.parametrize("value", ["2", "true", "yes", "1.0"])
def test_full_takes_only_0_or_1(owner, history, value):
    _, v1, _ = history
    response = api_client_for(owner).get(f"/api/v1/versions/{v1.pk}/?full={value}")
    assert response.status_code == 400
    assert response.json()["field"] == "full"
    assert api_client_for(owner).get(f"/api/v1/versions/{v1.pk}/?full=0").status_code == 200


def test_revert_has_its_own_etag(owner, history):
    prompt, v1, v2 = history
    v3 = prompt_version_revert(actor=owner, prompt=prompt, target=v1, parent=v2).version
    assert v3.content_hash == v1.content_hash
    api = api_client_for(owner)
    url = f"/api/v1/prompts/{prompt.pk}/labels/production/version/"
    held = api.get(url).headers["ETag"]
    label_move(actor=owner, prompt=prompt, name="production", version=v3)
    moved = api.get(url, HTTP_IF_NONE_MATCH=held)
    assert moved.status_code == 200
    assert moved.json()["id"] == v3.pk
    assert moved.headers["ETag"] != held


# --- the content cache is bounded in bytes -----------------------------------------------------


def test_content_cache_counts_heads_not_whole_texts(owner, settings):
    settings.PLAYGROUND_JSON_TEXT_HEAD_CHARS = 1000
    settings.PLAYGROUND_FETCH_CACHE_BYTES = 200_000
    content_cache.clear()
    api = api_client_for(owner)
    prompt, parent = make_prompt(owner, system="base")
    for n in range(12):
        text = f"Variant {n}\n" + "y" * 300_000
        parent = save(owner, prompt, parent, f"v{n}", system=text).version
        assert api.get(f"/api/v1/versions/{parent.pk}/").status_code == 200
        entry = content_cache.get(content_key(parent.content_hash))
        assert entry is not None
        assert entry.nbytes < 20_000  # a 1,000-character head, not 300,000 characters
        assert content_cache.used <= settings.PLAYGROUND_FETCH_CACHE_BYTES


def test_content_cache_is_bounded_in_bytes(owner, settings):
    settings.PLAYGROUND_FETCH_CACHE_BYTES = 40_000
    content_cache.clear()
    api = api_client_for(owner)
    prompt, parent = make_prompt(owner, system="base")
    for n in range(8):
        parent = save(owner, prompt, parent, f"v{n}", system=f"{n} " + "z" * 5_000).version
        assert api.get(f"/api/v1/versions/{parent.pk}/").status_code == 200
        assert content_cache.used <= 40_000
    assert 0 < len(content_cache) < 8


# --- the plain views keep the API's authentication, errors and methods ------------------------


def test_session_fetch_costs_one_query_beside_the_session(owner, history, client):
    prompt, v1, v2 = history
    client.force_login(owner)
    url = f"/api/v1/prompts/{prompt.pk}/labels/production/version/"
    assert client.get(url).status_code == 200
    with CaptureQueriesContext(connection) as small:
        assert client.get(url).json()["id"] == v1.pk
    parent = v2
    for number in range(10):
        parent = save(owner, prompt, parent, f"v{number}", system=f"Text {number}\n").version
    with CaptureQueriesContext(connection) as large:
        assert client.get(url).status_code == 200
    # The session and its user, then the version with the caller's access.
    assert len(small) == len(large) == 3, [q["sql"] for q in large.captured_queries]


def test_key_errors_are_the_apis_401s(owner, history):
    _, v1, _ = history
    url = f"/api/v1/versions/{v1.pk}/"
    other = "/api/v1/prompts/"  # a DRF view: the reference answers
    expired_token, expired = api_token_create(actor=owner)
    ApiToken.objects.filter(pk=expired_token.pk).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    for header in (
        None,
        "Token",
        "Token a b",
        "Token rlk_not-a-key",
        f"Token {expired}",
    ):
        client = APIClient()
        if header:
            client.credentials(HTTP_AUTHORIZATION=header)
        fast, reference = client.get(url), client.get(other)
        assert fast.status_code == reference.status_code == 401, header
        assert fast.content == reference.content, header
        assert fast["WWW-Authenticate"] == reference["WWW-Authenticate"] == "Token"


def test_other_methods_and_representations_go_through_drf(owner, history):
    _, v1, _ = history
    api = api_client_for(owner)
    url = f"/api/v1/versions/{v1.pk}/"
    for method in ("put", "patch", "delete", "post"):
        assert getattr(api, method)(url, {}, format="json").status_code == 405
    assert APIClient().put(url, {}, format="json").status_code == 401
    plain = api.get(url)
    indented = api.get(url, HTTP_ACCEPT="application/json; indent=2")
    assert indented.status_code == 200
    assert indented.json() == plain.json()
    assert indented.headers["ETag"] == plain.headers["ETag"]
    assert api.get(url, HTTP_ACCEPT="text/csv").status_code == 406


def test_unknown_and_huge_ids_are_404_after_authentication(owner):
    api = api_client_for(owner)
    for url in ("/api/v1/versions/99999999999999999999/", "/api/v1/versions/0/"):
        assert api.get(url).status_code == 404
        assert APIClient().get(url).status_code == 401
