"""The fetch API's two request stacks answer alike (issue #35).

`GET /versions/{id}/` and the fetch by label are answered by plain Django views (the fast
path, playground/api/fetch.py) and everything else by their DRF classes. This fence sends the
same requests through each stack — the DRF one by routing plain-JSON GETs to the DRF class,
as it routes every other request — and compares what the caller and the operator see:
status, headers and body; throttling (a DRF throttle on the class counts and refuses on both,
429 with the same Retry-After); the log records with their fields; the access-log rows and
the API key's last use. A change to one stack that the other does not follow fails here.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import Client
from django.utils import timezone
from rest_framework.authentication import SessionAuthentication
from rest_framework.permissions import IsAuthenticated
from rest_framework.throttling import UserRateThrottle

from accounts.authentication import HashedTokenAuthentication
from accounts.models import ApiToken
from accounts.services import api_token_create
from common.logging import record_extras
from playground.api import fetch as fetch_api
from playground.models import AccessLogEntry
from playground.services import grant_set, label_move
from tests.factories import make_user
from tests.playground.factories import make_prompt, save

pytestmark = pytest.mark.django_db

STACKS = ("fast", "drf")
REPEAT = 3  # each request is sent this many times in a row: the throttle below allows 2


class _FixedClockThrottle(UserRateThrottle):
    """DRF's per-user throttle, 2 a minute, on a clock that does not move: Retry-After is the
    same number on both stacks."""

    rate = "2/min"
    timer = staticmethod(lambda: 1_000_000.0)


def _key(user: User, **kwargs: Any) -> str:
    _, key = api_token_create(actor=user, **kwargs)
    return key


@pytest.fixture
def world() -> dict[str, Any]:
    owner, viewer, stranger, gone = (make_user(n) for n in ("owner", "viewer", "stranger", "gone"))
    prompt, v1 = make_prompt(owner, title="Fetched", system="First system prompt.\n")
    v2 = save(owner, prompt, v1, "second", system="Second system prompt.\n").version
    label_move(actor=owner, prompt=prompt, name="production", version=v1)
    grant_set(actor=owner, prompt=prompt, username=viewer.username, role="viewer")
    expired = _key(owner)
    ApiToken.objects.filter(user=owner).update(expires_at=timezone.now() - timedelta(seconds=1))
    gone_key = _key(gone)
    User.objects.filter(pk=gone.pk).update(is_active=False)
    by_id = f"/api/v1/versions/{v2.pk}/"
    by_label = f"/api/v1/prompts/{prompt.pk}/labels/production/version/"
    return {
        "users": {"owner": owner, "viewer": viewer},
        "keys": {
            "owner": _key(owner),
            "viewer": _key(viewer),
            "stranger": _key(stranger),
            "expired": expired,
            "inactive": gone_key,
        },
        "urls": {
            "id": by_id,
            "label": by_label,
            "full": f"{by_id}?full=1",
            "bad-full": f"{by_id}?full=2",
            "unknown": "/api/v1/versions/99999999/",
            "huge": "/api/v1/versions/99999999999999999999/",
            "unknown-label": f"/api/v1/prompts/{prompt.pk}/labels/nope/version/",
        },
    }


# (caller, url, extra headers): a caller is "session:<user>", "key:<key>", a raw
# Authorization header ("header:<value>"), or "anonymous".
SCENARIOS = {
    "owner's key, by id": ("key:owner", "id", {}),
    "owner's key, by label": ("key:owner", "label", {}),
    "owner's key, full": ("key:owner", "full", {}),
    "owner's key, bad full": ("key:owner", "bad-full", {}),
    "owner's key, If-None-Match": ("key:owner", "label", {"etag": True}),
    "grantee's key (access log)": ("key:viewer", "label", {}),
    "grantee's session (access log)": ("session:viewer", "id", {}),
    "owner's session": ("session:owner", "label", {}),
    "stranger's key: 404": ("key:stranger", "id", {}),
    "unknown id": ("key:owner", "unknown", {}),
    "huge id": ("key:owner", "huge", {}),
    "unknown label": ("session:owner", "unknown-label", {}),
    "anonymous": ("anonymous", "id", {}),
    "expired key": ("key:expired", "id", {}),
    "inactive account's key": ("key:inactive", "label", {}),
    "unknown key": ("header:Token rlk_not-a-key", "id", {}),
    "no credentials": ("header:Token", "id", {}),
    "spaces": ("header:Token a b", "label", {}),
    "another scheme falls to the session": ("header:Bearer abc", "id", {}),
}


def _client(world: dict[str, Any], caller: str) -> tuple[Client, dict[str, Any]]:
    client = Client()
    kind, _, name = caller.partition(":")
    if kind == "session":
        client.force_login(world["users"][name])
        return client, {}
    if kind == "key":
        return client, {"HTTP_AUTHORIZATION": f"Token {world['keys'][name]}"}
    if kind == "header":
        return client, {"HTTP_AUTHORIZATION": name}
    return client, {}


def _body(response: Any) -> bytes:
    if getattr(response, "streaming", False):
        return b"".join(response.streaming_content)
    return bytes(response.content)


def _stack_answers(
    stack: str,
    world: dict[str, Any],
    scenario: tuple[str, str, dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> list[dict[str, Any]]:
    """What `stack` answers and records for the scenario's request, sent REPEAT times."""
    caller, url_name, options = scenario
    url = world["urls"][url_name]
    cache.clear()  # throttles' and the access log's counters start afresh
    ApiToken.objects.update(last_used_at=None)
    mark = AccessLogEntry.objects.order_by("-pk").values_list("pk", flat=True).first() or 0
    client, headers = _client(world, caller)
    if options.get("etag"):
        headers["HTTP_IF_NONE_MATCH"] = client.get(url, **headers)["ETag"]
        cache.clear()
    answers = []
    with monkeypatch.context() as patch:
        if stack == "drf":  # plain-JSON GETs go to the DRF class, as every other request does
            patch.setattr(fetch_api, "_plain_json_wanted", lambda request: False)
        for _ in range(REPEAT):
            caplog.clear()
            response = client.get(url, **headers)
            answers.append(
                {
                    "status": response.status_code,
                    # every header but the request's own id
                    "headers": {k: v for k, v in response.items() if k != "X-Request-ID"},
                    "body": _body(response),
                    "logs": [
                        (r.name, r.levelname, r.getMessage(), record_extras(r))
                        for r in caplog.records
                    ],
                }
            )
    answers.append(
        {
            "access log": list(
                AccessLogEntry.objects.filter(pk__gt=mark)
                .order_by("pk")
                .values("prompt_id", "via", "grant_id", "user_id", "path")
            ),
            "keys used": sorted(
                ApiToken.objects.exclude(last_used_at=None).values_list("pk", flat=True)
            ),
        }
    )
    return answers


