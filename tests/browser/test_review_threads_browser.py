"""Review threads in real Chromium (issue #15): the reviewer submits requesting changes; the
author replies in the thread, saves a revision, opens the revision diff and sees the orphaned
annotation marked (the untouched one left plain); the reviewer finds the reply in the inbox (nav badge + page)."""

import pytest

from reviews.models import AnnotationAnchor, InboxItem, Reply, Review
from reviews.services import annotation_update, reply_create, reply_update, review_submit
from tests.browser.test_accessibility import axe_source, axe_violations  # noqa: F401 (fixture)
from tests.browser.test_reviews_browser import login
from tests.conftest import wait_for_quiet_network
from tests.factories import make_user
from tests.reviews.factories import annotate, make_doc, make_review
from tests.reviews.threads_fixtures import KV, REVISED, ROUTER, revise

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_request_changes_reply_revise_diff_and_inbox(new_page, artifacts_dir):
    ada, bob = make_user("ada"), make_user("bob")
    doc, r1 = make_doc(ada, title="Token-streaming inference gateway")
    review = make_review(bob, r1)
    kv = annotate(
        review, KV, severity="blocker", body="40 GB per replica leaves no room for 32k prompts."
    )
    router = annotate(
        review, ROUTER, kind="question", severity="minor", body="Who rotates the TLS keys?"
    )

    # 1. The reviewer submits with "Request changes".
    reviewer = new_page()
    login(reviewer, "bob")
    reviewer.goto(f"/reviews/r/{review.pk}/")
    verdicts = reviewer.get_by_role("group", name="Verdict")
    assert verdicts.get_by_label("Comment").is_checked()  # the default
    verdicts.get_by_label("Request changes").check()
    reviewer.get_by_role("button", name="Submit review").click()
    # Submitting asks first (issue #23): confirm in the dialog.
    reviewer.get_by_role("dialog").get_by_role("button", name="Yes, submit").click()
    reviewer.wait_for_selector(".verdict-request-changes")
    assert reviewer.locator(".page-head .verdict").inner_text() == "Changes requested"
    assert Review.objects.get(pk=review.pk).verdict == "request-changes"
    reviewer.screenshot(path=artifacts_dir / "1-submitted.png", full_page=True)

    # 2. The author sees it in the inbox badge and on the document page.
    author = new_page()
    login(author, "ada")
    assert author.locator("#inbox-badge").inner_text().startswith("1")
    author.goto(f"/reviews/d/{doc.pk}/")
    row = author.locator(".doc-review").first
    assert "bob on r1" in row.inner_text() and "Changes requested" in row.inner_text()
    assert "1 blocker" in row.inner_text() and "1 minor" in row.inner_text()
    issues = author.locator("#open-issues .issue")
    assert issues.count() == 2
    assert issues.nth(0).get_attribute("data-ann-id") == str(kv.pk)  # worst first
    assert issues.nth(0).get_attribute("data-anchor-status") == "exact"

    # 3. The author replies in the KV thread (htmx swaps the thread in place).
    thread = author.locator(f"#thread-{kv.pk}")
    thread.get_by_label("Reply").fill(
        "We cap prompts at **16k** tokens; see the [limits](https://example.com/limits)."
    )
    thread.get_by_role("button", name="Reply").click()
    author.locator(f"#thread-{kv.pk} .reply").first.wait_for()
    reply = Reply.objects.get(annotation=kv)
    shown = author.locator(f"#reply-{reply.pk}")
    assert "ada" in shown.inner_text()
    assert shown.locator(".reply-body strong").inner_text() == "16k"  # Markdown rendered
    author.locator("#open-issues").screenshot(path=artifacts_dir / "2-author-replied.png")

    # 4. The author saves a revision that moves the KV passage and deletes the router one.
    author.locator("#revision-body").fill(REVISED)
    author.get_by_label("Revision message").fill("Summary up top; router replaced")
    author.get_by_role("button", name="Save revision").click()
    author.wait_for_selector("text=Saved r2")
    statuses = dict(
        AnnotationAnchor.objects.filter(revision__number=2).values_list("annotation_id", "status")
    )
    # The KV passage is untouched, only shifted by the new summary: still exact (issue #36).
    assert statuses == {kv.pk: "exact", router.pk: "orphaned"}

    # 5. The revision diff: the orphan is marked where its passage was; the untouched KV
    # passage is left plain.
    author.get_by_role("link", name="Compare r1 → r2").click()
    author.wait_for_selector(".rdiff")
    assert author.locator(f'.rdiff-annotation[data-ann-id="{kv.pk}"]').count() == 0
    orphaned = author.locator(f'.rdiff-annotation[data-ann-id="{router.pk}"]')
    assert orphaned.get_attribute("data-status") == "orphaned" and orphaned.is_visible()
    assert "Who rotates the TLS keys?" in orphaned.inner_text()
    assert author.locator("#moved-count").inner_text() == "0 annotations moved"
    assert author.locator("#orphaned-count").inner_text() == "1 orphaned"
    # The orphan sits on the removed paragraph, its passage highlighted there.
    removed = author.locator(".rdiff-delete .rdiff-mark-orphaned").first
    assert ROUTER in removed.inner_text()
    assert author.locator(".rdiff-mark", has_text=KV).count() == 0
    # Other unchanged paragraphs stay folded until asked for.
    fold = author.locator("details.rdiff-fold").first
    assert not fold.locator(".rdiff-row").first.is_visible()
    author.screenshot(path=artifacts_dir / "3-revision-diff.png", full_page=True)
    fold.locator("summary").click()
    assert fold.locator(".rdiff-row").first.is_visible()
    author.locator(".page-head").screenshot(path=artifacts_dir / "3b-diff-head.png")

    # 6. The reviewer sees the reply (and the orphan notice) in the inbox.
    reviewer.goto("/reviews/")
    assert reviewer.locator("#inbox-badge").inner_text().startswith("2")
    reviewer.get_by_role("navigation", name="Main").get_by_role("link", name="Inbox").click()
    reviewer.wait_for_selector(".inbox-list")
    items = reviewer.locator(".inbox-item")
    assert items.count() == 2
    reply_item = reviewer.locator('.inbox-item[data-kind="reply"]')
    assert "ada replied to your annotation" in reply_item.inner_text()
    # The excerpt's Markdown is rendered (issue #23; it showed the raw **16k** before), with
    # its link shown as text so the item's own link is the one to follow.
    assert "We cap prompts at 16k tokens; see the limits." in reply_item.inner_text()
    assert reply_item.locator(".inbox-excerpt strong").inner_text() == "16k"
    assert "orphaned by r2" in reviewer.locator('.inbox-item[data-kind="orphaned"]').inner_text()
    reviewer.screenshot(path=artifacts_dir / "4-reviewer-inbox.png", full_page=True)
    reply_item.get_by_role("link").click()
    reviewer.wait_for_selector(f"#reply-{reply.pk}")
    assert reviewer.locator("#inbox-badge").inner_text().startswith("1")
    assert InboxItem.objects.filter(recipient=bob, read_at__isnull=True).count() == 1
    reviewer.locator(f"#ann-{kv.pk}").screenshot(path=artifacts_dir / "5-thread-on-review.png")

    # 7. The reviewer answers from the review page and edits the answer: history kept.
    thread = reviewer.locator(f"#thread-{kv.pk}")
    thread.get_by_label("Reply").fill("16k still needs 60 GB at p99.")
    thread.get_by_role("button", name="Reply").click()
    own = reviewer.locator(f"#thread-{kv.pk} .reply").nth(1)
    own.wait_for()
    own.locator("summary", has_text="Edit").click()
    own.get_by_label("Edit your reply").fill("16k still needs 52 GB at p99.")
    own.get_by_role("button", name="Save edit").click()
    reviewer.locator(f"#thread-{kv.pk} .history").wait_for()
    edited = reviewer.locator(f"#thread-{kv.pk} .reply").nth(1)
    assert "52 GB" in edited.locator(".reply-body").inner_text()
    assert "edited" in edited.locator(".reply-head").inner_text()
    edited.locator(".history summary").click()
    assert "60 GB" in edited.locator(".history-body").inner_text()
    reviewer.locator(f"#ann-{kv.pk}").screenshot(path=artifacts_dir / "6-edited-reply.png")


