"""Sharing: the authorization matrix, revocation, the new-enemy problem, tokens and guessing."""

import io
import json
import logging
import secrets
from dataclasses import dataclass
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.utils import timezone

from accounts.services import api_token_create
from playground.models import AccessGrant, AccessLogEntry, PromptVersion, ShareLink
from playground.selectors import share_link_resolve
from playground.services import grant_revoke, grant_set, share_link_create, share_link_revoke
from tests.factories import api_client_for, make_user
from tests.playground.factories import content, make_prompt, save

pytestmark = pytest.mark.django_db


@dataclass
class World:
    owner: object
    prompt: object
    root: object
    v2: object
    tokens: dict
    links: dict
    users: dict


@pytest.fixture(autouse=True)
def _clear_rate_limits():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def world() -> World:
    owner = make_user("owner")
    prompt, root = make_prompt(owner)
    v2 = save(owner, prompt, root, system="second").version
    users = {name: make_user(name) for name in ("editor", "viewer", "stranger", "revoked", "dummy")}
    grant_set(actor=owner, prompt=prompt, username="editor", role="editor")
    grant_set(actor=owner, prompt=prompt, username="viewer", role="viewer")
    grant_set(actor=owner, prompt=prompt, username="revoked", role="editor")
    grant_set(actor=owner, prompt=prompt, username="dummy", role="viewer")
    grant_revoke(actor=owner, prompt=prompt, username="revoked")
    tokens, links = {}, {}
    for name, access, kwargs in (
        ("public", "public", {"version": root}),
        ("login", "login", {"label_name": "main"}),
        ("revoked", "public", {"version": root}),
        ("expired", "public", {"version": root, "expires_at": timezone.now() + timedelta(hours=1)}),
    ):
        links[name], tokens[name] = share_link_create(
            actor=owner, prompt=prompt, access=access, **kwargs
        )
    share_link_revoke(actor=owner, link=links["revoked"])
    ShareLink.objects.filter(pk=links["expired"].pk).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    return World(owner, prompt, root, v2, tokens, links, users)


# principal -> (account or None, the share token they hold or None)
PRINCIPALS = {
    "editor": ("editor", None),
    "viewer": ("viewer", None),
    "stranger": ("stranger", None),
    "anonymous": (None, None),
    "public_link": (None, "public"),
    "login_link": ("stranger", "login"),
    "login_link_anonymous": (None, "login"),
    "revoked_link": (None, "revoked"),
    "expired_link": (None, "expired"),
    "revoked_grantee": ("revoked", None),
    "owner": ("owner", None),  # last: some owner calls change state
}
OUTSIDERS = {  # every principal who is not owner/editor/viewer: what they get on prompt APIs
    "stranger": 404,
    "anonymous": 401,
    "public_link": 401,
    "login_link": 404,
    "login_link_anonymous": 401,
    "revoked_link": 401,
    "expired_link": 401,
    "revoked_grantee": 404,
}


def _row(owner, editor, viewer):
    return {"owner": owner, "editor": editor, "viewer": viewer, **OUTSIDERS}


# (name, method, path template, body template, expected per principal)
API_MATRIX = [
    ("prompt", "get", "/api/v1/prompts/{p}/", None, _row(200, 200, 200)),
    ("tree", "get", "/api/v1/prompts/{p}/versions/", None, _row(200, 200, 200)),
    (
        "save",
        "post",
        "/api/v1/prompts/{p}/versions/",
        {"parent": "{v2}", "content": "CONTENT"},
        _row(201, 201, 403),
    ),
    ("version", "get", "/api/v1/versions/{v2}/", None, _row(200, 200, 200)),
    ("diff", "get", "/api/v1/versions/{v2}/diff/?against={root}", None, _row(200, 200, 200)),
    (
        "export",
        "get",
        "/api/v1/versions/{v2}/export/?api=openai&format=json",
        None,
        _row(200, 200, 200),
    ),
    # The editor's revert (first) puts main on v1's content; the owner's then changes nothing:
    # a save equal to its parent answers 200 with the parent.
    ("revert", "post", "/api/v1/versions/{root}/revert/", {}, _row(200, 201, 403)),
    ("labels", "get", "/api/v1/prompts/{p}/labels/", None, _row(200, 200, 200)),
    (
        "move-main",
        "put",
        "/api/v1/prompts/{p}/labels/main/",
        {"version": "{root}"},
        _row(200, 200, 403),
    ),
    (
        "move-production",
        "put",
        "/api/v1/prompts/{p}/labels/production/",
        {"version": "{root}"},
        _row(200, 403, 403),
    ),
    ("links", "get", "/api/v1/prompts/{p}/links/", None, _row(200, 403, 403)),
    (
        "link-create",
        "post",
        "/api/v1/prompts/{p}/links/",
        {"access": "public", "version": "{root}"},
        _row(201, 403, 403),
    ),
    ("link-revoke", "delete", "/api/v1/links/{public_link}/", None, _row(204, 403, 403)),
    ("grants", "get", "/api/v1/prompts/{p}/grants/", None, _row(200, 403, 403)),
    (
        "grant-add",
        "post",
        "/api/v1/prompts/{p}/grants/",
        {"username": "stranger", "role": "viewer"},
        _row(201, 403, 403),
    ),
    ("grant-remove", "delete", "/api/v1/prompts/{p}/grants/dummy/", None, _row(204, 403, 403)),
    ("access-log", "get", "/api/v1/prompts/{p}/access-log/", None, _row(200, 403, 403)),
]