@pytest.mark.parametrize("throttled", [False, True], ids=["no throttle", "DRF throttle"])
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_both_stacks_authenticate_throttle_and_log_alike(
    world, name, throttled, monkeypatch, caplog
):
    caplog.set_level(logging.INFO)
    if throttled:
        for api in (fetch_api.VersionDetailApi, fetch_api.LabelVersionApi):
            monkeypatch.setattr(api, "throttle_classes", [_FixedClockThrottle])
    fast, drf = (
        _stack_answers(stack, world, SCENARIOS[name], monkeypatch, caplog) for stack in STACKS
    )
    for index, (one, other) in enumerate(zip(fast, drf, strict=True)):
        for key in one:
            assert one[key] == other[key], (index, key)
    statuses = [answer["status"] for answer in fast[:REPEAT]]
    if statuses[0] in (200, 304, 400, 404) and throttled:
        # An authenticated caller's third request is refused whatever it asked for.
        assert statuses[2] == 429, statuses
        assert fast[2]["headers"]["Retry-After"] == "60"
    else:
        assert len(set(statuses)) == 1, statuses


def test_the_expected_answers_are_reached(world, monkeypatch, caplog):
    """The comparison above is only a fence if the scenarios cover what they claim."""
    caplog.set_level(logging.INFO)
    seen = {
        name: _stack_answers("fast", world, scenario, monkeypatch, caplog)
        for name, scenario in SCENARIOS.items()
    }
    status = {name: answers[0]["status"] for name, answers in seen.items()}
    assert status["owner's key, by id"] == 200
    assert status["owner's key, If-None-Match"] == 304
    assert status["owner's key, bad full"] == 400
    assert status["stranger's key: 404"] == status["unknown label"] == 404
    assert status["anonymous"] == status["expired key"] == status["unknown key"] == 401
    assert seen["grantee's key (access log)"][-1]["access log"]  # a row, once a minute
    assert seen["owner's key, by id"][-1]["keys used"]  # the key's last use recorded
    assert any(
        record[0] == "django.request" for record in seen["anonymous"][0]["logs"]
    )  # a 401 is logged as a warning with its status


def test_the_fast_path_implements_the_drf_classes_authentication_and_permissions():
    """The fast path restates these two (an API key header first, else an active session's
    user; IsAuthenticated): a class given others must be followed there, or this fails."""
    for api in (fetch_api.VersionDetailApi, fetch_api.LabelVersionApi):
        assert list(api.authentication_classes) == [
            HashedTokenAuthentication,
            SessionAuthentication,
        ]
        assert list(api.permission_classes) == [IsAuthenticated]
