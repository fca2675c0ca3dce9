"""Issue 16 in Chromium: a review with many annotations lists its first cards and risks and loads
the rest on demand — from the keyboard, from a highlight, and from a risk link — and the loaded
cards work like the first ones (issue status, replies in the thread); ranking a partial risk list
still ranks every risk. axe passes throughout. Screenshots land in var/test-artifacts/<test>/."""

import re
import time

import pytest

from reviews.models import Annotation, Reply
from reviews.services import annotation_create, review_submit
from tests.browser.test_accessibility import axe_source, axe_violations  # noqa: F401
from tests.browser.test_reviews_browser import login
from tests.factories import make_user
from tests.reviews.factories import DOC, make_doc, make_review

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WORDS = [m.span() for m in re.finditer(r"[A-Za-z]{6,}", DOC)]


def many(review, count: int) -> list[Annotation]:
    made = []
    for index in range(count):
        start, end = WORDS[index * 4]
        made.append(
            annotation_create(
                actor=review.reviewer,
                review=review,
                start=start,
                end=end,
                area="failure-modes",
                kind="risk",
                severity="major",
                body=f"Risk number {index}",
            )
        )
    return made


def card_ids(page) -> list[int]:
    return [
        int(n)
        for n in page.locator("#ann-cards .ann").evaluate_all(
            "cards => cards.map(c => c.dataset.annId)"
        )
    ]


def test_cards_load_on_demand_and_work(new_page, settings, axe_source, artifacts_dir):  # noqa: F811
    settings.REVIEW_CARDS_WINDOW = 6
    ada, bob = make_user("ada"), make_user("bob")
    doc, r1 = make_doc(ada, title="Gateway")
    review = make_review(bob, r1)
    made = many(review, 24)
    review_submit(actor=bob, review=review)

    page = new_page()
    login(page, "ada")
    page.goto(f"/reviews/r/{review.pk}/")
    assert card_ids(page) == [a.pk for a in made[:6]]
    assert page.locator("mark[data-ann]").count() >= 24
    page.screenshot(path=artifacts_dir / "review-window.png", full_page=True)
    assert axe_violations(page, axe_source) == []

    # Keyboard: "Show more annotations", Enter; focus lands on the first card it brought.
    more = page.get_by_role("button", name="Show more annotations")
    more.focus()
    page.keyboard.press("Enter")
    page.wait_for_function(
        f"() => document.activeElement && document.activeElement.id === 'ann-{made[6].pk}'"
    )
    assert card_ids(page) == [a.pk for a in made[:12]]

    # A highlight whose card is not loaded yet: the cards up to it load, and it is shown.
    page.locator(f"mark[data-ann='{made[20].pk}']").first.click()
    page.wait_for_selector(f"#ann-{made[20].pk}")
    assert card_ids(page) == [a.pk for a in made[:21]]

    # A loaded card works: issue status (the page listens for it) and a reply in its thread.
    card = page.locator(f"#ann-{made[19].pk}")
    card.get_by_label(f"Issue status of annotation {made[19].pk}").select_option("resolved")
    page.wait_for_function(
        f"() => document.getElementById('ann-{made[19].pk}').classList.contains('ann-closed')"
    )
    deadline = time.monotonic() + 15  # the class changes with the response; the row is saved
    while Annotation.objects.get(pk=made[19].pk).status != "resolved":
        assert time.monotonic() < deadline, "the status change never reached the database"
        time.sleep(0.1)
    thread = page.locator(f"#thread-{made[19].pk}")
    thread.get_by_label("Reply").fill("Fixed in r2: the **retry** budget is bounded.")
    thread.get_by_role("button", name="Reply").click()
    page.locator(f"#thread-{made[19].pk} .reply").first.wait_for()
    assert Reply.objects.filter(annotation=made[19]).count() == 1
    page.locator(".margin").screenshot(path=artifacts_dir / "review-more-cards.png")
    assert axe_violations(page, axe_source) == []

    # A risk link to a card not loaded yet (the last one).
    assert page.locator(f".risk-list a[href='#ann-{made[23].pk}']").count() == 0  # not listed
    page.get_by_role("button", name="Show all 24 risks").click()
    page.wait_for_selector(f".risk-item[data-id='{made[23].pk}']")
    page.wait_for_selector("#risks-more", state="detached")  # the button goes once all are in
    page.locator(f".risk-list a[href='#ann-{made[23].pk}']").click()
    page.wait_for_selector(f"#ann-{made[23].pk}")
    page.wait_for_selector("#ann-more", state="detached")  # everything is loaded now
    assert card_ids(page) == [a.pk for a in made]


def test_ranking_a_partial_risk_list(new_page, settings, artifacts_dir):
    settings.REVIEW_CARDS_WINDOW = 4
    ada, bob = make_user("ada"), make_user("bob")
    doc, r1 = make_doc(ada, title="Gateway")
    review = make_review(bob, r1)
    made = many(review, 10)
    page = new_page()
    login(page, "bob")
    page.goto(f"/reviews/r/{review.pk}/")
    items = page.locator(".risk-item")
    assert items.count() == 4
    items.nth(1).get_by_role("button", name="Move risk up").click()
    page.wait_for_function("() => !document.getElementById('risk-list').hasAttribute('aria-busy')")
    page.wait_for_function(
        "() => document.querySelector('.risk-item [data-rank]').textContent === '#1'"
    )
    expected = [made[1].pk, made[0].pk, *[a.pk for a in made[2:]]]

    def saved_order() -> list[int]:
        ranked = Annotation.objects.filter(review=review).order_by("rank", "pk")
        return list(ranked.values_list("pk", flat=True))

    # The list is reordered in the page at once; the save reaches the database a moment later.
    deadline = time.monotonic() + 15
    while saved_order() != expected and time.monotonic() < deadline:
        time.sleep(0.1)
    assert saved_order() == expected
    page.locator(".risks-panel").screenshot(path=artifacts_dir / "risks-partial.png")
