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
    page.wait_for_url("**/questions/")
    assert page.locator(".question-item").count() == 7
    page.screenshot(path=artifacts_dir / "question-list.png", full_page=True)

    # A click returns once the navigation commits, before the new list is parsed: wait for
    # the load (CI once counted 0 items on a page still empty).
    page.get_by_role("link", name="Infrastructure").click()
    page.wait_for_url("**/questions/?kind=infrastructure")
    assert 1 <= page.locator(".question-item").count() < 7

    page.get_by_role("link", name="All").click()
    page.wait_for_url("**/questions/")
    page.locator(".question-item a").filter(has_text="checkpoint").first.click()
    assert "checkpoint-distribution" in page.url
    page.locator("details.probe summary").first.click()
    assert page.locator("details.probe[open]").count() == 1
    assert page.get_by_text("320", exact=False).count() > 0
    page.screenshot(path=artifacts_dir / "question-detail.png", full_page=True)
