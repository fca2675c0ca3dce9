"""The access rule is defined once (playground/access.py) and both read paths follow it: the
ORM selectors and the hot fetch path's one raw SQL statement (playground/sharing/fetch.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.db.models import Q

from accounts.services import api_token_create
from playground import access, selectors
from playground.exceptions import NotFound
from playground.services import grant_set
from playground.sharing import fetch
from tests.factories import make_user
from tests.playground.factories import make_prompt


def _statements_rebuilt() -> None:
    # The fetch statements are written once per process; a changed rule needs them anew.
    for cached in (fetch._version_part, fetch._user_statement, fetch._key_statement):
        cached.cache_clear()


@pytest.fixture
def rule_restored() -> Iterator[None]:
    yield
    _statements_rebuilt()  # after monkeypatch restored the rule: statements of the real rule


@pytest.mark.django_db
def test_changing_the_rule_in_one_place_changes_every_read_path(monkeypatch, rule_restored):
    owner, viewer = make_user(), make_user()
    prompt, version = make_prompt(owner)
    grant_set(actor=owner, prompt=prompt, username=viewer.username, role="viewer")
    viewer_key = api_token_create(actor=viewer)[1]

    def roles() -> dict[str, str | None]:
        def attempt(read) -> str | None:
            try:
                role = read()
            except NotFound:
                return None
            return None if role is None else str(role)

        return {
            "selector": attempt(
                lambda: selectors.prompt_access_get_for_user(user=viewer, prompt_id=prompt.pk).role
            ),
            "fetch": attempt(
                lambda: fetch.version_fetch_for_user(user=viewer, version_id=version.pk).role
            ),
            "fetch with key": attempt(
                lambda: (
                    fetch.version_fetch_for_key(key=viewer_key, version_id=version.pk).version.role
                )
            ),
            "listed": attempt(
                lambda: (
                    "viewer"
                    if selectors.prompt_list_visible(user=viewer).filter(pk=prompt.pk).exists()
                    else None
                )
            ),
            "owner, fetch": attempt(
                lambda: fetch.version_fetch_for_user(user=owner, version_id=version.pk).role
            ),
        }

    assert roles() == dict.fromkeys(("selector", "fetch", "fetch with key", "listed"), "viewer") | {
        "owner, fetch": "owner"
    }

    # One change, in playground/access.py only: no grant gives access any more (the condition
    # matches no row), so only owners read.
    monkeypatch.setattr(
        access, "grant_in_force", lambda: Q(revoked_at__isnull=True, pk__isnull=True)
    )
    _statements_rebuilt()

    assert roles() == dict.fromkeys(("selector", "fetch", "fetch with key", "listed"), None) | {
        "owner, fetch": "owner"
    }


def test_the_decision_is_owner_first_then_the_grant_in_force():
    assert access.role_decide(user_id=7, owner_id=7, grant_role="viewer") == "owner"
    assert access.role_decide(user_id=7, owner_id=8, grant_role="editor") == "editor"
    assert access.role_decide(user_id=7, owner_id=8, grant_role=None) is None
    assert access.role_decide(user_id=None, owner_id=8, grant_role=None) is None
