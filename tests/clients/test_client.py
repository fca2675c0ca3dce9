"""The Python client (`clients/python`, package `redline`) against a live Redline server.

Every request is counted on the server (`ServerLog`), so "a 304 costs no body" and "a retry
happened" are facts the server saw, not the client's word.
"""

import json
from datetime import UTC, datetime

import httpx
import pytest
import redline

from accounts.models import ApiToken
from accounts.services import api_token_revoke
from playground.services import grant_revoke, grant_set, label_move, prompt_version_revert
from tests.aio import run_async
from tests.clients.conftest import account
from tests.playground.factories import BASE_CONTENT, make_prompt, save

LABEL_PATH = "/api/v1/prompts/{}/labels/{}/version/"


@pytest.fixture
def history(owner):
    prompt, v1 = make_prompt(owner.user, title="Client", system="First system prompt.\n")
    v2 = save(owner.user, prompt, v1, "second", system="Second system prompt.\n").version
    label_move(actor=owner.user, prompt=prompt, name="production", version=v1)
    return prompt, v1, v2


def client_for(server, key, **options) -> redline.Redline:
    options.setdefault("base_url", server.url)
    return redline.Redline(api_key=key, **options)


def test_label_fetch_returns_the_labelled_version_typed(redline_server, owner, history):
    prompt, v1, _ = history
    with client_for(redline_server, owner.key) as client:
        version = client.get_prompt(prompt.pk)
        named = client.get_prompt(prompt.pk, label="production")

    assert isinstance(version, redline.PromptVersion)
    assert (version.id, version.prompt_id, version.number, version.parent) == (
        v1.pk,
        prompt.pk,
        1,
        None,
    )
    assert version.content_hash == v1.content_hash
    assert version.author == owner.user.username
    assert isinstance(version.created_at, datetime) and version.created_at.tzinfo is not None
    assert version.created_at == v1.created_at
    content = version.content
    assert content.system == "First system prompt.\n"
    assert content.messages == (
        redline.Message(role="user", content="Review this design: {{design}}"),
    )
    assert content.params == redline.Params(temperature=0.5, max_tokens=512, top_p=None, stop=())
    assert content.variables == {"design": "a cache in front of PostgreSQL"}
    assert content.as_dict() == {**BASE_CONTENT, "system": "First system prompt.\n"}
    assert named == version
    # Server side: the label URL, whole texts asked for, the key as a Token header.
    [first, second] = redline_server.log.requests()
    assert first.path == LABEL_PATH.format(prompt.pk, "production")
    assert first.query == "full=1"
    assert first.authorization == f"Token {owner.key}"
    assert (first.status, first.if_none_match) == (200, None)
    assert second.status == 304


def test_every_call_revalidates_and_a_304_costs_no_body(redline_server, owner, history):
    prompt, _, _ = history
    with client_for(redline_server, owner.key) as client:
        calls = [client.get_prompt(prompt.pk) for _ in range(4)]

    assert all(call == calls[0] for call in calls)
    served = redline_server.log.requests()
    assert [s.status for s in served] == [200, 304, 304, 304]
    etag = httpx.get(
        redline_server.url + LABEL_PATH.format(prompt.pk, "production") + "?full=1",
        headers={"Authorization": f"Token {owner.key}"},
    ).headers["ETag"]
    # The ETag is echoed byte for byte, and a 304 carries no body at all.
    assert [s.if_none_match for s in served] == [None, etag, etag, etag]
    assert served[0].body_bytes > 0
    assert [s.body_bytes for s in served[1:]] == [0, 0, 0]


def test_a_label_move_is_seen_on_the_next_call(redline_server, owner, history):
    prompt, v1, v2 = history
    with client_for(redline_server, owner.key) as client:
        before = client.get_prompt(prompt.pk)
        label_move(
            actor=owner.user,
            prompt=prompt,
            name="production",
            version=v2,
            expected=v1,
            expected_given=True,
        )
        after = client.get_prompt(prompt.pk)

    assert (before.id, after.id) == (v1.pk, v2.pk)
    assert (after.number, after.parent) == (2, v1.pk)
    assert after.content.system == "Second system prompt.\n"
    assert [s.status for s in redline_server.log.requests()] == [200, 200]


