"""The fetch API through a standard HTTP caching client (cachecontrol on requests) against a live
server: the ETag names the representation, so no cache serves a stale version or another
caller's answer (issue #22)."""

import pytest
import requests
from cachecontrol import CacheControl
from cachecontrol.cache import DictCache

from accounts.services import api_token_create
from playground.services import grant_revoke, grant_set, label_move, prompt_version_revert
from tests.factories import make_user
from tests.playground.factories import make_prompt, save

pytestmark = pytest.mark.django_db(transaction=True)


def _key(user) -> dict[str, str]:
    return {"Authorization": f"Token {api_token_create(actor=user)[1]}"}


@pytest.fixture
def cached_session():
    """One caching client (one cache) for every caller of a test, as a shared HTTP library
    cache in an application would be."""
    with CacheControl(requests.Session(), cache=DictCache()) as session:
        yield session


def test_revert_and_label_move_reach_a_caching_client_at_once(live_server, cached_session):
    owner = make_user("owner")
    prompt, v1 = make_prompt(owner, system="Answer briefly.\n")
    label_move(actor=owner, prompt=prompt, name="production", version=v1)
    url = f"{live_server.url}/api/v1/prompts/{prompt.pk}/labels/production/version/"
    auth = _key(owner)

    first = cached_session.get(url, headers=auth)
    assert first.status_code == 200
    assert first.json()["id"] == v1.pk
    assert not getattr(first, "from_cache", False)
    again = cached_session.get(url, headers=auth)  # revalidated: 304, body from the cache
    assert again.json()["id"] == v1.pk
    assert again.from_cache

    v2 = save(owner, prompt, v1, "edit", system="Answer at length.\n").version
    v3 = prompt_version_revert(actor=owner, prompt=prompt, target=v1, parent=v2).version
    assert v3.content_hash == v1.content_hash and v3.pk != v1.pk
    label_move(actor=owner, prompt=prompt, name="production", version=v3)

    moved = cached_session.get(url, headers=auth)
    assert moved.status_code == 200
    assert not getattr(moved, "from_cache", False)
    assert (moved.json()["id"], moved.json()["number"]) == (v3.pk, v3.number)
    assert moved.headers["ETag"] != first.headers["ETag"]
    assert cached_session.get(url, headers=auth).json()["id"] == v3.pk


def test_a_second_caller_never_gets_the_first_callers_cached_answer(live_server, cached_session):
    owner = make_user("owner")
    viewer = make_user("viewer")
    stranger = make_user("stranger")
    prompt, v1 = make_prompt(owner, system="Private instructions.\n")
    label_move(actor=owner, prompt=prompt, name="production", version=v1)
    grant_set(actor=owner, prompt=prompt, username="viewer", role="viewer")
    url = f"{live_server.url}/api/v1/prompts/{prompt.pk}/labels/production/version/"
    owner_auth, viewer_auth, stranger_auth = _key(owner), _key(viewer), _key(stranger)

    mine = cached_session.get(url, headers=owner_auth)
    assert mine.status_code == 200
    assert mine.headers["Cache-Control"] == "private, no-cache"
    assert {"Authorization", "Cookie"} <= {v.strip() for v in mine.headers["Vary"].split(",")}
    assert cached_session.get(url, headers=owner_auth).from_cache

    # Another key: the cached answer varies on Authorization, so it is neither served nor
    # revalidated for them; the server decides.
    theirs = cached_session.get(url, headers=stranger_auth)
    assert theirs.status_code == 404
    assert not getattr(theirs, "from_cache", False)
    assert b"Private instructions" not in theirs.content
    viewed = cached_session.get(url, headers=viewer_auth)
    assert viewed.status_code == 200
    assert not getattr(viewed, "from_cache", False)
    assert cached_session.get(url, headers=viewer_auth).from_cache

    # Revoked, with a valid ETag in the cache: 404, never the cached body.
    grant_revoke(actor=owner, prompt=prompt, username="viewer")
    revoked = cached_session.get(url, headers=viewer_auth)
    assert revoked.status_code == 404
    assert not getattr(revoked, "from_cache", False)
    assert revoked.json() == {"detail": "Not found."}