def _fill(value, ids):
    if isinstance(value, str):
        if value == "CONTENT":
            return content(system=f"matrix {secrets.token_hex(4)}")
        if value.startswith("{") and value.endswith("}") and value[1:-1] in ids:
            return ids[value[1:-1]]
        return value.format(**ids)
    if isinstance(value, dict):
        return {k: _fill(v, ids) for k, v in value.items()}
    return value


def _api_client(world, principal):
    username, _ = PRINCIPALS[principal]
    return api_client_for(
        world.users.get(username) or (world.owner if username == "owner" else None)
    )


def _ids(world, missing=False):
    if missing:
        return {"p": 987654, "v2": 987655, "root": 987656, "public_link": 987657}
    return {
        "p": world.prompt.pk,
        "v2": world.v2.pk,
        "root": world.root.pk,
        "public_link": world.links["public"].pk,
    }


@pytest.mark.parametrize(
    ("name", "method", "path", "body", "expected"), API_MATRIX, ids=[r[0] for r in API_MATRIX]
)
def test_api_authorization_matrix(world, name, method, path, body, expected):
    for principal in PRINCIPALS:
        client = _api_client(world, principal)
        ids = _ids(world)
        kwargs = {"format": "json"} if body is not None else {}
        args = [_fill(body, ids)] if body is not None else []
        response = getattr(client, method)(path.format(**ids), *args, **kwargs)
        assert response.status_code == expected[principal], (
            name,
            principal,
            response.content[:200],
        )
        if expected[principal] == 404:
            missing = getattr(client, method)(
                path.format(**_ids(world, missing=True)), *args, **kwargs
            )
            assert missing.status_code == 404
            assert response.content == missing.content, (name, principal)
            assert response["Content-Type"] == missing["Content-Type"]


SHARED_EXPECTED = {
    "public_link": 200,
    "login_link": 200,
    "login_link_anonymous": 401,
    "revoked_link": 404,
    "expired_link": 404,
}


def test_shared_api_matrix(world):
    for principal, status in SHARED_EXPECTED.items():
        _, token_name = PRINCIPALS[principal]
        client = _api_client(world, principal)
        response = client.get(f"/api/v1/shared/{world.tokens[token_name]}/")
        assert response.status_code == status, principal
        if status == 200:
            body = response.json()
            assert body["content"]["system"] in (content()["system"], "second")
            assert world.tokens[token_name] not in response.content.decode()
        if status == 404:
            unknown = client.get(f"/api/v1/shared/rl_{secrets.token_urlsafe(32)}/")
            assert response.content == unknown.content
    # Everyone else holds no token: an unknown one is a plain 404.
    assert api_client_for(world.owner).get("/api/v1/shared/rl_nope_nope_nope/").status_code == 404


def _page_client(world, principal) -> Client:
    client = Client()
    username, _ = PRINCIPALS[principal]
    if username:
        client.force_login(world.users.get(username) or world.owner)
    return client