def test_a_revert_moved_under_the_label_is_a_new_version_at_once(redline_server, owner, history):
    """A revert has the content of an older version and its own id, number and message; the
    label's next answer names it, whatever the client kept from the older version."""
    prompt, v1, v2 = history
    etag = httpx.get(
        f"{redline_server.url}/api/v1/versions/{v1.pk}/",
        headers={"Authorization": f"Token {owner.key}"},
    ).headers["ETag"]
    if etag == f'"{v1.content_hash}"':
        pytest.skip("this server's ETag is the bare content hash, which a revert shares")
    redline_server.log.clear()
    revert = prompt_version_revert(actor=owner.user, prompt=prompt, target=v1, parent=v2).version
    assert revert.content_hash == v1.content_hash and revert.pk != v1.pk
    with client_for(redline_server, owner.key) as client:
        before = client.get_prompt(prompt.pk)
        label_move(actor=owner.user, prompt=prompt, name="production", version=revert)
        after = client.get_prompt(prompt.pk)

    assert before.id == v1.pk
    assert (after.id, after.number, after.parent) == (revert.pk, 3, v2.pk)
    assert after.message == revert.message
    assert after.content == before.content


def test_a_version_by_number(redline_server, owner, history):
    prompt, v1, v2 = history
    with client_for(redline_server, owner.key) as client:
        first = client.get_prompt(prompt.pk, version=1)
        second = client.get_prompt(prompt.pk, version=2)
        again = client.get_prompt(prompt.pk, version=2)
        with pytest.raises(redline.NotFound) as missing:
            client.get_prompt(prompt.pk, version=3)

    assert (first.id, second.id, again.id) == (v1.pk, v2.pk, v2.pk)
    assert missing.value.status == 404
    served = redline_server.log.requests()
    assert [s.path for s in served] == [
        f"/api/v1/prompts/{prompt.pk}/versions/{n}/" for n in (1, 2, 2, 3)
    ]
    assert [s.status for s in served] == [200, 200, 304, 404]


def test_not_found_once_the_grant_is_revoked(redline_server, owner, history):
    prompt, v1, _ = history
    viewer = account("client-viewer")
    grant_set(actor=owner.user, prompt=prompt, username=viewer.user.username, role="viewer")
    with client_for(redline_server, viewer.key) as client:
        assert client.get_prompt(prompt.pk).id == v1.pk
        assert client.get_prompt(prompt.pk).id == v1.pk  # a 304: kept in the client
        grant_revoke(actor=owner.user, prompt=prompt, username=viewer.user.username)
        with pytest.raises(redline.NotFound) as revoked:
            client.get_prompt(prompt.pk)
        # Not served from what the client kept, then or later.
        with pytest.raises(redline.NotFound):
            client.get_prompt(prompt.pk)

    assert revoked.value.status == 404
    assert revoked.value.detail == "Not found."
    assert [s.status for s in redline_server.log.requests()] == [200, 304, 404, 404]


def test_auth_error_on_a_bad_or_revoked_key(redline_server, owner, history):
    prompt, _, _ = history
    with client_for(redline_server, "rlk_not-a-key") as client:
        with pytest.raises(redline.AuthError) as bad:
            client.get_prompt(prompt.pk)
    assert bad.value.status == 401
    assert isinstance(bad.value, redline.Error)

    with client_for(redline_server, owner.key) as client:
        client.get_prompt(prompt.pk)
        api_token_revoke(actor=owner.user, token=ApiToken.objects.get(user=owner.user))
        with pytest.raises(redline.AuthError):
            client.get_prompt(prompt.pk)


def test_other_errors_carry_status_and_detail(redline_server, owner):
    with client_for(redline_server, owner.key, max_retries=0) as client:
        redline_server.log.fail_next(1, status=503, retry_after=None)
        with pytest.raises(redline.Error) as failed:
            client.get_prompt(1)
    assert type(failed.value) is redline.Error
    assert (failed.value.status, failed.value.detail) == (503, "Try again shortly.")

    with redline.Redline(base_url="http://127.0.0.1:9", api_key="k", max_retries=0) as client:
        with pytest.raises(redline.Error) as unreachable:
            client.get_prompt(1)
    assert unreachable.value.status is None
    assert "ConnectError" in unreachable.value.detail


@pytest.mark.parametrize("status", [503, 429])
def test_retries_on_503_and_429_with_retry_after(redline_server, owner, history, status):
    prompt, v1, _ = history
    redline_server.log.fail_next(2, status=status, retry_after="0")
    with client_for(redline_server, owner.key) as client:
        assert client.get_prompt(prompt.pk).id == v1.pk
    assert [s.status for s in redline_server.log.requests()] == [status, status, 200]


