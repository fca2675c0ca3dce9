import pytest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_sign_up_log_in_and_browse_questions(page, artifacts_dir):
    page.goto("/")
    page.get_by_role("link", name="Sign up").click()
    page.get_by_label("Username").fill("grace")
    page.get_by_label("Password", exact=True).fill("a-long-enough-passphrase")
    page.get_by_label("Password confirmation").fill("a-long-enough-passphrase")
    page.get_by_role("button", name="Create account").click()
    assert page.locator(".nav-user").inner_text() == "grace"

    page.get_by_role("button", name="Log out").click()
    page.get_by_role("link", name="Log in").click()
    page.get_by_label("Username").fill("grace")
    page.get_by_label("Password").fill("a-long-enough-passphrase")
    page.keyboard.press("Enter")
    assert page.locator(".nav-user").inner_text() == "grace"

    page.get_by_role("link", name="Questions").first.click()
    assert page.locator(".question-item").count() == 7
    page.screenshot(path=artifacts_dir / "question-list.png", full_page=True)

    page.get_by_role("link", name="Infrastructure").click()
    assert 1 <= page.locator(".question-item").count() < 7

    page.get_by_role("link", name="All").click()
    page.locator(".question-item a").filter(has_text="checkpoint").first.click()
    assert "checkpoint-distribution" in page.url
    page.locator("details.probe summary").first.click()
    assert page.locator("details.probe[open]").count() == 1
    assert page.get_by_text("320", exact=False).count() > 0
    page.screenshot(path=artifacts_dir / "question-detail.png", full_page=True)