PAGE_OUTSIDERS = {
    "stranger": 404,
    "anonymous": 302,
    "public_link": 302,
    "login_link": 404,
    "login_link_anonymous": 302,
    "revoked_link": 302,
    "expired_link": 302,
    "revoked_grantee": 404,
}
PAGE_MATRIX = [
    (
        "prompt-page",
        "get",
        "/playground/p/{p}/",
        None,
        {"owner": 200, "editor": 200, "viewer": 200, **PAGE_OUTSIDERS},
    ),
    (
        "diff-page",
        "get",
        "/playground/p/{p}/diff/?a={root}&b={v2}",
        None,
        {"owner": 200, "editor": 200, "viewer": 200, **PAGE_OUTSIDERS},
    ),
    (
        "save",
        "post",
        "/playground/p/{p}/save/",
        {"parent": "{v2}", "provider": "echo", "system": "x"},
        {"owner": 302, "editor": 302, "viewer": 403, **PAGE_OUTSIDERS},
    ),
    (
        "revert",
        "post",
        "/playground/p/{p}/revert/{root}/",
        {"parent": "{v2}"},
        {"owner": 302, "editor": 302, "viewer": 403, **PAGE_OUTSIDERS},
    ),
    (
        "share-panel",
        "get",
        "/playground/p/{p}/share/",
        None,
        {"owner": 200, "editor": 403, "viewer": 403, **PAGE_OUTSIDERS},
    ),
    (
        "link-create",
        "post",
        "/playground/p/{p}/share/links/",
        {"access": "public", "scope": "version", "version": "{root}"},
        {"owner": 200, "editor": 403, "viewer": 403, **PAGE_OUTSIDERS},
    ),
    (
        "grant-add",
        "post",
        "/playground/p/{p}/share/grants/",
        {"username": "stranger", "role": "viewer"},
        {"owner": 200, "editor": 403, "viewer": 403, **PAGE_OUTSIDERS},
    ),
]


@pytest.mark.parametrize(
    ("name", "method", "path", "body", "expected"), PAGE_MATRIX, ids=[r[0] for r in PAGE_MATRIX]
)
def test_page_authorization_matrix(world, name, method, path, body, expected):
    for principal in PRINCIPALS:
        client = _page_client(world, principal)
        ids = _ids(world)
        args = [{k: str(_fill(v, ids)) for k, v in body.items()}] if body is not None else []
        response = getattr(client, method)(path.format(**ids), *args)
        assert response.status_code == expected[principal], (name, principal)
        if expected[principal] == 302 and principal not in ("owner", "editor"):
            assert response["Location"].startswith("/accounts/login/")
        if expected[principal] == 404:
            missing = getattr(client, method)(path.format(**_ids(world, missing=True)), *args)
            assert response.content == missing.content, (name, principal)


def test_shared_page_matrix(world):
    expected = {
        "public_link": 200,
        "login_link": 200,
        "login_link_anonymous": 302,
        "revoked_link": 410,  # the page says the link ended, and nothing else
        "expired_link": 410,
    }
    for principal, status in expected.items():
        _, token_name = PRINCIPALS[principal]
        client = _page_client(world, principal)
        response = client.get(f"/s/{world.tokens[token_name]}")
        assert response.status_code == status, principal
        if status == 302:
            assert response["Location"].startswith("/accounts/login/?next=/s/")
        if status == 410:
            body = response.content.decode()
            said = "was revoked" if principal == "revoked_link" else "has expired"
            assert f"This link {said}" in body
            assert world.prompt.title not in body and "/playground/p/" not in body
            unknown = client.get(f"/s/rl_{secrets.token_urlsafe(32)}")
            assert unknown.status_code == 404 and "Not found" in unknown.content.decode()


def test_revoked_link_and_grant_stop_on_the_next_request(world):
    anonymous = api_client_for(None)
    url = f"/api/v1/shared/{world.tokens['public']}/"
    assert anonymous.get(url).status_code == 200
    share_link_revoke(actor=world.owner, link=world.links["public"])
    assert anonymous.get(url).status_code == 404

    viewer = api_client_for(world.users["viewer"])
    assert viewer.get(f"/api/v1/versions/{world.v2.pk}/").status_code == 200
    grant_revoke(actor=world.owner, prompt=world.prompt, username="viewer")
    assert viewer.get(f"/api/v1/versions/{world.v2.pk}/").status_code == 404
    page = _page_client(world, "viewer").get(f"/playground/p/{world.prompt.pk}/")
    assert page.status_code == 404


