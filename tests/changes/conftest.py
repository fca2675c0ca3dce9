"""A prompt with `production` gated, shared with a reviewer, a second reviewer and an
editor; a request moving `production` from v1 to v2."""

from types import SimpleNamespace

import pytest

from playground.services import grant_set, label_move
from tests.factories import api_client_for, make_user
from tests.playground.factories import make_prompt, save

SYSTEM_V2 = (
    "You are a careful reviewer.\nAnswer in short paragraphs.\nAlways name the riskiest "
    "component first.\n"
)


@pytest.fixture
def world(db, settings):
    settings.RUN_ECHO_DELAY_MS = 0
    settings.RUN_EAGER_MODE = "inline"
    settings.EVAL_EAGER_MODE = "inline"
    alice = make_user("alice")
    bob = make_user("bob")
    carol = make_user("carol")
    carol.email = "carol@example.com"
    carol.save(update_fields=["email"])
    dave = make_user("dave")
    erin = make_user("erin")  # an editor
    stranger = make_user("stranger")
    prompt, v1 = make_prompt(alice, provider="echo", model="echo-1")
    label_move(actor=alice, prompt=prompt, name="production", version=v1, expected=None)
    v2 = save(alice, prompt, v1, provider="echo", model="echo-1", system=SYSTEM_V2).version
    for user, role in ((bob, "viewer"), (carol, "viewer"), (dave, "viewer"), (erin, "editor")):
        grant_set(actor=alice, prompt=prompt, username=user.username, role=role)
    return SimpleNamespace(
        alice=alice,
        bob=bob,
        carol=carol,
        dave=dave,
        erin=erin,
        stranger=stranger,
        prompt=prompt,
        v1=v1,
        v2=v2,
        api={u.username: api_client_for(u) for u in (alice, bob, carol, dave, erin, stranger)},
    )


@pytest.fixture
def opened(world):
    """alice's request: production v1 → v2, bob and carol asked to review."""
    answer = world.api["alice"].post(
        f"/api/v1/prompts/{world.prompt.pk}/changes/",
        {
            "label": "production",
            "from": "v1",
            "to": "v2",
            "description": "Name the riskiest component first.",
            "reviewers": ["bob", "carol"],
        },
        format="json",
    )
    assert answer.status_code == 201, answer.json()
    world.request_id = answer.json()["id"]
    return world
