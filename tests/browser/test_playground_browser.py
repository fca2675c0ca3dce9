import pytest

from playground.models import Label, PromptVersion
from tests.factories import PASSWORD, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def login(page, username: str) -> None:
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()


def test_versions_branches_revert_and_diff(page, artifacts_dir):
    make_user("ada")
    login(page, "ada")
    page.goto("/playground/new/")
    page.get_by_label("Title").fill("Design critic")
    page.get_by_label("Question (optional)").select_option("review-design-doc")
    page.get_by_label("System prompt").fill("You review designs.\nBe specific.\n")
    page.get_by_role("button", name="Create prompt").click()
    page.wait_for_selector("text=v1")

    # Three more saves, each from the version on screen; the last one with Ctrl+S.
    for n, line in enumerate(
        ["Rank risks, worst first.", "Name what is missing.", "Offer alternatives."], 2
    ):
        system = page.get_by_label("System prompt")
        system.fill(system.input_value() + line + "\n")
        page.get_by_label("Commit message").fill(f"add rule {n}")
        if n == 4:
            system.press("Control+s")
        else:
            page.get_by_role("button", name="Save version").click()
        page.wait_for_selector(f".tree-row-selected[data-number='{n}']")
    assert "main now points at it" in page.locator(".messages").inner_text()

    # Add a message and reorder with the buttons, then branch from v1.
    page.locator(".tree-row[data-number='1'] .tree-link").click()
    page.get_by_role("button", name="+ Add message").click()
    page.locator(".message-row").last.locator("textarea").fill("Second question")
    page.locator(".message-row").last.get_by_role("button", name="Move message up").click()
    assert page.locator(".message-row").first.locator("textarea").input_value() == "Second question"
    page.get_by_label("Temperature").fill("0.2")
    page.get_by_label("Commit message").fill("branch: colder, new first question")
    page.get_by_role("button", name="Save version").click()
    page.wait_for_selector(".tree-row-selected[data-number='5']")
    assert "as a branch" in page.locator(".messages").inner_text()
    v5 = PromptVersion.objects.get(number=5)
    assert v5.parent.number == 1
    assert v5.params["temperature"] == 0.2

    # Bad JSON in tools is caught before it leaves the page.
    page.get_by_label("Tools (JSON list of {name, description, input_schema})").fill("[{oops")
    assert "Invalid JSON" in page.locator(".json-error").first.inner_text()
    page.get_by_label("Tools (JSON list of {name, description, input_schema})").fill("")

    # Revert main (at v4) to v2.
    page.locator(".tree-row[data-number='2'] .tree-link").click()
    page.get_by_role("button", name="Revert main to v2").click()
    page.wait_for_selector(".tree-row-selected[data-number='6']")
    v6 = PromptVersion.objects.get(number=6)
    assert v6.parent.number == 4
    assert v6.content_hash == PromptVersion.objects.get(number=2).content_hash
    assert Label.objects.get(name="main").version == v6
    page.locator(".tree-panel").screenshot(path=artifacts_dir / "version-tree.png")
    page.screenshot(path=artifacts_dir / "prompt-page.png", full_page=True)
    assert page.locator("path.tree-edge").count() == 5

    # Diff v4 against the branch v5.
    page.locator(".tree-row[data-number='4'] input[name='a']").check()
    page.locator(".tree-row[data-number='5'] input[name='b']").check()
    page.get_by_role("button", name="Compare A → B").click()
    assert page.locator("h1").inner_text() == "v4 → v5"
    assert page.locator(".diff-insert").count() > 0
    assert page.locator(".diff-delete").count() > 0
    assert page.get_by_text("params.temperature").count() == 1
    page.screenshot(path=artifacts_dir / "diff.png", full_page=True)