def test_new_enemy_sees_nothing_added_after_revocation(world):
    """Revoke Bob, then write a secret: no path shows it to Bob."""
    bob = world.users["editor"]
    api = api_client_for(bob)
    page = Client()
    page.force_login(bob)
    grant_revoke(actor=world.owner, prompt=world.prompt, username="editor")
    secret = save(world.owner, world.prompt, world.v2, system="SECRET after revocation").version
    paths = [
        f"/api/v1/prompts/{world.prompt.pk}/",
        f"/api/v1/prompts/{world.prompt.pk}/versions/",
        f"/api/v1/versions/{secret.pk}/",
        f"/api/v1/versions/{secret.pk}/diff/?against={world.root.pk}",
        f"/api/v1/versions/{world.root.pk}/diff/?against={secret.pk}",
        f"/api/v1/versions/{secret.pk}/export/?api=anthropic&format=json",
        f"/api/v1/prompts/{world.prompt.pk}/labels/",
        "/api/v1/prompts/",
    ]
    for path in paths:
        response = api.get(path)
        assert b"SECRET" not in response.content, path
        assert str(secret.pk) not in response.json().__repr__() or path == "/api/v1/prompts/", path
    assert api.get("/api/v1/prompts/").json()["count"] == 0
    for path in (
        f"/playground/p/{world.prompt.pk}/",
        f"/playground/p/{world.prompt.pk}/?v={secret.pk}",
        f"/playground/p/{world.prompt.pk}/diff/?a={world.root.pk}&b={secret.pk}",
        "/playground/",
    ):
        response = page.get(path)
        assert b"SECRET" not in response.content, path
    # The login link follows `main`, which now points at the secret: Bob could only see it
    # through that link if he held its token, which a grant never gave him.
    assert (
        api.post(
            f"/api/v1/prompts/{world.prompt.pk}/versions/",
            {"parent": secret.pk, "content": content()},
            format="json",
        ).status_code
        == 404
    )
    assert PromptVersion.objects.filter(parent=secret).count() == 0


def test_label_link_follows_the_label(world):
    stranger = api_client_for(world.users["stranger"])
    url = f"/api/v1/shared/{world.tokens['login']}/"
    assert stranger.get(url).json()["id"] == world.v2.pk
    v3 = save(world.owner, world.prompt, world.v2, system="third").version
    assert stranger.get(url).json()["id"] == v3.pk


def test_no_token_in_database_logs_or_responses(world, caplog):
    owner_api = api_client_for(world.owner)
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    logging.getLogger().addHandler(handler)
    try:
        with caplog.at_level(logging.DEBUG):
            created = owner_api.post(
                f"/api/v1/prompts/{world.prompt.pk}/links/",
                {"access": "public", "version": world.root.pk},
                format="json",
            )
            token = created.json()["url"].rsplit("/s/", 1)[1]
            assert token.startswith("rl_")
            assert len(token) >= 3 + 43
            anonymous = Client()
            assert anonymous.get(f"/s/{token}").status_code == 200
            assert api_client_for(None).get(f"/api/v1/shared/{token}/").status_code == 200
            owner_api.delete(f"/api/v1/links/{created.json()['id']}/")
            assert anonymous.get(f"/s/{token}").status_code == 410  # logged as "Gone: <path>"
            listed = owner_api.get(f"/api/v1/prompts/{world.prompt.pk}/links/").content.decode()
            log_api = owner_api.get(
                f"/api/v1/prompts/{world.prompt.pk}/access-log/"
            ).content.decode()
            panel = (
                _page_client(world, "owner")
                .get(f"/playground/p/{world.prompt.pk}/")
                .content.decode()
            )
    finally:
        logging.getLogger().removeHandler(handler)
    every_token = [token, *world.tokens.values()]
    for t in every_token:
        assert t not in listed
        assert t not in log_api
        assert t not in panel
        assert t not in caplog.text
        assert t not in stream.getvalue()
        assert t[:20] not in caplog.text
    # Not in any column of any table.
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names():
            cursor.execute(f'SELECT * FROM "{table}"')  # noqa: S608 (table names from introspection)
            dump = repr(cursor.fetchall())
            for t in every_token:
                assert t not in dump, table
    assert AccessLogEntry.objects.filter(prompt=world.prompt, via="link").count() >= 2


