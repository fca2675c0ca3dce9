"""Practice in real Chromium: start a timed review of a practice document, watch the clock,
add two annotations, submit, and read the scorecard with found and missed items; then the
progress page."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from reviews.models import Annotation, DesignDoc, Review, TimedReview
from reviews.practice.services import mock_review_start
from reviews.seed import practice_docs_load, practice_keys_load
from reviews.selectors import revision_text
from reviews.services import annotation_create, review_submit
from tests.browser.test_accessibility import axe_source, axe_violations  # noqa: F401
from tests.browser.test_reviews_browser import annotate, login, select_text
from tests.conftest import wait_for_quiet_network
from tests.factories import make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TITLE = "Batched inference server for the public LLM API"
CAPACITY = "serve about 170 requests per second in steady state"


def test_timed_review_submit_and_scorecard(new_page, artifacts_dir):
    practice_docs_load()  # the migrations' seed, flushed by earlier transactional tests
    practice_keys_load()
    make_user("pat")
    doc = DesignDoc.objects.get(title=TITLE)

    page = new_page()
    login(page, "pat")
    page.goto(f"/reviews/d/{doc.pk}/")
    panel = page.locator(".practice-panel")
    assert "45 minutes on the clock" in panel.inner_text()
    panel.screenshot(path=artifacts_dir / "0-doc-practice-panel.png")
    page.goto("/reviews/")
    page.get_by_role("link", name="Practice: timed reviews").click()
    page.wait_for_selector("text=Practice documents")
    page.screenshot(path=artifacts_dir / "0-progress-empty.png", full_page=True)
    page.get_by_role("button", name=f"Start a timed review of {TITLE}").click()

    # 1. The review opens with a running clock (45 minutes, shown not enforced).
    page.wait_for_selector("#practice-timer")
    review = Review.objects.get(reviewer__username="pat")
    assert TimedReview.objects.get(review=review).minutes_allowed == 45
    timer = page.locator("#practice-timer")
    assert "of 45:00" in timer.inner_text()
    page.wait_for_function(
        "() => document.querySelector('[data-timer-elapsed]').textContent.startsWith('0:0')"
    )
    first = timer.locator("[data-timer-elapsed]").inner_text()
    page.wait_for_function(
        "(before) => document.querySelector('[data-timer-elapsed]').textContent !== before",
        arg=first,
    )
    assert re.search(r"\d+:\d\d left", timer.inner_text())
    timer.screenshot(path=artifacts_dir / "1-timer.png")

    # 2. Two annotations: the worst risk on its passage, and a missing rollback plan.
    select_text(page, "#doc-rendered", CAPACITY)
    annotate(
        page,
        area="Scale & cost",
        kind="Risk",
        severity="Blocker",
        body="170 req/s against a 1,200 target: the fleet is seven times short.",
    )
    # Past the time the clock says so, and nothing is blocked: it is shown, not enforced.
    TimedReview.objects.filter(review=review).update(
        started_at=timezone.now() - timedelta(minutes=50)
    )
    page.reload()
    page.wait_for_selector("#practice-timer.timer-over")
    assert "Over the time by 5:" in timer.inner_text()
    timer.screenshot(path=artifacts_dir / "1b-timer-over.png")
    page.locator("#annotate-form").get_by_label("About the whole document").check()
    annotate(
        page,
        area="Rollout & rollback",
        kind="Missing",
        severity="Major",
        body="No rollback criteria or path back to the old server.",
    )
    assert Annotation.objects.filter(review=review).count() == 2
    page.screenshot(path=artifacts_dir / "2-annotated.png", full_page=True)

    # 3. Submit; the scorecard link appears in place of the running clock.
    page.get_by_role("button", name="Submit review").click()
    # Submitting asks first (issue #23): confirm in the dialog.
    page.get_by_role("dialog").get_by_role("button", name="Yes, submit").click()
    page.wait_for_selector("#review-status:has-text('Submitted')")
    assert "Submitted after 50:" in page.locator("#practice-timer").inner_text()
    page.get_by_role("link", name="See your scorecard").click()
    page.wait_for_url(f"**/reviews/r/{review.pk}/debrief/")

    # 4. The debrief: found and missed items, with the key's explanations.
    assert page.locator("#score-found").inner_text().startswith("2 / 10")
    found = page.locator("#found-list .debrief-item")
    assert sorted(found.evaluate_all("els => els.map(e => e.dataset.item)")) == [
        "capacity-shortfall",
        "no-rollback",
    ]
    assert "seven times short" in found.first.inner_text()
    missed = page.locator("#missed-list .debrief-item")
    assert missed.count() == 8
    assert "A good comment:" in missed.first.inner_text()
    assert page.locator('#missed-list [data-item="longest-sequence-trap"]').count() == 1
    assert "Yes" in page.locator(".score-cell", has_text="Led with the worst risk").inner_text()
    assert "you ranked it #1" in page.locator("#ranking-title + p").inner_text()
    page.screenshot(path=artifacts_dir / "3-scorecard.png", full_page=True)
    page.locator("#missed-list .debrief-item").first.screenshot(
        path=artifacts_dir / "4-missed-item.png"
    )

    # 5. Progress: the attempt is listed under its question with its score and time.
    page.get_by_role("link", name="Your practice progress").first.click()
    row = page.locator(".progress-table tbody tr").first
    assert "2 / 10" in row.inner_text() and "min" in row.inner_text()
    assert "Design an LLM inference API" in page.locator(".progress-group h3").inner_text()
    page.screenshot(path=artifacts_dir / "5-progress.png", full_page=True)


def test_practice_pages_have_no_wcag_violations(new_page, axe_source, artifacts_dir):  # noqa: F811
    practice_docs_load()
    practice_keys_load()
    user = make_user("quinn")
    doc = DesignDoc.objects.get(title=TITLE)
    submitted, _ = mock_review_start(actor=user, doc=doc)
    text = revision_text(revision=submitted.revision)
    for quote, values in (
        (CAPACITY, {"kind": "risk", "area": "scale-cost"}),
        (
            "grouped by `max_tokens` bucket (256, 1024, 4096)",
            {"kind": "alternative", "area": "scale-cost", "tradeoff": "A new runtime."},
        ),
    ):
        start = text.index(quote)
        annotation_create(
            actor=user,
            review=submitted,
            start=start,
            end=start + len(quote),
            severity="major",
            body="Comment",
            **values,
        )
    review_submit(actor=user, review=submitted)
    chat = DesignDoc.objects.get(title="One-to-one messaging for the support app")
    draft, _ = mock_review_start(actor=user, doc=chat)

    page = new_page()
    login(page, "quinn")
    found = {}
    for name, path in {
        "progress": "/reviews/practice/",
        "practice doc": f"/reviews/d/{doc.pk}/",
        "timed draft": f"/reviews/r/{draft.pk}/",
        "submitted mock review": f"/reviews/r/{submitted.pk}/",
        "debrief": f"/reviews/r/{submitted.pk}/debrief/",
    }.items():
        response = page.goto(path)
        assert response is not None and response.status == 200, name
        wait_for_quiet_network(page)
        found[name] = axe_violations(page, axe_source)
        page.screenshot(path=artifacts_dir / f"{name.replace(' ', '-')}.png", full_page=True)
    report = [f"{name}: {v}" for name, violations in found.items() for v in violations]
    assert report == [], "\n".join(report)
