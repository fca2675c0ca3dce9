"""The review desk in real Chromium: select text, annotate, rank two risks, fill the checklist,
submit; the author saves a revision that moves the passage and the annotation follows."""

import re

import pytest
from playwright.sync_api import expect

from reviews.models import Annotation, AnnotationAnchor, ChecklistItem, DocRevision, Review
from reviews.seed import practice_docs_load
from reviews.selectors import revision_text
from reviews.services import annotation_create, doc_revision_create, review_submit
from tests.factories import PASSWORD, make_user
from tests.reviews.factories import DOC, make_doc, make_review

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

KV = "Each decode replica holds a 40 GB paged KV cache"
API_PASSAGE = "Clients call POST /v1/chat/completions with stream: true"
ROLLBACK = "Rollback flips the flag back to the legacy proxy"
ROUTER_SOURCE = "The router terminates TLS, authenticates the tenant key"


def login(page, username: str) -> None:
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_selector(".nav-user")


def select_text(page, root: str, needle: str, *, preview: bool = True) -> None:
    """Select `needle` as shown in `root` (it may span elements, e.g. inline code), as a user
    dragging over it would; whitespace runs match any whitespace."""
    page.evaluate(
        """([rootSelector, needle]) => {
            const root = document.querySelector(rootSelector);
            const nodes = [];
            let text = "";
            const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
            let node;
            while ((node = walker.nextNode())) { nodes.push([node, text.length]); text += node.data; }
            const pattern = new RegExp(needle.split(/\\s+/).map(
                (w) => w.replace(/[.*+?^${}()|[\\]\\\\]/g, "\\\\$&")).join("\\\\s+"));
            const match = pattern.exec(text);
            if (!match) throw new Error("not shown: " + needle);
            const locate = (offset, isEnd) => {
                for (let i = nodes.length - 1; i >= 0; i--) {
                    const [n, at] = nodes[i];
                    if (at < offset || (at === offset && !isEnd)) return [n, offset - at];
                }
                return [nodes[0][0], 0];
            };
            const [startNode, startOffset] = locate(match.index, false);
            const [endNode, endOffset] = locate(match.index + match[0].length, true);
            const range = document.createRange();
            range.setStart(startNode, startOffset);
            range.setEnd(endNode, endOffset);
            const selection = window.getSelection();
            selection.removeAllRanges();
            selection.addRange(range);
        }""",
        [root, needle],
    )
    if preview:
        page.wait_for_selector("#selection-preview.has-selection")


def annotate(page, *, area: str, kind: str, severity: str, body: str, tradeoff: str = "") -> None:
    form = page.locator("#annotate-form")
    form.get_by_label("Area").select_option(label=area)
    form.get_by_label("Kind").select_option(label=kind)
    form.get_by_label("Severity").select_option(label=severity)
    form.get_by_label("Comment").fill(body)
    if tradeoff:
        form.get_by_label("Tradeoff").fill(tradeoff)
    with page.expect_event("load"):
        page.get_by_role("button", name="Add annotation").click()