def test_guessing_random_tokens_never_hits():
    # A guess of the right shape opens nothing while live links exist, and neither does one
    # that starts like a real token (the hint the row keeps): only the whole token, hashed,
    # finds a link. One guess proves it; the odds of a 256-bit token are not what is tested.
    owner = make_user("owner")
    prompt, root = make_prompt(owner)
    tokens = [
        share_link_create(actor=owner, prompt=prompt, access="public", version=root)[1]
        for _ in range(5)
    ]
    assert all(share_link_resolve(token=token) is not None for token in tokens)
    assert share_link_resolve(token="rl_" + secrets.token_urlsafe(32)) is None
    near = tokens[0][:-1] + ("B" if tokens[0][-1] == "A" else "A")
    assert share_link_resolve(token=near) is None


def test_failed_lookups_are_rate_limited(world, settings):
    settings.SHARE_GUESS_LIMIT = 5
    settings.SHARE_GUESS_WINDOW = 60
    client = api_client_for(None)
    statuses = [
        client.get(f"/api/v1/shared/rl_{secrets.token_urlsafe(32)}/").status_code for _ in range(7)
    ]
    assert statuses == [404] * 5 + [429] * 2
    limited = client.get(f"/api/v1/shared/{world.tokens['public']}/")
    assert limited.status_code == 429
    assert 1 <= int(limited["Retry-After"]) <= 60
    assert "Too many" in limited.json()["detail"]
    page = Client().get(f"/s/rl_{secrets.token_urlsafe(32)}")
    assert page.status_code == 429
    assert page["Retry-After"]
    # Another client address is not affected.
    other = Client(REMOTE_ADDR="10.9.8.7").get(f"/s/{world.tokens['public']}")
    assert other.status_code == 200


def test_copy_to_my_prompts(world):
    stranger = _page_client(world, "stranger")
    response = stranger.post(f"/s/{world.tokens['public']}/copy")
    assert response.status_code == 302
    copy = world.users["stranger"].prompts.get()
    assert copy.title == f"Copy of {world.prompt.title}"
    assert copy.versions.get().content_hash == world.root.content_hash
    assert Client().post(f"/s/{world.tokens['public']}/copy").status_code == 302  # to login


def test_shared_with_me_and_grant_roles(world):
    viewer_page = _page_client(world, "viewer").get("/playground/").content.decode()
    assert world.prompt.title in viewer_page
    assert "Viewer" in viewer_page
    html = _page_client(world, "viewer").get(f"/playground/p/{world.prompt.pk}/").content.decode()
    assert "Save version" not in html
    assert "viewer · shared by owner" in html
    html = _page_client(world, "editor").get(f"/playground/p/{world.prompt.pk}/").content.decode()
    assert "Save version" in html
    assert "Share</button>" not in html
    api = api_client_for(world.users["viewer"])
    assert {p["id"] for p in api.get("/api/v1/prompts/").json()["results"]} == {world.prompt.pk}
    assert AccessLogEntry.objects.filter(prompt=world.prompt, via="grant").exists()


def test_sharing_bad_input(world):
    api = api_client_for(world.owner)
    url = f"/api/v1/prompts/{world.prompt.pk}/links/"
    cases = [
        ({"access": "everyone", "version": world.root.pk}, "access"),
        ({"access": "public"}, "Give exactly one"),
        ({"access": "public", "version": world.root.pk, "label": "main"}, "Give exactly one"),
        ({"access": "public", "label": "nope"}, "label"),
        ({"access": "public", "version": 999999}, "version"),
        (
            {"access": "public", "version": world.root.pk, "expires_at": "2001-01-01T00:00:00Z"},
            "expires_at",
        ),
        ({"access": "public", "version": world.root.pk, "expires_at": "soon"}, "expires_at"),
    ]
    before = ShareLink.objects.count()
    for body, needle in cases:
        response = api.post(url, body, format="json")
        assert response.status_code == 400, body
        assert needle in response.json()["detail"], (body, response.json())
    assert ShareLink.objects.count() == before
    grants = f"/api/v1/prompts/{world.prompt.pk}/grants/"
    before = AccessGrant.objects.count()
    for body, needle in (
        ({"username": "ghost", "role": "viewer"}, "username"),
        ({"username": "stranger", "role": "admin"}, "role"),
        ({"username": "owner", "role": "viewer"}, "owner"),
    ):
        response = api.post(grants, body, format="json")
        assert response.status_code == 400, body
        assert needle in response.json()["detail"], body
    assert AccessGrant.objects.count() == before


