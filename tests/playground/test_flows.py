"""Issue 12's playground flows, server side: no-change saves, branch notices, labels (move
time, protect, conflict wording), export warnings and folded diff pages."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from playground.diffing import diff_blocks, diff_expand, text_diff
from playground.export import export_warnings
from playground.models import Label, LabelMove, PromptVersion
from playground.services import label_move
from tests.factories import api_client_for, make_user
from tests.playground.factories import content, make_prompt, save

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner():
    return make_user("owner")


@pytest.fixture
def api(owner):
    return api_client_for(owner)


# --- a save with no change creates nothing ------------------------------------------------------


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
    assert body["id"] == v2.pk and body["created"] is False and body["unchanged"] is True
    assert PromptVersion.objects.filter(prompt=prompt).count() == 2
    assert Label.objects.get(prompt=prompt, name="main").version_id == v2.pk
    # A real change is still a 201 child.
    created = api.post(
        f"/api/v1/prompts/{prompt.pk}/versions/",
        {"parent": v2.pk, "content": content(system="changed again")},
        format="json",
    )
    assert created.status_code == 201 and created.json()["unchanged"] is False


def test_page_save_with_no_change_says_nothing_saved(client, owner):
    prompt, root = make_prompt(owner)
    client.force_login(owner)
    form = {**_editor_form(content()), "parent": root.pk, "main_at": root.pk}
    response = client.post(f"/playground/p/{prompt.pk}/save/", form, follow=True)
    assert "No changes — nothing saved" in response.content.decode()
    assert PromptVersion.objects.filter(prompt=prompt).count() == 1


def _editor_form(data: dict, **changes) -> dict:
    """What the editor posts for a content dict (the browser test drives the real form)."""
    data = {**data, **changes}
    return {
        "provider": data["provider"],
        "model": data["model"],
        "system": data["system"],
        "message_role": [m["role"] for m in data["messages"]],
        "message_content": [m["content"] for m in data["messages"]],
        "temperature": data["params"]["temperature"],
        "top_p": "",
        "max_tokens": data["params"]["max_tokens"],
        "stop": "",
        "tools": "",
        "response_format": "",
        "variable_name": list(data["variables"]),
        "variable_default": list(data["variables"].values()),
    }


# --- branch notices say what happened -----------------------------------------------------------


def _notice(client, prompt, parent, main_at, system):
    form = {**_editor_form(content(), system=system), "parent": parent.pk, "main_at": main_at}
    response = client.post(f"/playground/p/{prompt.pk}/save/", form, follow=True)
    return re.search(r'<li class="message[^"]*">([^<]*)</li>', response.content.decode()).group(1)


def test_branch_notice_names_the_parent_and_where_main_stays(client, owner):
    prompt, v1 = make_prompt(owner)
    v2 = save(owner, prompt, v1, system="two").version
    save(owner, prompt, v2, system="three")
    v4 = save(owner, prompt, PromptVersion.objects.get(number=3), system="four").version
    client.force_login(owner)
    # Editing old v2 while main is at v4: main was never at v2.
    notice = _notice(client, prompt, v2, v4.pk, "two, edited")
    assert notice == "Saved v5 as a branch from v2; main stays at v4."
    assert "someone moved" not in notice
    # The page showed main at v4, but someone moved it to v2 meanwhile: say so.
    label_move(actor=owner, prompt=prompt, name="main", version=v2)
    notice = _notice(client, prompt, v4, v4.pk, "four, edited")
    assert notice == "Saved v6 as a branch from v4; main was moved to v2 meanwhile and stays there."


# --- labels -------------------------------------------------------------------------------------


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
    assert moved.status_code == 200 and moved.json()["version"] == v2.pk
    after = Label.objects.get(prompt=prompt, name="staging").updated_at
    assert after > before and moved.json()["updated_at"] != created["updated_at"]
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
    assert "points at v2" in detail and "owner moved it at" in detail
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
    assert response.status_code == 200 and response.json()["protected"] is True
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


def test_labels_panel_htmx_create_move_conflict_and_protect(client, owner):
    prompt, v1 = make_prompt(owner)
    v2 = save(owner, prompt, v1, system="two").version
    client.force_login(owner)
    url = f"/playground/p/{prompt.pk}/labels/"
    htmx = {"HTTP_HX_REQUEST": "true"}
    made = client.post(url, {"name": "staging", "version": v1.pk, "expected": ""}, **htmx)
    assert made.status_code == 204 and made["HX-Redirect"].endswith(f"?v={v1.pk}")
    page = client.get(made["HX-Redirect"]).content.decode()
    assert "Created “staging” at v1." in page
    again = client.post(url, {"name": "staging", "version": v2.pk, "expected": ""}, **htmx)
    assert again.status_code == 409 and "already exists: it points at v1" in again.content.decode()
    bad = client.post(url, {"name": "no spaces", "version": v1.pk, "expected": ""}, **htmx)
    assert bad.status_code == 400 and "Label name" in bad.content.decode()
    # The page saw main at v1, but it is at v2: a conflict offering to retry from v2.
    lost = client.post(url, {"name": "main", "version": v1.pk, "expected": v1.pk}, **htmx)
    body = lost.content.decode()
    assert lost.status_code == 409 and "owner moved it" in body
    assert f'name="expected" value="{v2.pk}"' in body and "anyway" in body
    retried = client.post(url, {"name": "main", "version": v1.pk, "expected": v2.pk}, **htmx)
    assert retried.status_code == 204
    assert Label.objects.get(prompt=prompt, name="main").version_id == v1.pk
    protect = client.post(
        f"/playground/p/{prompt.pk}/labels/staging/protect/",
        {"version": v1.pk, "protected": "1"},
        **htmx,
    )
    assert protect.status_code == 204 and Label.objects.get(name="staging").protected


# --- export warnings ----------------------------------------------------------------------------


def test_export_warnings_in_the_json_api_never_rewrite_the_model(api, owner):
    prompt, v1 = make_prompt(
        owner,
        messages=[{"role": "user", "content": "Review {{design}} for {{audience}}"}],
    )
    body = api.get(f"/api/v1/versions/{v1.pk}/export/?api=openai&format=json&as=json").json()
    assert any("{{audience}}" in w and "literally" in w for w in body["warnings"])
    assert any("'claude-sonnet-4-6'" in w for w in body["warnings"])
    assert '"model": "claude-sonnet-4-6"' in body["text"]  # never silently rewritten
    assert not any("{{design}}" in w for w in body["warnings"])
    own = api.get(f"/api/v1/versions/{v1.pk}/export/?api=anthropic&format=curl&as=json").json()
    assert [w for w in own["warnings"] if "model" in w.lower()] == []


def test_export_warnings_for_the_echo_provider():
    warnings = export_warnings(content=content(provider="echo", model="echo-1"), api="anthropic")
    assert len(warnings) == 1 and "'echo-1'" in warnings[0] and "offline" in warnings[0]
    assert (
        export_warnings(content=content(model="gpt-4.1-mini", provider="openai"), api="openai")
        == []
    )


# --- folded diffs -------------------------------------------------------------------------------


def _long_text(lines: int) -> str:
    return "".join(
        f"Line {n:05d}: the unchanged body of a very long prompt text.\n" for n in range(lines)
    )


def test_fold_keeps_context_around_changes_and_expands_by_range():
    before = _long_text(4000)
    after = before.replace("Line 02000:", "Line 02000 (edited):")
    rows = text_diff("system", before, after, limit=None).rows
    blocks = diff_blocks(rows)
    shown = [row for block in blocks if not block.fold for row in block.rows]
    assert len(shown) == 7  # the change plus 3 lines of context either side
    assert [b.fold for b in blocks] == [True, False, True]
    top, _, bottom = blocks
    assert (top.start, top.end) == (0, 1997) and bottom.end == len(rows)
    assert shown[3]["op"] == "change" and shown[3]["new_no"] == 2001
    # Expanding: the first 20 rows of a fold, the rest still folded; or all of it.
    up = diff_expand(rows, start=top.start, end=top.end, direction="up")
    assert [(b.fold, b.start, b.end) for b in up] == [(False, 0, 20), (True, 20, 1997)]
    down = diff_expand(rows, start=top.start, end=top.end, direction="down")
    assert [(b.fold, b.start, b.end) for b in down] == [(True, 0, 1977), (False, 1977, 1997)]
    everything = diff_expand(rows, start=top.start, end=top.end, direction="all")
    assert len(everything) == 1 and everything[0].count == 1997


def test_300kb_diff_page_is_small_and_shows_the_edit(client, owner):
    before = _long_text(5200)  # ~300 KB
    assert len(before.encode()) > 300_000
    prompt, v1 = make_prompt(owner, system=before)
    v2 = save(owner, prompt, v1, system=before.replace("Line 02000:", "Line 02000 EDITED:")).version
    client.force_login(owner)
    response = client.get(f"/playground/p/{prompt.pk}/diff/?a={v1.pk}&b={v2.pk}")
    html = response.content.decode()
    assert response.status_code == 200
    assert len(response.content) < 60_000, len(response.content)
    assert re.search(r"<ins>\s*EDITED\s*</ins>", html), "the edit is on the page, marked"
    assert "1997 unchanged lines" in html and "Show all 1997" in html
    split = client.get(f"/playground/p/{prompt.pk}/diff/?a={v1.pk}&b={v2.pk}&view=split")
    assert len(split.content) < 60_000 and "diff-split" in split.content.decode()
    # The expand control fetches just that fold.
    rows = client.get(
        f"/playground/p/{prompt.pk}/diff/rows/?a={v1.pk}&b={v2.pk}&field=system&start=0&end=1997&dir=up"
    )
    assert rows.status_code == 200 and rows.content.decode().count('class="diff-row') == 20
    assert (
        client.get(
            f"/playground/p/{prompt.pk}/diff/rows/?a={v1.pk}&b={v2.pk}&field=system&start=x&end=1"
        ).status_code
        == 400
    )
    assert (
        client.get(
            f"/playground/p/{prompt.pk}/diff/rows/?a={v1.pk}&b={v2.pk}&field=nope&start=0&end=1"
        ).status_code
        == 404
    )


# --- prompt list: search, rename, archive ------------------------------------------------------


def test_prompt_list_search_rename_and_archive(client, owner):
    alpha, _ = make_prompt(owner, title="Alpha reviewer")
    beta, _ = make_prompt(owner, title="Beta critic")
    client.force_login(owner)
    found = client.get("/playground/?q=alpha").content.decode()
    assert "Alpha reviewer" in found and "Beta critic" not in found
    assert "No prompt has “zzz” in its title" in client.get("/playground/?q=zzz").content.decode()

    renamed = client.post(
        f"/playground/p/{alpha.pk}/update/", {"title": "Gamma reviewer", "next": "/playground/"}
    )
    assert renamed.status_code == 302
    alpha.refresh_from_db()
    assert alpha.title == "Gamma reviewer"
    client.post(f"/playground/p/{alpha.pk}/update/", {"title": "  "})
    alpha.refresh_from_db()
    assert alpha.title == "Gamma reviewer"  # an empty title is refused, nothing changes

    client.post(f"/playground/p/{beta.pk}/update/", {"archived": "1"})
    listing = client.get("/playground/").content.decode()
    assert f'data-prompt="{beta.pk}"' not in listing and f'data-prompt="{alpha.pk}"' in listing
    assert "Archived “Beta critic”. It is listed under Archived." in listing
    archived = client.get("/playground/?archived=1").content.decode()
    assert f'data-prompt="{beta.pk}"' in archived and "Restore Beta critic" in archived
    # Archived prompts stay reachable by id (links keep working), and come back on restore.
    assert client.get(f"/playground/p/{beta.pk}/").status_code == 200
    client.post(f"/playground/p/{beta.pk}/update/", {"archived": "0"})
    assert f'data-prompt="{beta.pk}"' in client.get("/playground/").content.decode()

    # Only the owner may rename or archive.
    stranger = make_user("stranger")
    client.force_login(stranger)
    assert client.post(f"/playground/p/{beta.pk}/update/", {"archived": "1"}).status_code == 404


def test_prompt_api_search_rename_archive(api, owner):
    prompt, _ = make_prompt(owner, title="Alpha reviewer")
    make_prompt(owner, title="Beta critic")
    titles = [p["title"] for p in api.get("/api/v1/prompts/?q=ALPHA").json()["results"]]
    assert titles == ["Alpha reviewer"]
    response = api.patch(f"/api/v1/prompts/{prompt.pk}/", {"title": "Renamed"}, format="json")
    assert response.status_code == 200 and response.json()["title"] == "Renamed"
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
