"""Issue 12 on the review desk in Chromium: a stale "Select a passage first" error goes away
once a passage is selected; closed risks are marked and listed after open ones."""

import pytest

from reviews.services import annotation_update
from tests.browser.test_reviews_browser import KV, login, select_text
from tests.factories import make_user
from tests.reviews.factories import annotate, make_doc, make_review

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_stale_selection_error_clears_and_closed_risks_are_marked(page, artifacts_dir):
    author, reviewer = make_user("ada"), make_user("bob")
    _, r1 = make_doc(author, title="Gateway")
    review = make_review(reviewer, r1)
    open_risk = annotate(review, body="Open risk", rank=2)
    closed = annotate(review, body="Fixed already", rank=1)
    annotation_update(actor=author, annotation=closed, changes={"status": "resolved"})
    login(page, "bob")
    page.goto(f"/reviews/r/{review.pk}/")

    form = page.locator("#annotate-form")
    form.get_by_label("Comment").fill("What if this is full?")
    form.get_by_role("button", name="Add annotation").click()
    error = page.locator("#annotate-error")
    assert "Select a passage" in error.inner_text() and error.is_visible()
    select_text(page, "#doc-rendered", KV)
    assert error.is_hidden(), "the stale error must clear once a passage is selected"

    risks = page.locator("#risk-list .risk-item")
    assert risks.nth(0).get_attribute("data-id") == str(open_risk.pk)
    assert risks.nth(1).get_attribute("data-status") == "resolved"
    assert risks.nth(1).locator(".risk-status").inner_text() == "resolved"
    page.locator(".risks-panel").screenshot(path=artifacts_dir / "risks.png")
