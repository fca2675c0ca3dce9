"""The browser side of issue #10: no page breaks under the Content-Security-Policy, a design
document cannot make a reviewer's browser fetch a remote image, log-in throttling shows a clear
message, and API keys are managed from the account page."""

import pytest

from accounts.models import ApiToken
from playground.services import prompt_create
from reviews.services import review_create
from tests.browser.test_playground_browser import login
from tests.conftest import wait_for_quiet_network
from tests.factories import PASSWORD, make_user
from tests.playground.factories import content
from tests.reviews.factories import DOC, make_doc

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PIXEL = "http://127.0.0.1:9/pixel.gif"


def _watch(page) -> tuple[list[str], list[str]]:
    """Collect CSP violations (console) and every URL the page requests."""
    violations: list[str] = []
    requested: list[str] = []
    page.on(
        "console",
        lambda msg: (
            violations.append(f"{page.url}: {msg.text}")
            if "Content Security Policy" in msg.text
            else None
        ),
    )
    page.on("request", lambda request: requested.append(request.url))
    return violations, requested


def test_pages_work_under_the_csp_and_remote_images_are_links(new_page, artifacts_dir):
    ada = make_user("ada")
    reviewer = make_user("rita")
    prompt, _ = prompt_create(actor=ada, title="CSP prompt", content=content())
    doc, revision = make_doc(ada, body=DOC + f"\n\nTracking: ![pixel]({PIXEL})\n")
    review, _ = review_create(actor=reviewer, revision=revision)

    page = new_page()
    violations, requested = _watch(page)
    login(page, "ada")
    for url in ("/", "/playground/", f"/playground/p/{prompt.pk}/", "/questions/", "/api/docs/"):
        page.goto(url)
        wait_for_quiet_network(page)
    page.goto(f"/playground/p/{prompt.pk}/")
    page.get_by_role("button", name="Share").click()  # an htmx fragment
    page.locator("#share-dialog").wait_for()
    page.goto("/api/docs/")
    page.locator(".swagger-ui .information-container").wait_for()
    page.screenshot(path=artifacts_dir / "swagger.png")

    rita = new_page()
    rita_violations, rita_requested = _watch(rita)
    login(rita, "rita")
    rita.goto(f"/reviews/r/{review.pk}/")
    wait_for_quiet_network(rita)
    link = rita.get_by_role("link", name="[image: pixel]")
    assert link.get_attribute("href") == PIXEL
    assert rita.locator(f"img[src='{PIXEL}']").count() == 0
    rita.screenshot(path=artifacts_dir / "review-with-remote-image.png", full_page=True)

    assert not [url for url in requested + rita_requested if "pixel" in url]
    assert violations == [] and rita_violations == [], violations + rita_violations


def test_login_throttle_message_and_api_keys_page(new_page, artifacts_dir, settings):
    from django.core.cache import cache

    cache.clear()
    settings.LOGIN_FAILURE_LIMIT_ACCOUNT = 3
    make_user("ada")
    page = new_page()
    for _ in range(3):
        page.goto("/accounts/login/")
        page.get_by_label("Username").fill("ada")
        page.get_by_label("Password").fill("wrong password")
        page.get_by_role("button", name="Log in").click()
        page.locator(".form-errors").wait_for()
    page.get_by_label("Username").fill("ada")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    alert = page.get_by_role("alert")
    assert "Too many failed log-ins" in alert.inner_text()
    page.screenshot(path=artifacts_dir / "throttled.png")
    cache.clear()

    login(page, "ada")
    page.get_by_role("link", name="ada").click()
    page.get_by_role("heading", name="API keys").wait_for()
    page.get_by_label("Expires").select_option("30")
    page.get_by_role("button", name="Create key").click()
    key = page.get_by_label("New API key").input_value()
    assert key.startswith("rlk_")
    token = ApiToken.objects.get(user__username="ada")
    assert token.expires_at is not None
    page.screenshot(path=artifacts_dir / "api-keys.png", full_page=True)
    page.goto("/accounts/keys/")
    assert key not in page.content()
    page.get_by_role("button", name=f"Revoke key {token.key_prefix}").click()
    page.get_by_text("no longer works").wait_for()
    assert not ApiToken.objects.filter(user__username="ada").exists()
    page.screenshot(path=artifacts_dir / "api-key-revoked.png", full_page=True)