def test_thread_pages_have_no_wcag_violations(new_page, axe_source, artifacts_dir):  # noqa: F811
    """The pages this issue adds or changes pass axe-core's WCAG 2 A/AA rules: the review page
    with threads, edits and a verdict, the document page with the author's view, the revision
    diff and the inbox."""
    ada, bob = make_user("ada"), make_user("bob")
    doc, r1 = make_doc(ada, title="Token-streaming inference gateway")
    review = make_review(bob, r1)
    kv = annotate(review, KV, severity="blocker", body="No room for 32k prompts.")
    annotate(review, ROUTER, kind="question", severity="minor", body="Who rotates keys?")
    review_submit(actor=bob, review=review, verdict="request-changes")
    annotation_update(actor=bob, annotation=kv, changes={"body": "No room for 32k prompts!"})
    reply = reply_create(actor=ada, annotation=kv, body="We cap at **16k**.")
    reply_update(actor=ada, reply=reply, body="We cap at **16k** tokens.")
    revise(ada, doc)
    paths = {
        "doc (author)": (ada, f"/reviews/d/{doc.pk}/"),
        "diff": (ada, f"/reviews/d/{doc.pk}/diff/"),
        "inbox (author)": (ada, "/reviews/inbox/"),
        "review (reviewer)": (bob, f"/reviews/r/{review.pk}/"),
        "inbox (reviewer)": (bob, "/reviews/inbox/"),
    }
    pages = {}
    found = {}
    for name, (user, path) in paths.items():
        if user.username not in pages:
            pages[user.username] = new_page()
            login(pages[user.username], user.username)
        page = pages[user.username]
        response = page.goto(path)
        assert response is not None and response.status == 200, name
        wait_for_quiet_network(page)
        page.locator("details").evaluate_all("els => els.forEach(e => e.open = true)")
        found[name] = axe_violations(page, axe_source)
        page.screenshot(
            path=artifacts_dir / f"{name.split()[0]}-{user.username}.png", full_page=True
        )
    report = [f"{name}: {v}" for name, violations in found.items() for v in violations]
    assert report == [], "\n".join(report)