def test_retries_are_bounded_in_attempts_and_wait(redline_server, owner, history):
    prompt, _, _ = history
    redline_server.log.fail_next(5, status=503, retry_after="0")
    with client_for(redline_server, owner.key, max_retries=2) as client:
        with pytest.raises(redline.Error) as exhausted:
            client.get_prompt(prompt.pk)
    assert exhausted.value.status == 503
    assert [s.status for s in redline_server.log.requests()] == [503, 503, 503]

    redline_server.log.clear()
    redline_server.log.faults.clear()
    redline_server.log.fail_next(1, status=429, retry_after="120")
    with client_for(redline_server, owner.key, max_retry_wait=5) as client:
        with pytest.raises(redline.Error) as too_long:
            client.get_prompt(prompt.pk)
    assert (too_long.value.status, too_long.value.retry_after) == (429, 120.0)
    assert len(redline_server.log.requests()) == 1  # a wait longer than allowed is not taken


def test_clients_with_different_keys_never_share_answers(redline_server, owner, history):
    prompt, v1, _ = history
    stranger = account("client-stranger")
    with (
        client_for(redline_server, owner.key) as mine,
        client_for(redline_server, stranger.key) as theirs,
    ):
        assert mine.get_prompt(prompt.pk).id == v1.pk
        with pytest.raises(redline.NotFound):
            theirs.get_prompt(prompt.pk)
    statuses = [(s.authorization, s.status) for s in redline_server.log.requests()]
    assert statuses == [(f"Token {owner.key}", 200), (f"Token {stranger.key}", 404)]