def test_query_counts_do_not_grow_with_links(world):
    from django.test.utils import CaptureQueriesContext

    api = api_client_for(world.owner)
    page = _page_client(world, "owner")

    def count():
        with CaptureQueriesContext(connection) as a:
            assert api.get(f"/api/v1/prompts/{world.prompt.pk}/links/").status_code == 200
        with CaptureQueriesContext(connection) as b:
            assert page.get(f"/playground/p/{world.prompt.pk}/").status_code == 200
        return len(a), len(b)

    api.get("/api/v1/prompts/")  # the key's first use records last_used_at (once a minute)
    before = count()
    for _ in range(30):
        share_link_create(actor=world.owner, prompt=world.prompt, access="public", version=world.v2)
        user = make_user()
        grant_set(actor=world.owner, prompt=world.prompt, username=user.username, role="viewer")
    assert count() == before


def test_api_key_tokens_are_not_share_tokens(world):
    _, key = api_token_create(actor=world.owner)
    assert share_link_resolve(token=key) is None


# --- a link reveals only what it shares (issue #10 §1) ---------------------------------------


@dataclass
class Planted:
    owner: object
    prompt: object
    shared: object
    secrets: list


@pytest.fixture
def planted() -> Planted:
    """A prompt whose parent, child and sibling of the shared version each hold a secret."""
    owner = make_user("planter")
    parent_secret, child_secret, sibling_secret = (
        f"SECRET-{name}-{secrets.token_hex(4)}" for name in ("parent", "child", "sibling")
    )
    prompt, root = make_prompt(
        owner,
        system=f"Key {parent_secret}",
        messages=[{"role": "user", "content": f"customer {parent_secret}"}],
    )
    shared = save(owner, prompt, root, message="scrubbed", system="clean").version
    save(owner, prompt, root, message=sibling_secret, system=sibling_secret)
    save(owner, prompt, shared, message=child_secret, system=child_secret)
    # `main` goes back to the clean version, so a label link shows it as well.
    from playground.models import Label

    Label.objects.filter(prompt=prompt, name="main").update(version=shared)
    return Planted(owner, prompt, shared, [parent_secret, child_secret, sibling_secret])


def _assert_no_secret(planted, body: bytes, where: str) -> None:
    text = body.decode()
    for secret in planted.secrets:
        assert secret not in text, (where, secret)


@pytest.mark.parametrize("scope", ["pinned", "label"])
def test_shared_surfaces_never_show_another_versions_text(planted, scope):
    kwargs = {"version": planted.shared} if scope == "pinned" else {"label_name": "main"}
    _, token = share_link_create(
        actor=planted.owner, prompt=planted.prompt, access="public", **kwargs
    )
    anonymous = Client()
    page = anonymous.get(f"/s/{token}")
    assert page.status_code == 200
    assert b"clean" in page.content
    _assert_no_secret(planted, page.content, "page")
    api = api_client_for(None).get(f"/api/v1/shared/{token}/")
    assert api.status_code == 200
    assert api.json()["content"]["system"] == "clean"
    _assert_no_secret(planted, api.content, "api")
    # Export on the shared page is every format of the shared version only.
    assert page.content.count(b"export-variant") == 8
    # Copy makes a prompt with the shared version's content only.
    copier = make_user("copier")
    client = Client()
    client.force_login(copier)
    assert client.post(f"/s/{token}/copy").status_code == 302
    copied = copier.prompts.get()
    assert copied.versions.count() == 1
    mine = client.get(f"/playground/p/{copied.pk}/")
    assert b"clean" in mine.content
    _assert_no_secret(planted, mine.content, "copy")
    exported = api_client_for(copier).get(
        f"/api/v1/versions/{copied.versions.get().pk}/export/?api=anthropic&format=python"
    )
    assert exported.status_code == 200
    _assert_no_secret(planted, exported.content, "copy export")


def test_shared_responses_are_not_cached_and_keep_the_token_in_the_site(world):
    page = Client().get(f"/s/{world.tokens['public']}")
    assert page.status_code == 200
    assert "no-store" in page["Cache-Control"]
    # no-referrer made Chromium send `Origin: null` on the copy form: same-origin keeps the
    # token from third parties and lets the form's CSRF check pass.
    assert page["Referrer-Policy"] == "same-origin"
    assert b'content="no-referrer"' not in page.content
    api = api_client_for(None).get(f"/api/v1/shared/{world.tokens['public']}/")
    assert "no-store" in api["Cache-Control"]
    for status_page in (
        Client().get(f"/s/{world.tokens['revoked']}"),
        Client().get(f"/s/{world.tokens['login']}"),
        api_client_for(None).get(f"/api/v1/shared/{world.tokens['revoked']}/"),
    ):
        assert "no-store" in status_page["Cache-Control"]
    mine = _page_client(world, "owner").get(f"/playground/p/{world.prompt.pk}/")
    assert "private" in mine["Cache-Control"]
    listed = api_client_for(world.owner).get(f"/api/v1/prompts/{world.prompt.pk}/")
    assert "private" in listed["Cache-Control"]


