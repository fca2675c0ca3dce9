import re

import pytest

from playground.models import Label, Prompt, PromptVersion
from playground.services import label_move
from tests.factories import make_user
from tests.playground.factories import content, long_text, make_prompt, save

pytestmark = pytest.mark.django_db


def _form(parent=None, **overrides):
    data = {
        "provider": "anthropic",
        "model": "claude-sonnet-4-6",
        "max_tokens": "256",
        "temperature": "0.3",
        "top_p": "",
        "stop": "",
        "system": "Be brief.",
        "message_role": ["user", "assistant", "user"],
        "message_content": ["Hi {{name}}", "Hello.", "Review my design."],
        "variable_name": ["name"],
        "variable_default": ["Ada"],
        "tools": "",
        "response_format": "",
        "commit_message": "via form",
    }
    if parent is not None:
        data["parent"] = str(parent.pk)
    data.update(overrides)
    return data


def test_new_prompt_from_the_browser(client):
    owner = make_user("owner")
    client.force_login(owner)
    assert client.get("/playground/new/").status_code == 200
    response = client.post(
        "/playground/new/", {**_form(), "title": "Form prompt", "question": "prompt-playground"}
    )
    prompt = Prompt.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/playground/p/{prompt.pk}/"
    assert prompt.question.slug == "prompt-playground"
    page = client.get(f"/playground/p/{prompt.pk}/").content.decode()
    assert "Form prompt" in page
    assert "Review my design." in page
    question_page = client.get("/questions/prompt-playground/").content.decode()
    assert "Form prompt" in question_page


def test_save_from_editor_and_branch_message(client):
    owner = make_user("owner")
    prompt, root = make_prompt(owner)
    client.force_login(owner)
    response = client.post(f"/playground/p/{prompt.pk}/save/", _form(root))
    assert response.status_code == 302
    v2 = PromptVersion.objects.get(prompt=prompt, number=2)
    assert v2.parent == root
    assert v2.message == "via form"
    # Saving again from the root (an older version) is a branch and the page says so.
    response = client.post(
        f"/playground/p/{prompt.pk}/save/", _form(root, system="Other."), follow=True
    )
    assert "as a branch" in response.content.decode()
    assert Label.objects.get(prompt=prompt, name="main").version == v2