def test_review_rank_checklist_submit_and_follow_a_moved_passage(new_page, artifacts_dir):
    ada, bob = make_user("ada"), make_user("bob")
    doc, r1 = make_doc(ada, title="Token-streaming inference gateway")

    practice_docs_load()  # the migration's seed, flushed by earlier transactional tests

    page = new_page()
    login(page, "bob")
    page.goto("/questions/review-design-doc/")
    assert page.get_by_role("link", name="Batched inference server for the public LLM API").count()
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Reviews").click()
    page.wait_for_selector(".doc-table")
    page.screenshot(path=artifacts_dir / "list.png", full_page=True)
    page.get_by_role("link", name="Token-streaming inference gateway").click()
    page.get_by_role("button", name="Start review of r1").click()
    page.wait_for_selector("#annotate-form")
    review = Review.objects.get(reviewer=bob)

    # 1. Select a passage in the rendered document and annotate it as a risk.
    select_text(page, "#doc-rendered", KV)
    assert KV in page.locator("#selection-preview").inner_text()
    page.locator("#annotate-form").screenshot(path=artifacts_dir / "0-selection.png")
    annotate(
        page,
        area="Scale & cost",
        kind="Risk",
        severity="Major",
        body="40 GB per replica leaves no headroom for 32k-token prompts.",
    )
    kv = Annotation.objects.get(body__startswith="40 GB")
    start = DOC.index(KV)
    assert (kv.start, kv.end, kv.exact) == (start, start + len(KV), KV)
    assert page.locator(f'#doc-rendered mark[data-ann="{kv.pk}"]').first.inner_text() == KV

    # 2. A selection across inline code maps to the Markdown source, backticks included.
    select_text(page, "#doc-rendered", API_PASSAGE)
    annotate(
        page,
        area="Failure modes",
        kind="Risk",
        severity="Blocker",
        body="No story for a client that reconnects mid-stream.",
    )
    api = Annotation.objects.get(body__startswith="No story")
    assert api.exact == "Clients call `POST /v1/chat/completions` with `stream: true`"
    assert (
        "".join(page.locator(f'#doc-rendered mark[data-ann="{api.pk}"]').all_inner_texts())
        == API_PASSAGE
    )

    # 3. An alternative (with its tradeoff) selected in the Markdown source view.
    page.get_by_role("tab", name="Markdown source").click()
    select_text(page, "#doc-source", ROUTER_SOURCE)
    page.locator("#annotate-form").get_by_label("Kind").select_option(label="Alternative")
    assert page.get_by_label("Tradeoff").is_visible()
    annotate(
        page,
        area="Alternatives",
        kind="Alternative",
        severity="Minor",
        body="Terminate TLS at the load balancer.",
        tradeoff="One more hop, but certificates are managed in one place.",
    )
    alternative = Annotation.objects.get(kind="alternative")
    assert alternative.exact == ROUTER_SOURCE
    assert alternative.tradeoff.startswith("One more hop")

    # Offsets are code points: a passage after an emoji (two UTF-16 units) still lines up.
    select_text(page, "#doc-rendered", "anything slower pages the on-call")
    annotate(page, area="Observability", kind="Question", severity="Nit", body="Which on-call?")
    question = Annotation.objects.get(kind="question")
    assert question.exact == "anything slower pages the on-call"
    assert DOC[question.start : question.end] == question.exact
    page.screenshot(path=artifacts_dir / "1-annotated.png", full_page=True)

    # 4. Rank the two risks. The blocker, added second, took #1 by severity (issue 33: it landed
    # below the major); the major goes first with the button, then the blocker back by drag.
    risks = page.locator("#risk-list .risk-item")
    assert [int(x) for x in risks.evaluate_all("els => els.map(e => e.dataset.id)")] == [
        api.pk,
        kv.pk,
    ]
    assert Annotation.objects.get(pk=api.pk).rank == 1
    with page.expect_response(re.compile(r"/ranking/$")) as ranked:
        risks.nth(1).get_by_role("button", name="Move risk up").click()
    assert ranked.value.ok
    assert page.locator("#risk-list .risk-item").first.get_attribute("data-id") == str(kv.pk)
    # The list renumbers once the saved ranking's answer has been read: wait for it.
    expect(page.locator("#risk-list .risk-item").first.locator("[data-rank]")).to_have_text("#1")
    assert Annotation.objects.get(pk=kv.pk).rank == 1
    assert Annotation.objects.get(pk=api.pk).rank == 2
    with page.expect_response(re.compile(r"/ranking/$")):
        page.locator("#risk-list .risk-item").nth(0).drag_to(
            page.locator("#risk-list .risk-item").nth(1), target_position={"x": 20, "y": 30}
        )
    assert Annotation.objects.get(pk=api.pk).rank == 1
    assert Annotation.objects.get(pk=kv.pk).rank == 2

    # 5. Fill the checklist; the chart follows.
    statuses = {
        "Goals & non-goals": "Covered",
        "Alternatives": "Gap",
        "Scale & cost": "Covered",
        "Failure modes": "Gap",
        "Rollout & rollback": "Covered",
        "Observability": "Covered",
        "Security": "Covered",
        "Migration": "N/A",
    }
    for area, status in statuses.items():
        page.locator("#checklist-panel").get_by_label(area, exact=True).select_option(label=status)
    page.get_by_label("Failure modes note").fill("Reconnects mid-stream are not handled.")
    page.get_by_role("button", name="Save checklist").click()
    page.wait_for_selector("#checklist-panel .saved")
    assert page.locator('[data-coverage="covered"]').inner_text() == "5"
    assert page.locator('[data-coverage="gap"]').inner_text() == "2"
    assert ChecklistItem.objects.get(review=review, area="failure-modes").status == "gap"
    page.locator("#checklist-panel").screenshot(path=artifacts_dir / "2-checklist.png")
    page.locator(".risks-panel").screenshot(path=artifacts_dir / "3-ranked-risks.png")

    # 6. Submit.
    page.get_by_label("Summary (optional)").fill("Fix reconnects before launch.")
    page.get_by_role("button", name="Submit review").click()
    # Submitting asks first (issue #23): confirm in the dialog.
    page.get_by_role("dialog").get_by_role("button", name="Yes, submit").click()
    page.wait_for_selector("#review-status:has-text('Submitted')")
    review.refresh_from_db()
    assert review.status == "submitted"
    assert review.summary == "Fix reconnects before launch."
    assert page.locator("#annotate-form").count() == 0
    page.screenshot(path=artifacts_dir / "4-submitted.png", full_page=True)
    markdown = page.request.get(f"/api/v1/reviews/{review.pk}/export/?format=markdown")
    assert markdown.ok
    assert markdown.text().index("No story for a client") < markdown.text().index(
        "40 GB per replica"
    )

    # 7. The author moves the KV-cache section above "Prefill and decode pools" in a revision.
    author = new_page()
    login(author, "ada")
    author.goto(f"/reviews/d/{doc.pk}/")
    section = DOC[DOC.index("### KV cache") : DOC.index("## Capacity and cost")]
    moved = DOC.replace(section, "")
    at = moved.index("### Prefill and decode pools")
    moved = moved[:at] + section + moved[at:]
    author.get_by_label("Document (Markdown)").fill(moved)
    author.get_by_label("Revision message").fill("KV cache first")
    author.get_by_role("button", name="Save revision").click()
    author.wait_for_selector("text=Saved r2")
    author.screenshot(path=artifacts_dir / "7-author-doc-page.png", full_page=True)
    r2 = DocRevision.objects.get(doc=doc, number=2)
    assert revision_text(revision=r2) == moved
    landed = AnnotationAnchor.objects.get(annotation=kv, revision=r2)
    assert landed.status == "moved"
    assert moved[landed.start : landed.end] == KV

    # 8. The reviewer comes back and switches the review page to r2: the highlight followed.
    page.reload()
    page.get_by_role("link", name="r2", exact=True).click()
    page.wait_for_url(f"**/reviews/r/{review.pk}/?r={r2.number}")
    item = page.locator(f"#ann-{kv.pk}")
    assert item.get_attribute("data-anchor-status") == "moved"
    assert "r1 exact → r2 moved" in item.locator(".ann-trail").inner_text()
    mark = page.locator(f'#doc-rendered mark[data-ann="{kv.pk}"]').first
    assert mark.inner_text() == KV
    order = page.evaluate(
        """(id) => {
            const mark = document.querySelector(`mark[data-ann="${id}"]`);
            const heading = document.getElementById("h-prefill-and-decode-pools");
            return mark.compareDocumentPosition(heading) & Node.DOCUMENT_POSITION_FOLLOWING;
        }""",
        kv.pk,
    )
    assert order, "the KV-cache highlight is now above the prefill/decode section"
    assert (
        "None: every annotation found its passage." in page.locator(".orphans-panel").inner_text()
    )
    mark.scroll_into_view_if_needed()
    page.screenshot(path=artifacts_dir / "5-r2-followed.png", full_page=True)
    page.locator(f"#ann-{kv.pk}").screenshot(path=artifacts_dir / "6-annotation-trail.png")

    # The author can resolve an issue on the submitted review.
    author.goto(f"/reviews/r/{review.pk}/")
    with author.expect_response(re.compile(rf"/annotations/{api.pk}/$")) as patched:
        author.get_by_label(f"Issue status of annotation {api.pk}").select_option("resolved")
    assert patched.value.ok
    assert Annotation.objects.get(pk=api.pk).status == "resolved"


