import json
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.models import ApiToken
from playground.models import Label, LabelMove, Prompt, PromptVersion
from tests.factories import api_client_for, make_user
from tests.playground.factories import content, make_prompt, save

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner():
    return make_user("owner")


@pytest.fixture
def api(owner):
    return api_client_for(owner)


def test_create_prompt_and_read_it_back(api):
    response = api.post(
        "/api/v1/prompts/",
        {
            "title": "Inference reviewer",
            "question": "llm-inference-api",
            "content": content(),
            "message": "start",
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["title"] == "Inference reviewer"
    assert body["question"] == "llm-inference-api"
    root_id = body["root_version"]

    version = api.get(f"/api/v1/versions/{root_id}/").json()
    assert version["parent"] is None
    assert version["message"] == "start"
    assert version["content"]["system"] == content()["system"]
    assert version["content"]["messages"] == content()["messages"]
    assert len(version["content_hash"]) == 64

    listing = api.get("/api/v1/prompts/").json()
    assert [p["id"] for p in listing["results"]] == [body["id"]]
    detail = api.get(f"/api/v1/prompts/{body['id']}/").json()
    assert detail["labels"] == [
        {
            "name": "main",
            "version": root_id,
            "protected": False,
            "gated": False,
            "updated_at": detail["labels"][0]["updated_at"],
        }
    ]


def test_save_versions_tree_and_identical_replay(api, owner):
    prompt, root = make_prompt(owner)
    url = f"/api/v1/prompts/{prompt.pk}/versions/"
    first = api.post(
        url, {"parent": root.pk, "content": content(system="v2"), "message": "two"}, format="json"
    )
    assert first.status_code == 201
    assert first.json()["parent"] == root.pk
    assert first.json()["main_moved"] is True
    replay = api.post(
        url, {"parent": root.pk, "content": content(system="v2"), "message": "two"}, format="json"
    )
    assert replay.status_code == 200
    assert replay.json()["id"] == first.json()["id"]
    sibling = api.post(url, {"parent": root.pk, "content": content(system="fork")}, format="json")
    assert sibling.status_code == 201
    assert sibling.json()["main_moved"] is False

    tree = api.get(url).json()
    assert tree["count"] == 3
    assert {(v["id"], v["parent"]) for v in tree["results"]} == {
        (root.pk, None),
        (first.json()["id"], root.pk),
        (sibling.json()["id"], root.pk),
    }
    assert set(tree["results"][0]) >= {
        "id",
        "parent",
        "author",
        "created_at",
        "message",
        "content_hash",
    }


@pytest.mark.parametrize("method", ["put", "patch", "delete"])
def test_versions_are_immutable_over_the_api(api, owner, method):
    prompt, root = make_prompt(owner)
    response = getattr(api, method)(f"/api/v1/versions/{root.pk}/", {"message": "x"}, format="json")
    assert response.status_code == 405
    assert "detail" in response.json()
    root.refresh_from_db()
    assert root.message == "First version"


def test_diff_across_branches(api, owner):
    prompt, root = make_prompt(owner)
    left = save(
        owner, prompt, root, system="You are a careful reviewer.\nAnswer in bullet points.\n"
    ).version
    right = save(
        owner,
        prompt,
        root,
        params={"temperature": 0.9, "max_tokens": 512, "top_p": None, "stop": []},
        tools=[{"name": "search", "description": "find", "input_schema": {"type": "object"}}],
    ).version
    response = api.get(f"/api/v1/versions/{right.pk}/diff/", {"against": left.pk})
    assert response.status_code == 200
    body = response.json()
    assert body["from"] == left.pk
    assert body["to"] == right.pk
    system = next(t for t in body["texts"] if t["field"] == "system")
    assert system["added"] == 1
    assert system["removed"] == 1
    changed = next(r for r in system["rows"] if r["op"] == "change")
    assert [-1, "bullet points"] in changed["words"] or any(
        op == -1 and "bullet" in text for op, text in changed["words"]
    )
    fields = {c["field"]: c for c in body["changes"]}
    assert fields["params.temperature"]["before"] == 0.5
    assert fields["params.temperature"]["after"] == 0.9
    assert fields["tools.search"]["kind"] == "added"


def test_large_diff_is_truncated(api, owner):
    before = "".join(f"line {i}\n" for i in range(1000))
    after = "".join(f"LINE {i}\n" for i in range(1000))
    prompt, root = make_prompt(owner, system=before)
    child = save(owner, prompt, root, system=after).version
    body = api.get(f"/api/v1/versions/{child.pk}/diff/", {"against": root.pk, "limit": 100}).json()
    system = body["texts"][0]
    assert system["truncated"] is True
    assert len(system["rows"]) == 100
    assert system["more"] == 900


def test_labels_compare_and_set_over_api(api, owner):
    prompt, root = make_prompt(owner)
    v2 = save(owner, prompt, root, system="2").version
    url = f"/api/v1/prompts/{prompt.pk}/labels/"
    created = api.post(
        url, {"name": "production", "version": root.pk, "expected": None}, format="json"
    )
    assert created.status_code == 200
    assert created.json()["protected"] is True
    stale = api.put(f"{url}production/", {"version": v2.pk, "expected": v2.pk}, format="json")
    assert stale.status_code == 409
    assert "moved" in stale.json()["detail"]
    moved = api.put(f"{url}production/", {"version": v2.pk, "expected": root.pk}, format="json")
    assert moved.status_code == 200
    assert moved.json()["version"] == v2.pk
    assert {label["name"] for label in api.get(url).json()} == {"main", "production"}


def test_revert_over_api(api, owner):
    prompt, root = make_prompt(owner)
    v2 = save(owner, prompt, root, system="2").version
    response = api.post(f"/api/v1/versions/{root.pk}/revert/", {}, format="json")
    assert response.status_code == 201
    assert response.json()["parent"] == v2.pk
    assert response.json()["content_hash"] == root.content_hash


# --- bad input: 400 with a detail naming the field, nothing written ---------------------------

BAD_CONTENT = [
    ({"tools": "not json ["}, "tools"),
    ({"tools": [{"name": "x", "input_schema": "nope"}]}, "tools.0.input_schema"),
    ({"response_format": {"name": "r", "schema": [1]}}, "response_format.schema"),
    ({"response_format": "{"}, "response_format"),
    ({"provider": "gemini"}, "provider"),
    ({"params": {"max_tokens": -5}}, "params.max_tokens"),
    ({"params": {"max_tokens": "many"}}, "params.max_tokens"),
    ({"params": {"temperature": 7}}, "params.temperature"),
    ({"params": {"temperature": True}}, "params.temperature"),
    ({"params": {"top_p": 1.5}}, "params.top_p"),
    ({"messages": [], "system": ""}, "messages"),
    ({"messages": [{"role": "robot", "content": "hi"}]}, "messages.0.role"),
    ({"messages": [{"role": "user", "content": 42}]}, "messages.0.content"),
    # Refused by the JSON parser, which names the path in the body.
    ({"system": "bad \ud800 surrogate"}, "content.system"),
    ({"variables": {"1bad": "x"}}, "variables"),
    ({"colour": "red"}, "content"),
]


@pytest.mark.parametrize(("changes", "field"), BAD_CONTENT)
def test_bad_content_is_400_naming_the_field(api, owner, changes, field):
    prompt, root = make_prompt(owner)
    before = PromptVersion.objects.count()
    # ensure_ascii: a lone surrogate travels as the JSON escape \ud800, as a client would send it.
    body = json.dumps({"parent": root.pk, "content": content(**changes)}, ensure_ascii=True)
    response = api.post(
        f"/api/v1/prompts/{prompt.pk}/versions/", body, content_type="application/json"
    )
    assert response.status_code == 400, response.content
    assert response.json()["detail"].startswith(field), response.json()
    assert PromptVersion.objects.count() == before


def test_bad_content_on_create_writes_no_prompt(api):
    response = api.post(
        "/api/v1/prompts/", {"title": "x", "content": content(provider="nope")}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["detail"].startswith("provider")
    assert not Prompt.objects.exists()


@pytest.mark.parametrize("parent", [999_999, "abc", None])
def test_unknown_parent_is_400(api, owner, parent):
    prompt, _ = make_prompt(owner)
    response = api.post(
        f"/api/v1/prompts/{prompt.pk}/versions/",
        {"parent": parent, "content": content()},
        format="json",
    )
    assert response.status_code == 400
    assert response.json()["detail"].startswith("parent")


def test_parent_of_another_prompt_is_400(api, owner):
    prompt, _ = make_prompt(owner)
    _, other_root = make_prompt(owner, title="other")
    response = api.post(
        f"/api/v1/prompts/{prompt.pk}/versions/",
        {"parent": other_root.pk, "content": content()},
        format="json",
    )
    assert response.status_code == 400
    assert response.json()["detail"].startswith("parent")


def test_invalid_utf8_body_is_400(api, owner):
    prompt, root = make_prompt(owner)
    body = (
        json.dumps({"parent": root.pk, "content": content()})
        .encode()
        .replace(b"careful", b"car\xffful")
    )
    response = api.post(
        f"/api/v1/prompts/{prompt.pk}/versions/", body, content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json()["detail"]
    assert PromptVersion.objects.count() == 1


def test_huge_body_is_rejected_cleanly(api, owner, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024 * 1024
    prompt, root = make_prompt(owner)
    body = json.dumps({"parent": root.pk, "content": content(system="x" * 2_000_000)})
    response = api.post(
        f"/api/v1/prompts/{prompt.pk}/versions/", body, content_type="application/json"
    )
    assert response.status_code == 413
    assert "too large" in response.json()["detail"]
    assert PromptVersion.objects.count() == 1


def test_other_users_objects_are_404(owner):
    prompt, root = make_prompt(owner)
    stranger = api_client_for(make_user("stranger"))
    anonymous = api_client_for(None)
    for url in (
        f"/api/v1/prompts/{prompt.pk}/",
        f"/api/v1/prompts/{prompt.pk}/versions/",
        f"/api/v1/prompts/{prompt.pk}/labels/",
        f"/api/v1/versions/{root.pk}/",
        f"/api/v1/versions/{root.pk}/diff/?against={root.pk}",
    ):
        response = stranger.get(url)
        missing = stranger.get(
            url.replace(str(prompt.pk), "987654").replace(str(root.pk), "987654")
        )
        assert response.status_code == 404, url
        assert response.content == missing.content
        assert anonymous.get(url).status_code == 401
    response = stranger.post(
        f"/api/v1/prompts/{prompt.pk}/versions/",
        {"parent": root.pk, "content": content()},
        format="json",
    )
    assert response.status_code == 404
    assert stranger.get("/api/v1/prompts/").json()["count"] == 0
    assert PromptVersion.objects.count() == 1
    assert Label.objects.get(prompt=prompt).version == root


# --- query counts do not grow with the number of versions -------------------------------------


def _queries(callable_) -> int:
    from textstore.cache import caches_clear

    caches_clear()  # measure cold reads both times
    with CaptureQueriesContext(connection) as captured:
        response = callable_()
    assert response.status_code == 200
    return len(captured.captured_queries)


def test_query_counts_do_not_grow_with_versions(owner, client):
    api = api_client_for(owner)
    client.force_login(owner)
    prompt, root = make_prompt(owner)
    parent = root
    for i in range(9):
        parent = save(owner, prompt, parent, system=f"v{i}").version

    def measure():
        return (
            _queries(lambda: api.get(f"/api/v1/prompts/{prompt.pk}/versions/")),
            _queries(lambda: api.get(f"/api/v1/versions/{parent.pk}/")),
            _queries(lambda: client.get(f"/playground/p/{prompt.pk}/")),
        )

    api.get("/api/v1/prompts/")  # the key's first use records last_used_at (once a minute)
    small = measure()
    for i in range(990):
        parent = save(owner, prompt, parent if i % 7 else root, system=f"w{i}").version
    assert PromptVersion.objects.filter(prompt=prompt).count() == 1000
    # The saves may take over a minute on a busy machine: keep the key's use fresh, so the
    # once-a-minute last_used_at write does not land inside the measurement.
    ApiToken.objects.filter(user=owner).update(last_used_at=timezone.now())
    large = measure()
    assert small == large, (small, large)


def test_api_save_identical_to_parent_answers_200_with_the_parent(api, owner):
    prompt, root = make_prompt(owner)
    v2 = save(owner, prompt, root, system="changed").version
    response = api.post(
        f"/api/v1/prompts/{prompt.pk}/versions/",
        {"parent": v2.pk, "content": content(system="changed"), "message": "no changes"},
        format="json",
    )
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["id"] == v2.pk
    assert body["created"] is False
    assert body["unchanged"] is True
    assert PromptVersion.objects.filter(prompt=prompt).count() == 2
    assert Label.objects.get(prompt=prompt, name="main").version_id == v2.pk
    # A real change is still a 201 child.
    created = api.post(
        f"/api/v1/prompts/{prompt.pk}/versions/",
        {"parent": v2.pk, "content": content(system="changed again")},
        format="json",
    )
    assert created.status_code == 201
    assert created.json()["unchanged"] is False


def test_label_move_changes_updated_at_and_logs_the_move(api, owner):
    prompt, v1 = make_prompt(owner)
    v2 = save(owner, prompt, v1, system="two").version
    created = api.post(
        f"/api/v1/prompts/{prompt.pk}/labels/", {"name": "staging", "version": v1.pk}, format="json"
    ).json()
    Label.objects.filter(prompt=prompt, name="staging").update(
        updated_at=timezone.now() - timedelta(hours=1)
    )
    before = Label.objects.get(prompt=prompt, name="staging").updated_at
    moved = api.put(
        f"/api/v1/prompts/{prompt.pk}/labels/staging/",
        {"version": v2.pk, "expected": v1.pk},
        format="json",
    )
    assert moved.status_code == 200
    assert moved.json()["version"] == v2.pk
    after = Label.objects.get(prompt=prompt, name="staging").updated_at
    assert after > before
    assert moved.json()["updated_at"] != created["updated_at"]
    assert LabelMove.objects.filter(label__name="staging").count() == 2


def test_label_conflict_says_who_moved_it(api, owner):
    prompt, v1 = make_prompt(owner)
    v2 = save(owner, prompt, v1, system="two").version
    response = api.put(
        f"/api/v1/prompts/{prompt.pk}/labels/main/",
        {"version": v1.pk, "expected": v1.pk},
        format="json",
    )
    assert response.status_code == 409
    detail = response.json()["detail"]
    assert "points at v2" in detail
    assert "owner moved it at" in detail
    assert Label.objects.get(prompt=prompt, name="main").version_id == v2.pk


def test_protect_and_unprotect_owner_only(api, owner):
    prompt, v1 = make_prompt(owner)
    v2 = save(owner, prompt, v1, system="two").version
    editor = make_user("ed")
    from playground.services import grant_set

    grant_set(actor=owner, prompt=prompt, username="ed", role="editor")
    editor_api = api_client_for(editor)
    url = f"/api/v1/prompts/{prompt.pk}/labels/main/"
    assert editor_api.patch(url, {"protected": True}, format="json").status_code == 403
    response = api.patch(url, {"protected": True}, format="json")
    assert response.status_code == 200
    assert response.json()["protected"] is True
    assert editor_api.put(url, {"version": v1.pk}, format="json").status_code == 403
    assert api.patch(url, {"protected": "maybe"}, format="json").status_code == 400
    assert (
        api.patch(
            f"/api/v1/prompts/{prompt.pk}/labels/nope/", {"protected": True}, format="json"
        ).status_code
        == 404
    )
    assert api.patch(url, {"protected": False}, format="json").json()["protected"] is False
    assert editor_api.put(url, {"version": v1.pk}, format="json").status_code == 200
    # `production` starts protected, and the owner may lift it.
    api.post(
        f"/api/v1/prompts/{prompt.pk}/labels/",
        {"name": "production", "version": v2.pk},
        format="json",
    )
    assert Label.objects.get(prompt=prompt, name="production").protected


def test_prompt_api_search_rename_archive(api, owner):
    prompt, _ = make_prompt(owner, title="Alpha reviewer")
    make_prompt(owner, title="Beta critic")
    titles = [p["title"] for p in api.get("/api/v1/prompts/?q=ALPHA").json()["results"]]
    assert titles == ["Alpha reviewer"]
    response = api.patch(f"/api/v1/prompts/{prompt.pk}/", {"title": "Renamed"}, format="json")
    assert response.status_code == 200
    assert response.json()["title"] == "Renamed"
    assert (
        api.patch(f"/api/v1/prompts/{prompt.pk}/", {"title": ""}, format="json").status_code == 400
    )
    assert (
        api.patch(f"/api/v1/prompts/{prompt.pk}/", {"archived": "x"}, format="json").status_code
        == 400
    )
    assert (
        api.patch(f"/api/v1/prompts/{prompt.pk}/", {"archived": True}, format="json").status_code
        == 200
    )
    titles = [p["title"] for p in api.get("/api/v1/prompts/").json()["results"]]
    assert titles == ["Beta critic"]
    other = api_client_for(make_user("other"))
    assert (
        other.patch(f"/api/v1/prompts/{prompt.pk}/", {"title": "x"}, format="json").status_code
        == 404
    )