def test_a_truncated_text_is_read_whole_through_text_url(redline_server, owner, settings):
    """A server that sends long texts as a head plus `text_url` (without `?full=1`, or an older
    one): the client reads the rest from the real range endpoint, a page at a time."""
    settings.PLAYGROUND_TEXT_PAGE_CHARS = 1000
    system = "".join(f"Line {n:04d} of a long system prompt — ünïcode 😀.\n" for n in range(300))
    prompt, version = make_prompt(owner.user, title="Long", system=system)
    label_move(actor=owner.user, prompt=prompt, name="production", version=version)

    def truncate(status: int, body: bytes) -> bytes:
        data = json.loads(body)
        data["content"]["system"] = {
            "text": system[:500],
            "truncated": True,
            "total": len(system),
            "text_url": f"/api/v1/versions/{version.pk}/text/?field=system",
        }
        return json.dumps(data).encode()

    redline_server.log.rewrite(LABEL_PATH.format(prompt.pk, "production"), truncate)
    with client_for(redline_server, owner.key) as client:
        fetched = client.get_prompt(prompt.pk)

    assert fetched.content.system == system
    ranges = redline_server.log.requests("/text/")
    offsets = [dict(p.split("=") for p in s.query.split("&"))["offset"] for s in ranges]
    assert offsets[0] == "500"
    assert len(ranges) == -(-(len(system) - 500) // 1000)
    assert all(s.status == 200 for s in ranges)


def test_a_truncated_text_without_a_way_to_the_rest_is_an_error(redline_server, owner, history):
    prompt, _, _ = history

    def cut(text_url):
        def change(status: int, body: bytes) -> bytes:
            data = json.loads(body)
            data["content"]["system"] = {"text": "First", "truncated": True, "total": 21}
            if text_url:
                data["content"]["system"]["text_url"] = text_url
            return json.dumps(data).encode()

        return change

    path = LABEL_PATH.format(prompt.pk, "production")
    with client_for(redline_server, owner.key) as client:
        redline_server.log.rewrite(path, cut(None))
        with pytest.raises(redline.Error, match="system: the server sent only the first 5"):
            client.get_prompt(prompt.pk)
        redline_server.log.rewrite(path, cut("http://elsewhere.example/steal?field=system"))
        with pytest.raises(redline.Error, match="is not on"):
            client.get_prompt(prompt.pk)
    # The key never went to another host, and no range was asked for.
    assert redline_server.log.requests("/text/") == []


def test_a_body_that_does_not_match_its_content_hash_is_refused(redline_server, owner, history):
    prompt, _, _ = history

    def tamper(status: int, body: bytes) -> bytes:
        data = json.loads(body)
        data["content"]["system"] = "Something else.\n"
        return json.dumps(data).encode()

    redline_server.log.rewrite(LABEL_PATH.format(prompt.pk, "production"), tamper)
    with client_for(redline_server, owner.key) as client:
        with pytest.raises(redline.Error, match="does not match its content_hash"):
            client.get_prompt(prompt.pk)


def test_the_async_twin(redline_server, owner, history):
    prompt, v1, v2 = history

    async def scenario():
        auth = {"Authorization": f"Token {owner.key}"}
        async with redline.AsyncRedline(base_url=redline_server.url, api_key=owner.key) as client:
            first = await client.get_prompt(prompt.pk)
            again = await client.get_prompt(prompt.pk)
            async with httpx.AsyncClient(base_url=redline_server.url, headers=auth) as http:
                # Someone moves the label through the API while this client holds v1.
                put = await http.put(
                    f"/api/v1/prompts/{prompt.pk}/labels/production/",
                    json={"version": v2.pk, "expected": v1.pk},
                )
                assert put.status_code == 200
            moved = await client.get_prompt(prompt.pk)
            by_number = await client.get_prompt(prompt.pk, version=1)
            redline_server.log.fail_next(1, status=503, retry_after="0")
            retried = await client.get_prompt(prompt.pk)
            with pytest.raises(redline.NotFound):
                await client.get_prompt(prompt.pk, label="no-such-label")
        async with redline.AsyncRedline(base_url=redline_server.url, api_key="rlk_bad") as bad:
            with pytest.raises(redline.AuthError):
                await bad.get_prompt(prompt.pk)
        return first, again, moved, by_number, retried

    first, again, moved, by_number, retried = run_async(scenario())
    assert (first.id, again.id, moved.id, by_number.id, retried.id) == (
        v1.pk,
        v1.pk,
        v2.pk,
        v1.pk,
        v2.pk,
    )
    assert first == again
    assert [s.status for s in redline_server.log.requests() if s.method == "GET"] == [
        200,
        304,
        200,
        200,
        503,
        304,
        404,
        401,
    ]


def test_bad_arguments_are_refused_before_any_request(redline_server, owner):
    with client_for(redline_server, owner.key) as client:
        for kwargs in ({"version": 0}, {"version": True}, {"label": "staging", "version": 2}):
            with pytest.raises(ValueError):
                client.get_prompt(1, **kwargs)
        with pytest.raises(ValueError):
            client.get_prompt(0)
    with pytest.raises(ValueError, match="api_key"):
        redline.Redline(base_url=redline_server.url, api_key="")
    with pytest.raises(ValueError, match="base_url"):
        redline.Redline(base_url="ftp://example", api_key="k")
    assert redline_server.log.requests() == []


@pytest.mark.parametrize("suffix", ["/", "/api/v1", "/api/v1/"])
def test_the_base_url_may_name_the_api(redline_server, owner, history, suffix):
    prompt, v1, _ = history
    with client_for(redline_server, owner.key, base_url=redline_server.url + suffix) as client:
        assert client.get_prompt(prompt.pk).id == v1.pk
    [served] = redline_server.log.requests()
    assert served.path == LABEL_PATH.format(prompt.pk, "production")


def test_the_kept_answers_are_bounded(redline_server, owner, history):
    prompt, _, _ = history
    with client_for(redline_server, owner.key, cache_entries=0) as client:
        client.get_prompt(prompt.pk)
        client.get_prompt(prompt.pk)
    with client_for(redline_server, owner.key, cache_entries=1) as client:
        for number in (1, 2, 1, 2):  # each evicts the other
            client.get_prompt(prompt.pk, version=number)
        client.get_prompt(prompt.pk, version=2)  # the one kept
    assert [s.status for s in redline_server.log.requests()] == [200] * 6 + [304]


def test_retry_after_as_seconds_or_an_http_date():
    from redline._core import retry_after_seconds

    now = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)
    assert retry_after_seconds("7", now=now) == 7.0
    assert retry_after_seconds("Tue, 01 Dec 2026 12:00:30 GMT", now=now) == 30.0
    assert retry_after_seconds("Tue, 01 Dec 2026 11:00:00 GMT", now=now) == 0.0
    assert retry_after_seconds("soon", now=now) is None
    assert retry_after_seconds(None) is None