def test_an_orphan_is_listed_and_reattached_by_hand(new_page, artifacts_dir):
    ada, bob = make_user("ada"), make_user("bob")
    doc, r1 = make_doc(ada)
    review = make_review(bob, r1)
    start = DOC.index("Rollback flips")
    end = DOC.index("legacy proxy") + len("legacy proxy")
    orphan = annotation_create(
        actor=bob,
        review=review,
        start=start,
        end=end,
        area="rollout-rollback",
        kind="risk",
        severity="major",
        body="A flag flip is not a rollback plan for in-flight streams.",
    )
    review_submit(actor=bob, review=review)
    rewritten = DOC.replace(
        "Rollback flips\nthe flag back to the legacy proxy; in-flight streams finish on the gateway.",
        "To undo a region we move its DNS record back; open streams are cut.",
    )
    r2, _ = doc_revision_create(actor=ada, doc=doc, body=rewritten)  # re-anchors on commit
    assert AnnotationAnchor.objects.get(annotation=orphan, revision=r2).status == "orphaned"

    page = new_page()
    login(page, "bob")
    page.goto(f"/reviews/r/{review.pk}/?r={r2.number}")
    panel = page.locator(".orphans-panel")
    assert "Rollback flips" in panel.inner_text()
    assert "A flag flip" in panel.inner_text()
    assert panel.get_by_role("button", name="Re-attach to selection").is_disabled()
    select_text(
        page, "#doc-rendered", "To undo a region we move its DNS record back", preview=False
    )
    page.wait_for_selector(".orphans-panel [data-reattach]:enabled")
    panel.screenshot(path=artifacts_dir / "orphans-panel.png")
    with page.expect_event("load"):
        panel.get_by_role("button", name="Re-attach to selection").click()
    anchor = AnnotationAnchor.objects.get(annotation=orphan, revision=r2)
    assert anchor.manual
    assert anchor.status == "reattached"
    assert rewritten[anchor.start : anchor.end] == "To undo a region we move its DNS record back"
    item = page.locator(f"#ann-{orphan.pk}")
    assert item.locator(".anchor-status").inner_text() == "re-attached by hand"
    assert page.locator(f'#doc-rendered mark[data-ann="{orphan.pk}"]').inner_text() == (
        "To undo a region we move its DNS record back"
    )
    assert (
        "None: every annotation found its passage." in page.locator(".orphans-panel").inner_text()
    )
    page.screenshot(path=artifacts_dir / "reattached.png", full_page=True)
