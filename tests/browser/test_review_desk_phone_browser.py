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
from tests.factories import PASSWORD, make_user
from tests.reviews.factories import DOC, make_doc, make_review, span_of

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 375, "height": 812}
DESKTOP = {"width": 1280, "height": 860}
WIDTHS = {"375": PHONE, "1280": DESKTOP}
KV = "Each decode replica holds a 40 GB paged KV cache"
ROLLBACK = "Rollback flips\nthe flag back to the legacy proxy; in-flight streams finish on the gateway."
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
    context = browser.new_context(base_url=live_server.url, viewport=viewport, **options)
    context.set_default_timeout(15_000)
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
                page.wait_for_load_state("networkidle")
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