@pytest.mark.parametrize(
    ("overrides", "needle"),
    [
        ({"tools": "[{oops"}, "tools: invalid JSON"),
        ({"temperature": "hot"}, "params.temperature"),
        ({"max_tokens": "-1"}, "params.max_tokens"),
        ({"provider": "nope"}, "provider"),
    ],
)
def test_editor_errors_keep_the_input(client, overrides, needle):
    owner = make_user("owner")
    prompt, root = make_prompt(owner)
    client.force_login(owner)
    response = client.post(
        f"/playground/p/{prompt.pk}/save/", _form(root, system="Keep me.", **overrides)
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert needle in html
    assert "Keep me." in html
    assert PromptVersion.objects.filter(prompt=prompt).count() == 1


def test_diff_page_shows_a_diff(client):
    owner = make_user("owner")
    prompt, root = make_prompt(owner)
    v2 = save(
        owner, prompt, root, system="You are a careful reviewer.\nAnswer in bullet points.\n"
    ).version
    client.force_login(owner)
    html = client.get(
        f"/playground/p/{prompt.pk}/diff/", {"a": root.pk, "b": v2.pk}
    ).content.decode()
    assert 'class="diff-row diff-delete"' in html
    assert "<ins>" in html
    assert "bullet" in html


def test_revert_from_the_page(client):
    owner = make_user("owner")
    prompt, root = make_prompt(owner)
    v2 = save(owner, prompt, root, system="2").version
    client.force_login(owner)
    response = client.post(f"/playground/p/{prompt.pk}/revert/{root.pk}/", {"parent": v2.pk})
    assert response.status_code == 302
    v3 = PromptVersion.objects.get(prompt=prompt, number=3)
    assert v3.parent == v2
    assert v3.content_hash == root.content_hash


def test_pages_of_other_users_are_404(client):
    owner = make_user("owner")
    prompt, root = make_prompt(owner)
    client.force_login(make_user("stranger"))
    for url in (
        f"/playground/p/{prompt.pk}/",
        f"/playground/p/{prompt.pk}/diff/?a={root.pk}&b={root.pk}",
    ):
        assert client.get(url).status_code == 404
    assert client.post(f"/playground/p/{prompt.pk}/save/", _form(root)).status_code == 404
    assert (
        client.post(f"/playground/p/{prompt.pk}/revert/{root.pk}/", {"parent": root.pk}).status_code
        == 404
    )
    assert PromptVersion.objects.count() == 1


def test_user_text_is_escaped(client):
    owner = make_user("owner")
    prompt, root = make_prompt(owner, title="<b>bold</b>", system="<script>alert(1)</script>")
    client.force_login(owner)
    html = client.get(f"/playground/p/{prompt.pk}/").content.decode()
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;" in html
    assert "<b>bold</b>" not in html


@pytest.fixture
def owner():
    return make_user("owner")


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


def _notice(client, prompt, parent, main_at, system):
    form = {**_editor_form(content(), system=system), "parent": parent.pk, "main_at": main_at}
    response = client.post(f"/playground/p/{prompt.pk}/save/", form, follow=True)
    return re.search(r'<li class="message[^"]*">([^<]*)</li>', response.content.decode()).group(1)


def test_page_save_with_no_change_says_nothing_saved(client, owner):
    prompt, root = make_prompt(owner)
    client.force_login(owner)
    form = {**_editor_form(content()), "parent": root.pk, "main_at": root.pk}
    response = client.post(f"/playground/p/{prompt.pk}/save/", form, follow=True)
    assert "No changes — nothing saved" in response.content.decode()
    assert PromptVersion.objects.filter(prompt=prompt).count() == 1


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


def test_labels_panel_htmx_create_move_conflict_and_protect(client, owner):
    prompt, v1 = make_prompt(owner)
    v2 = save(owner, prompt, v1, system="two").version
    client.force_login(owner)
    url = f"/playground/p/{prompt.pk}/labels/"
    htmx = {"HTTP_HX_REQUEST": "true"}
    made = client.post(url, {"name": "staging", "version": v1.pk, "expected": ""}, **htmx)
    assert made.status_code == 204
    assert made["HX-Redirect"].endswith(f"/playground/p/{prompt.pk}/v1/")  # numbers, not ids
    page = client.get(made["HX-Redirect"]).content.decode()
    assert "Created “staging” at v1." in page
    again = client.post(url, {"name": "staging", "version": v2.pk, "expected": ""}, **htmx)
    assert again.status_code == 409
    assert "already exists: it points at v1" in again.content.decode()
    bad = client.post(url, {"name": "no spaces", "version": v1.pk, "expected": ""}, **htmx)
    assert bad.status_code == 400
    assert "Label name" in bad.content.decode()
    # The page saw main at v1, but it is at v2: a conflict offering to retry from v2.
    lost = client.post(url, {"name": "main", "version": v1.pk, "expected": v1.pk}, **htmx)
    body = lost.content.decode()
    assert lost.status_code == 409
    assert "owner moved it" in body
    assert f'name="expected" value="{v2.pk}"' in body
    assert "anyway" in body
    retried = client.post(url, {"name": "main", "version": v1.pk, "expected": v2.pk}, **htmx)
    assert retried.status_code == 204
    assert Label.objects.get(prompt=prompt, name="main").version_id == v1.pk
    protect = client.post(
        f"/playground/p/{prompt.pk}/labels/staging/protect/",
        {"version": v1.pk, "protected": "1"},
        **htmx,
    )
    assert protect.status_code == 204
    assert Label.objects.get(name="staging").protected


def test_300kb_diff_page_is_small_and_shows_the_edit(client, owner):
    before = long_text(5200)  # ~300 KB
    assert len(before.encode()) > 300_000
    prompt, v1 = make_prompt(owner, system=before)
    v2 = save(owner, prompt, v1, system=before.replace("Line 02000:", "Line 02000 EDITED:")).version
    client.force_login(owner)
    response = client.get(f"/playground/p/{prompt.pk}/diff/?a={v1.pk}&b={v2.pk}")
    html = response.content.decode()
    assert response.status_code == 200
    assert len(response.content) < 60_000, len(response.content)
    assert re.search(r"<ins>\s*EDITED\s*</ins>", html), "the edit is on the page, marked"
    assert "1997 unchanged lines" in html
    assert "Show all 1997" in html
    split = client.get(f"/playground/p/{prompt.pk}/diff/?a={v1.pk}&b={v2.pk}&view=split")
    assert len(split.content) < 60_000
    assert "diff-split" in split.content.decode()
    # The expand control fetches just that fold.
    rows = client.get(
        f"/playground/p/{prompt.pk}/diff/rows/?a={v1.pk}&b={v2.pk}&field=system&start=0&end=1997&dir=up"
    )
    assert rows.status_code == 200
    assert rows.content.decode().count('class="diff-row') == 20
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


def test_prompt_list_search_rename_and_archive(client, owner):
    alpha, _ = make_prompt(owner, title="Alpha reviewer")
    beta, _ = make_prompt(owner, title="Beta critic")
    client.force_login(owner)
    found = client.get("/playground/?q=alpha").content.decode()
    assert "Alpha reviewer" in found
    assert "Beta critic" not in found
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
    assert f'data-prompt="{beta.pk}"' not in listing
    assert f'data-prompt="{alpha.pk}"' in listing
    assert "Archived “Beta critic”. It is listed under Archived." in listing
    archived = client.get("/playground/?archived=1").content.decode()
    assert f'data-prompt="{beta.pk}"' in archived
    assert "Restore Beta critic" in archived
    # Archived prompts stay reachable by id (links keep working), and come back on restore.
    assert client.get(f"/playground/p/{beta.pk}/").status_code == 200
    client.post(f"/playground/p/{beta.pk}/update/", {"archived": "0"})
    assert f'data-prompt="{beta.pk}"' in client.get("/playground/").content.decode()

    # Only the owner may rename or archive.
    stranger = make_user("stranger")
    client.force_login(stranger)
    assert client.post(f"/playground/p/{beta.pk}/update/", {"archived": "1"}).status_code == 404