def test_copy_passes_the_csrf_check_the_way_a_browser_sends_it(world):
    """With enforced CSRF, the form's token and the same-origin Referer Chromium sends."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(world.users["stranger"])
    page = client.get(f"/s/{world.tokens['public']}")
    token = page.content.decode().split('name="csrfmiddlewaretoken" value="')[1].split('"')[0]
    response = client.post(
        f"/s/{world.tokens['public']}/copy",
        {"csrfmiddlewaretoken": token},
        HTTP_ORIGIN="http://testserver",
        HTTP_REFERER=f"http://testserver/s/{world.tokens['public']}",
    )
    assert response.status_code == 302
    assert world.users["stranger"].prompts.count() == 1


def test_login_link_keeps_its_token_out_of_the_login_url(world):
    token = world.tokens["login"]
    client = Client()
    for response in (
        client.get(f"/s/{token}"),
        client.post(f"/s/{world.tokens['public']}/copy"),
    ):
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/")
        assert "rl_" not in response["Location"]
    # "Log in to copy" on a public page does not carry the token either.
    page = client.get(f"/s/{world.tokens['public']}").content.decode()
    assert "?next=/s/rl_" not in page
    assert "next=%2Fs%2Frl_" not in page
    # After logging in, the visitor lands back on the link they opened.
    client.get(f"/s/{token}")
    from tests.factories import PASSWORD

    login = client.post(
        "/accounts/login/",
        {"username": "stranger", "password": PASSWORD, "next": "/s/resume"},
    )
    assert login.status_code == 302
    assert login["Location"] == "/s/resume"
    resumed = client.get("/s/resume")
    assert resumed.status_code == 302
    assert resumed["Location"] == f"/s/{token}"
    assert client.get(resumed["Location"]).status_code == 200


@pytest.mark.parametrize("scope", ["pinned", "label"])
def test_shared_json_heads_point_at_the_links_own_range_url(planted, scope, settings):
    """A long text of the shared version comes as a head whose `text_url` is the link's range
    URL (never the owner's), and reading it shows only that version's text."""
    settings.PLAYGROUND_JSON_TEXT_HEAD_CHARS = 50
    long_system = "clean " + "words of the shared version only. " * 40
    long = save(
        planted.owner, planted.prompt, planted.shared, message="long clean", system=long_system
    ).version
    from playground.models import Label

    Label.objects.filter(prompt=planted.prompt, name="main").update(version=long)
    kwargs = {"version": long} if scope == "pinned" else {"label_name": "main"}
    _, token = share_link_create(
        actor=planted.owner, prompt=planted.prompt, access="public", **kwargs
    )
    anonymous = api_client_for(None)
    answer = anonymous.get(f"/api/v1/shared/{token}/")
    assert answer.status_code == 200
    system = answer.json()["content"]["system"]
    assert system["truncated"] is True
    assert system["total"] == len(long_system)
    assert system["text"] == long_system[:50]
    assert system["text_url"] == f"/api/v1/shared/{token}/text/?field=system&version={long.pk}"
    assert "/api/v1/versions/" not in answer.content.decode()
    _assert_no_secret(planted, answer.content, "api head")
    rest = anonymous.get(system["text_url"] + f"&offset=50&length={len(long_system)}")
    assert rest.status_code == 200
    assert system["text"] + rest.json()["text"] == long_system
    _assert_no_secret(planted, rest.content, "api range")
    full = anonymous.get(f"/api/v1/shared/{token}/?full=1")
    assert full.status_code == 200
    whole = b"".join(full.streaming_content)
    assert json.loads(whole)["content"]["system"] == long_system
    _assert_no_secret(planted, whole, "api full")
    assert "no-store" in full["Cache-Control"]
    # The owner's range URL of the same version is not the link's: 401 without a key.
    assert anonymous.get(f"/api/v1/versions/{long.pk}/text/?field=system").status_code == 401
