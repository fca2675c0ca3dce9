"""Draft with a prompt in real Chromium (issue #26): the starter critique prompt on the offline
fixture provider streams suggestions into the margin; accept two, edit one then accept it,
reject one, submit, and the scorecard counts what was accepted. Then the practice page's
leaderboard, and both pages axe-clean with no sideways scroll at 375 and 1280 px."""

import pytest
from django.core.management import call_command

from critique.models import Suggestion
from reviews.models import Annotation, Review
from reviews.practice.selectors import scorecard_get_for_user
from reviews.seed import practice_docs_load, practice_keys_load
from tests.browser.test_accessibility import axe_source, axe_violations  # noqa: F401
from tests.browser.test_reviews_browser import login
from tests.conftest import wait_for_quiet_network
from tests.factories import make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TITLE = "Layered YAML configuration for training runs"


def _start_mock_review(page):
    page.goto("/reviews/practice/")
    page.get_by_role("button", name=f"Start a timed review of {TITLE}").click()
    page.wait_for_selector("#draft-panel")


def test_draft_accept_edit_reject_submit_and_scorecard(
    new_page,
    artifacts_dir,
    settings,
    axe_source,  # noqa: F811
):
    practice_docs_load()
    practice_keys_load()
    settings.RUN_FIXTURE_DELAY_MS = 20  # slow enough to watch the suggestions arrive
    make_user("rae")
    page = new_page()
    login(page, "rae")
    _start_mock_review(page)
    review = Review.objects.get(reviewer__username="rae")
    panel = page.locator("#draft-panel")
    assert panel.get_by_label("Provider").input_value() == "fixture"
    panel.screenshot(path=artifacts_dir / "0-panel.png")

    # 1. Draft: suggestions stream in one by one, then the draft is done.
    panel.get_by_role("button", name="Draft").click()
    page.wait_for_selector("#suggestion-list .suggestion")
    first_seen = page.locator("#suggestion-list .suggestion").count()
    page.wait_for_selector("#draft-status:has-text('Drafted 8 suggestions')")
    assert first_seen < 8  # the first arrived before the reply finished
    items = page.locator("#suggestion-list .suggestion")
    assert items.count() == 8
    assert "Unanchored" in items.nth(7).inner_text()
    panel.screenshot(path=artifacts_dir / "1-suggestions.png")

    # 2. Accept the worst risk and the missing definition as they are.
    for position in (0, 4):
        with page.expect_event("load"):
            page.get_by_role("button", name=f"Accept suggestion {position + 1}", exact=True).click()
    assert Annotation.objects.filter(review=review).count() == 2

    # 3. Edit the list-merge risk, then accept it.
    item = page.locator('[data-position="1"]')
    item.get_by_text("Edit before accepting").click()
    item.get_by_label("Comment").fill("Lists must replace, not append: a child cannot drop data.")
    item.get_by_label("Severity").select_option("blocker")
    with page.expect_event("load"):
        page.get_by_role("button", name="Accept suggestion 2", exact=True).click()
    edited = Annotation.objects.get(review=review, body__startswith="Lists must replace")
    assert edited.severity == "blocker" and edited.area == "failure-modes"

    # 4. Reject the late-validation one (filed under the wrong area anyway).
    page.get_by_role("button", name="Reject suggestion 3", exact=True).click()
    page.wait_for_selector('[data-position="2"].suggestion-rejected')
    states = dict(Suggestion.objects.values_list("position", "state"))
    assert [states[p] for p in (0, 1, 2, 4)] == ["accepted", "accepted", "rejected", "accepted"]
    assert page.locator("#risk-list li").count() == 2
    page.screenshot(path=artifacts_dir / "2-accepted.png", full_page=True)
    report = [str(v) for v in axe_violations(page, axe_source)]
    assert report == [], "\n".join(report)

    # 5. Submit; the scorecard counts exactly what was accepted.
    page.get_by_role("button", name="Submit review").click()
    page.get_by_role("dialog").get_by_role("button", name="Yes, submit").click()
    page.wait_for_selector("#review-status:has-text('Submitted')")
    card = scorecard_get_for_user(user=review.reviewer, review_id=review.pk).scorecard
    assert card.found == 3 and card.led_with_worst
    page.get_by_role("link", name="See your scorecard").click()
    assert page.locator("#score-found").inner_text().startswith(f"3 / {card.total}")
    found = page.locator("#found-list .debrief-item")
    assert sorted(found.evaluate_all("els => els.map(e => e.dataset.item)")) == [
        "hash-of-unresolved-file",
        "list-merge",
        "reproducibility-undefined",
    ]
    page.screenshot(path=artifacts_dir / "3-scorecard.png", full_page=True)


def test_panels_are_accessible_at_phone_and_desktop_widths(
    new_page,
    artifacts_dir,
    settings,
    axe_source,  # noqa: F811
):
    practice_docs_load()
    practice_keys_load()
    settings.RUN_FIXTURE_DELAY_MS = 0
    settings.EVAL_EAGER_MODE = "inline"
    call_command("critique_leaderboard")  # the starter's row on the leaderboard
    make_user("sam")
    page = new_page()
    login(page, "sam")
    _start_mock_review(page)
    page.locator("#draft-panel").get_by_role("button", name="Draft").click()
    page.wait_for_selector("#draft-status:has-text('Drafted 8 suggestions')")
    review_url = page.url
    page.locator('[data-position="0"]').get_by_text("Edit before accepting").click()
    problems = []
    for width in (375, 1280):
        page.set_viewport_size({"width": width, "height": 860})
        for name, url in (("review", review_url), ("practice", "/reviews/practice/")):
            page.goto(url)
            wait_for_quiet_network(page)
            if name == "practice":
                assert page.locator(".leader-row").count() == 1
                assert "Starter critique prompt v1" in page.locator(".leader-row").inner_text()
            else:
                assert page.locator("#suggestion-list .suggestion").count() == 8
            wide = page.evaluate("document.scrollingElement.scrollWidth - window.innerWidth")
            if wide > 0:
                problems.append(f"{name} at {width}px scrolls sideways by {wide}px")
            problems += [f"{name} at {width}px: {v}" for v in axe_violations(page, axe_source)]
            page.screenshot(path=artifacts_dir / f"{name}-{width}.png", full_page=True)
    assert problems == [], "\n".join(problems)
