import pytest

from playground.models import Label, Prompt, PromptVersion
from tests.factories import make_user
from tests.playground.factories import make_prompt, save

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
