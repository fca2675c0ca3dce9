"""The review desk and the question bank at 375 px and 1280 px in real Chromium (issue #23):
no page scrolls sideways, tables become stacked cards on phones, the comment form opens next
to the selection (a popover beside it, a sheet on phones), the practice clock covers nothing
it should not, submitting asks first, the inbox renders Markdown, times are in the reader's
zone, and every page is axe-clean at both widths."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from reviews.models import Annotation, AnnotationAnchor, Review
from reviews.practice.services import mock_review_start
from reviews.seed import practice_docs_load, practice_keys_load
from reviews.selectors import revision_text
from reviews.services import (
    annotation_create,
    doc_revision_create,
    reply_create,
    review_submit,
)
from tests.browser.test_accessibility import axe_source, axe_violations  # noqa: F401
from tests.conftest import browser_context, wait_for_quiet_network
from tests.factories import PASSWORD, make_user
from tests.reviews.factories import DOC, make_doc, make_review, span_of

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 375, "height": 812}
DESKTOP = {"width": 1280, "height": 860}
WIDTHS = {"375": PHONE, "1280": DESKTOP}
KV = "Each decode replica holds a 40 GB paged KV cache"
ROLLBACK = (
    "Rollback flips\nthe flag back to the legacy proxy; in-flight streams finish on the gateway."
)
# A long unbroken line and a wide table: what made the document pages 868 px wide on a phone.
WIDE = (
    "\n\n| region | replicas | GPUs | KV cache per replica | p99 target | rollout wave |\n"
    "|---|---|---|---|---|---|\n"
    "| us-east-1 | 14 | 56 | 40 GB | 800 ms | first |\n"
    "| eu-west-1 | 12 | 48 | 40 GB | 800 ms | second |\n\n"
    "```\nhttps://gateway.internal.example.com/v1/chat/completions?stream=true&tenant=acme-corp&region=us-east-1\n```\n"
)


def login(page, username: str) -> None:
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_selector(".nav-user", state="attached")  # folded behind "Menu" on phones


def context_page(browser, live_server, viewport: dict[str, int], **options: Any):
    context = browser_context(browser, base_url=live_server.url, viewport=viewport, **options)
    return context, context.new_page()


def desk(owner_name: str = "ada", reviewer_name: str = "bob") -> dict[str, Any]:
    """One of every review-desk page, built through the services: a document with a wide
    table and code line, a submitted review whose annotation r2 orphans, a draft review, a
    reply in Markdown (the inbox), and a practice review with its scorecard."""
    practice_docs_load()
    practice_keys_load()
    ada, bob = make_user(owner_name), make_user(reviewer_name)
    body = DOC + WIDE
    doc, r1 = make_doc(ada, body=body)
    submitted = make_review(bob, r1)
    start, end = span_of(body, ROLLBACK)
    orphan = annotation_create(
        actor=bob,
        review=submitted,
        start=start,
        end=end,
        area="rollout-rollback",
        kind="risk",
        severity="major",
        body="A flag flip is **not** a rollback plan for in-flight streams.",
    )
    start, end = span_of(body, KV)
    kv = annotation_create(
        actor=bob,
        review=submitted,
        start=start,
        end=end,
        area="scale-cost",
        kind="risk",
        severity="blocker",
        body="40 GB per replica at 2,000 streams: where is the **headroom**?",
    )
    review_submit(actor=bob, review=submitted)
    reply_create(actor=ada, annotation=kv, body="**Good catch**: see `r2`, the _headroom_ table.")
    rewritten = body.replace(ROLLBACK, "To undo a region we move its DNS record back.")
    r2, _ = doc_revision_create(actor=ada, doc=doc, body=rewritten)
    assert AnnotationAnchor.objects.get(annotation=orphan, revision=r2).status == "orphaned"
    draft = make_review(ada, r2)
    mock, _ = mock_review_start(actor=bob, doc=practice_doc())
    text = revision_text(revision=mock.revision)
    quote = "serve about 170 requests per second in steady state"
    at = text.index(quote)
    annotation_create(
        actor=bob,
        review=mock,
        start=at,
        end=at + len(quote),
        area="observability",  # the planted risk's passage, under another area
        kind="risk",
        severity="blocker",
        body="170 req/s is seven times short.",
    )
    review_submit(actor=bob, review=mock)
    timed, _ = mock_review_start(actor=ada, doc=practice_doc())
    return {
        "doc": doc,
        "r2": r2,
        "submitted": submitted,
        "orphan": orphan,
        "draft": draft,
        "mock": mock,
        "timed": timed,
        "owner": {
            "reviews": "/reviews/",
            "doc": f"/reviews/d/{doc.pk}/",
            "doc r1": f"/reviews/d/{doc.pk}/?r=1",
            "draft review": f"/reviews/r/{draft.pk}/",
            "submitted review on r2": f"/reviews/r/{submitted.pk}/?r=2",
            "diff": f"/reviews/d/{doc.pk}/diff/",
            "new doc": "/reviews/new/",
            "timed review": f"/reviews/r/{timed.pk}/",
            "questions": "/questions/",
            "question (batching)": "/questions/llm-inference-api/",
            "question (checkpoint)": "/questions/checkpoint-distribution/",
            "question (storage)": "/questions/data-platform/",
        },
        "reviewer": {
            "inbox": "/reviews/inbox/",
            "submitted review": f"/reviews/r/{submitted.pk}/",
            "practice progress": "/reviews/practice/",
            "debrief": f"/reviews/r/{mock.pk}/debrief/",
        },
    }


def practice_doc():
    from reviews.models import DesignDoc

    return DesignDoc.objects.get(title="Batched inference server for the public LLM API")


def sideways(page) -> dict[str, Any]:
    """How wide the page is against the viewport, and the widest elements past its edge."""
    return page.evaluate(
        """() => {
            const width = window.innerWidth;
            const wide = [];
            document.querySelectorAll('body *').forEach((el) => {
                const box = el.getBoundingClientRect();
                if (box.right > width + 1 && box.width > 0) {
                    wide.push((el.tagName + '.' + el.className + '#' + el.id).slice(0, 80)
                              + ' ' + Math.round(box.right));
                }
            });
            return {scroll: document.documentElement.scrollWidth, inner: width,
                    wide: wide.slice(0, 8)};
        }"""
    )


@pytest.mark.parametrize("width", sorted(WIDTHS))
def test_no_desk_or_question_page_scrolls_sideways_and_axe_is_clean(
    browser,
    live_server,
    axe_source,  # noqa: F811
    artifacts_dir: Path,
    width: str,
):
    built = desk()
    found: dict[str, list[Any]] = {}
    too_wide: dict[str, Any] = {}
    for user, paths in (("ada", built["owner"]), ("bob", built["reviewer"])):
        context, page = context_page(browser, live_server, WIDTHS[width])
        try:
            login(page, user)
            for name, path in paths.items():
                response = page.goto(path)
                assert response is not None and response.status == 200, (name, path)
                wait_for_quiet_network(page)
                shot = artifacts_dir / f"{width}-{re.sub(r'[^a-z0-9]+', '-', name)}.png"
                page.screenshot(path=shot, full_page=True)
                measured = sideways(page)
                if measured["scroll"] > measured["inner"]:
                    too_wide[name] = measured
                found[name] = axe_violations(page, axe_source)
        finally:
            context.close()
    assert not too_wide, "\n".join(f"{k}: {v}" for k, v in too_wide.items())
    report = [f"{name}: {v}" for name, violations in found.items() for v in violations]
    assert report == [], "\n".join(report)


LATE = "Tenant keys are hashed at rest and compared in constant time"


def drag_select(page, root: str, needle: str) -> None:
    """Select `needle` in `root` with the mouse, as a reader would: press at its first
    character, drag to its last, release."""
    page.evaluate(
        """([rootSelector, needle]) => {
            const root = document.querySelector(rootSelector);
            const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
            let node;
            while ((node = walker.nextNode())) {
                const at = node.data.indexOf(needle);
                if (at !== -1) {
                    node.parentElement.scrollIntoView({block: "center"});
                    return;
                }
            }
            throw new Error("not shown: " + needle);
        }""",
        [root, needle],
    )
    box = page.evaluate(
        """([rootSelector, needle]) => {
            const root = document.querySelector(rootSelector);
            const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
            let node;
            while ((node = walker.nextNode())) {
                const at = node.data.indexOf(needle);
                if (at === -1) continue;
                const range = document.createRange();
                range.setStart(node, at);
                range.setEnd(node, at + needle.length);
                const rects = Array.from(range.getClientRects());
                const first = rects[0], last = rects[rects.length - 1];
                return {x1: first.left + 1, y1: first.top + first.height / 2,
                        x2: last.right - 1, y2: last.top + last.height / 2};
            }
            return null;
        }""",
        [root, needle],
    )
    page.mouse.move(box["x1"], box["y1"])
    page.mouse.down()
    page.mouse.move((box["x1"] + box["x2"]) / 2, (box["y1"] + box["y2"]) / 2, steps=4)
    page.mouse.move(box["x2"], box["y2"], steps=4)
    page.mouse.up()


def rect(page, selector: str) -> dict[str, float]:
    return page.evaluate(
        "(s) => { const r = document.querySelector(s).getBoundingClientRect();"
        " return {top: r.top, bottom: r.bottom, left: r.left, right: r.right}; }",
        selector,
    )


def selection_rect(page) -> dict[str, float]:
    return page.evaluate(
        "() => { const r = window.getSelection().getRangeAt(0).getBoundingClientRect();"
        " return {top: r.top, bottom: r.bottom, left: r.left, right: r.right}; }"
    )


@pytest.mark.parametrize("width", sorted(WIDTHS))
def test_the_comment_form_opens_next_to_the_selection(browser, live_server, artifacts_dir, width):
    built = desk()
    context, page = context_page(browser, live_server, WIDTHS[width])
    try:
        login(page, "ada")
        page.goto(f"/reviews/r/{built['draft'].pk}/")
        drag_select(page, "#doc-rendered", LATE)
        form = page.locator("#annotate-form")
        page.wait_for_selector("#annotate-form.annotate-floating")
        assert LATE in page.locator("#selection-preview").inner_text()
        viewport = WIDTHS[width]
        box = rect(page, "#annotate-form")
        chosen = selection_rect(page)
        # The form is on screen, where the reader is (it used to be ~1,100 px above).
        assert 0 <= box["top"] < viewport["height"], box
        if width == "1280":
            assert "annotate-popover" in form.get_attribute("class")
            # Beside the passage, level with it, not over the document's text.
            assert abs(box["top"] - chosen["top"]) < 40, (box, chosen)
            assert box["left"] >= rect(page, ".doc-panel")["right"], box
        else:
            assert "annotate-sheet" in form.get_attribute("class")
            assert abs(box["bottom"] - viewport["height"]) < 2, box  # a sheet along the bottom
            assert chosen["bottom"] <= box["top"], (chosen, box)  # the passage stays in view
            assert box["left"] == 0 and box["right"] == viewport["width"]
        page.screenshot(path=artifacts_dir / f"{width}-form-beside-selection.png")

        form.get_by_label("Area").select_option(label="Security")
        form.get_by_label("Comment").fill("Constant-time compare: say which library does it.")
        with page.expect_event("load"):
            form.get_by_role("button", name="Add annotation").click()
        annotation = Annotation.objects.get(review=built["draft"])
        assert annotation.exact == LATE
        assert annotation.area == "security"
        page.screenshot(path=artifacts_dir / f"{width}-after-adding.png")

        # Close (or Escape) puts the form back at the top of the margin.
        drag_select(page, "#doc-rendered", "Should prefix sharing cross tenant boundaries")
        page.wait_for_selector("#annotate-form.annotate-floating")
        page.keyboard.press("Escape")
        page.wait_for_selector("#annotate-form:not(.annotate-floating)")
        assert page.locator("#annotate-away").is_hidden()
    finally:
        context.close()


@pytest.mark.parametrize("width", sorted(WIDTHS))
def test_the_practice_clock_covers_neither_annotate_nor_the_checklist(
    browser, live_server, artifacts_dir, width
):
    built = desk()
    context, page = context_page(browser, live_server, WIDTHS[width])
    try:
        login(page, "ada")
        page.goto(f"/reviews/r/{built['timed'].pk}/")
        page.wait_for_selector("#practice-timer")
        for target in ("#annotate-title", "#checklist-title"):
            # Scrolled to (a link, the keyboard, scrollIntoView) and scrolled a little past.
            page.evaluate("(s) => document.querySelector(s).scrollIntoView()", target)
            timer = rect(page, "#practice-timer")
            heading = rect(page, target)
            assert -1 <= timer["top"] < 20, timer  # the clock is still on screen, at the top
            assert heading["top"] >= timer["bottom"], (target, timer, heading)
            page.screenshot(path=artifacts_dir / f"{width}-clock-and-{target[1:]}.png")
        # Tabbing into the checklist keeps the focused control clear of the clock.
        page.evaluate("() => window.scrollTo(0, 0)")
        page.locator("#checklist-panel select").first.focus()
        focused = page.evaluate(
            "() => { const r = document.activeElement.getBoundingClientRect();"
            " return {top: r.top, bottom: r.bottom}; }"
        )
        assert focused["top"] >= rect(page, "#practice-timer")["bottom"], focused
        assert re.search(r"\d+:\d\d", page.locator("[data-timer-elapsed]").inner_text())
    finally:
        context.close()


@pytest.mark.parametrize("width", sorted(WIDTHS))
def test_submitting_a_review_asks_first(browser, live_server, artifacts_dir, width):
    built = desk()
    draft = built["draft"]
    context, page = context_page(browser, live_server, WIDTHS[width])
    try:
        login(page, "ada")
        page.goto(f"/reviews/r/{draft.pk}/")
        page.get_by_role("button", name="Submit review").click()
        dialog = page.get_by_role("dialog", name="Submit this review?")
        dialog.wait_for()
        text = dialog.inner_text()
        assert "0 annotations, 0 risks." in text
        assert "Checklist: 8 areas not assessed." in text
        assert "Verdict: Comment." in text
        assert "No summary." in text
        page.screenshot(path=artifacts_dir / f"{width}-submit-confirm.png")
        page.keyboard.press("Escape")
        page.locator("#checklist-panel").screenshot(path=artifacts_dir / f"{width}-checklist.png")
        page.get_by_role("button", name="Submit review").click()
        dialog.wait_for()
        # "Keep editing" sends nothing and returns to the button.
        dialog.get_by_role("button", name="Keep editing").click()
        assert dialog.is_hidden()
        draft.refresh_from_db()
        assert draft.status == Review.Status.DRAFT
        assert page.evaluate("() => document.activeElement.id") == "submit-review"
        # Escape is "keep editing" too.
        page.get_by_role("button", name="Submit review").click()
        dialog.wait_for()
        page.keyboard.press("Escape")
        assert dialog.is_hidden()
        draft.refresh_from_db()
        assert draft.status == Review.Status.DRAFT
        # Confirmed: sent.
        page.get_by_label("Summary (optional)").fill("Ship it after the rollback plan.")
        page.get_by_role("button", name="Submit review").click()
        assert "No summary." not in dialog.inner_text()
        with page.expect_event("load"):
            dialog.get_by_role("button", name="Yes, submit").click()
        page.wait_for_selector("#review-status:has-text('Submitted')")
        draft.refresh_from_db()
        assert draft.status == Review.Status.SUBMITTED
    finally:
        context.close()


@pytest.mark.parametrize("width", sorted(WIDTHS))
def test_an_orphan_is_reattached_from_the_document_page_by_selecting_its_passage(
    browser, live_server, artifacts_dir, width
):
    built = desk()
    orphan, r2 = built["orphan"], built["r2"]
    context, page = context_page(browser, live_server, WIDTHS[width])
    try:
        login(page, "ada")  # the document's author
        page.goto(f"/reviews/d/{built['doc'].pk}/")
        issue = page.locator(f"#issue-{orphan.pk}")
        assert "orphaned in r2" in issue.inner_text()
        link = issue.get_by_role("link", name="re-attach it to a passage of r2")
        link.scroll_into_view_if_needed()
        issue.screenshot(path=artifacts_dir / f"{width}-orphaned-issue.png")
        link.click()
        page.wait_for_url(f"**/reviews/r/{built['submitted'].pk}/?r=2#orphans-title")
        panel = page.locator(".orphans-panel")
        button = panel.get_by_role("button", name="Re-attach to selection")
        assert button.is_disabled()

        new_passage = "To undo a region we move its DNS record back."
        drag_select(page, "#doc-rendered", new_passage)
        page.wait_for_selector(".orphans-panel.annotate-floating")
        assert button.is_enabled()
        box, chosen = rect(page, ".orphans-panel"), selection_rect(page)
        assert 0 <= box["top"] < WIDTHS[width]["height"], box  # beside the reader, on screen
        if width == "375":
            assert chosen["bottom"] <= box["top"], (chosen, box)
        page.screenshot(path=artifacts_dir / f"{width}-reattach-beside-selection.png")
        with page.expect_event("load"):
            button.click()
        anchor = AnnotationAnchor.objects.get(annotation=orphan, revision=r2)
        assert (anchor.status, anchor.manual) == ("reattached", True)
        body = revision_text(revision=r2)
        assert body[anchor.start : anchor.end] in (new_passage, new_passage.rstrip("."))
        card = page.locator(f"#ann-{orphan.pk}")
        card.wait_for()
        assert "re-attached by hand" in card.locator(".anchor-status").inner_text()
        assert "r2 re-attached by hand" in card.locator(".ann-trail").inner_text()
        card.scroll_into_view_if_needed()
        page.screenshot(path=artifacts_dir / f"{width}-reattached-card.png")
    finally:
        context.close()


def test_times_are_shown_in_the_readers_zone_and_urls_name_revision_numbers(
    browser, live_server, artifacts_dir
):
    """Reviews, inbox, scorecard and progress in New York: every <time> is rewritten into the
    reader's zone, named, with a tooltip that labels the local time and the UTC time each with
    its own zone; revision links say ?r=<number>, and an old ?rev=<id> link still lands."""
    built = desk()
    context, page = context_page(browser, live_server, PHONE, timezone_id="America/New_York")
    try:
        login(page, "bob")
        for path in (
            "/reviews/inbox/",
            f"/reviews/r/{built['submitted'].pk}/?r=2",
            "/reviews/",
            "/reviews/practice/",
            f"/reviews/r/{built['mock'].pk}/debrief/",
        ):
            page.goto(path)
            page.wait_for_function(
                "() => Array.from(document.querySelectorAll('time[data-local]'))"
                ".every((t) => t.dataset.localised)"
            )
            times = page.locator("time[data-local]")
            assert times.count() >= 1, path
            for index in range(times.count()):
                shown, title = (
                    times.nth(index).inner_text(),
                    times.nth(index).get_attribute("title"),
                )
                if times.nth(index).get_attribute("data-local") != "date":  # a day has no zone
                    assert re.search(r"EST|EDT|GMT-[45]", shown), (path, shown)
                assert "(America/New_York)" in title and "UTC" in title, (path, title)
                assert not title.startswith(times.nth(index).get_attribute("datetime")), title
        page.goto("/reviews/inbox/")
        page.wait_for_function("() => document.querySelector('time[data-local]').dataset.localised")
        excerpt = page.locator('.inbox-item[data-kind="reply"] .inbox-excerpt')
        assert excerpt.locator("strong").inner_text() == "Good catch"
        assert "**" not in excerpt.inner_text()
        page.screenshot(path=artifacts_dir / "375-inbox-new-york.png", full_page=True)

        # Revision links name numbers; an old link by id is sent to the number.
        page.goto(f"/reviews/r/{built['submitted'].pk}/")
        link = page.get_by_role("navigation", name="Revisions").get_by_role("link", name="r2")
        assert link.get_attribute("href") == "?r=2"
        link.click()
        page.wait_for_url(f"**/reviews/r/{built['submitted'].pk}/?r=2")
        assert "Orphans in r2" in page.locator(".orphans-panel").inner_text()
        page.goto(f"/reviews/d/{built['doc'].pk}/?rev={built['r2'].pk}")
        assert page.url.endswith(f"/reviews/d/{built['doc'].pk}/?r=2")
    finally:
        context.close()


@pytest.mark.parametrize("width", sorted(WIDTHS))
def test_scorecard_partial_credit_and_storage_results_on_screen(
    browser, live_server, artifacts_dir, width
):
    built = desk()
    context, page = context_page(browser, live_server, WIDTHS[width])
    try:
        login(page, "bob")
        page.goto(f"/reviews/r/{built['mock'].pk}/debrief/")
        assert "+ 1 under another area" in page.locator("#score-found").inner_text()
        item = page.locator('#partial-list [data-item="capacity-shortfall"]')
        assert "Found, but filed under Observability" in item.inner_text()
        assert "Half credit." in item.inner_text()
        item.scroll_into_view_if_needed()
        page.screenshot(path=artifacts_dir / f"{width}-debrief-partial.png")

        page.goto("/questions/data-platform/")
        raw = page.locator('[data-figure="raw_bytes_per_day"]')
        assert "Raw per day (before compression)" in raw.inner_text()
        assert "8.64 TB" in raw.inner_text()
        raw.scroll_into_view_if_needed()
        page.screenshot(path=artifacts_dir / f"{width}-storage-results.png")
        page.goto("/questions/llm-inference-api/")
        caption = page.locator(".estimate-plot .chart-group-desc").text_content()
        assert not re.search(r"\d\.\d{4,}", caption), caption
        page.get_by_role("textbox", name="Flush timeout").fill("22.2222222")
        page.wait_for_function(
            "() => document.querySelector('.estimate-plot .chart-group-desc').textContent.includes('22.2 ms')"
        )
        assert "22.2222" not in page.locator(".estimator").inner_text()
        page.locator(".estimator").screenshot(path=artifacts_dir / f"{width}-batching.png")
    finally:
        context.close()
