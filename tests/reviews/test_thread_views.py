"""The thread pages without a browser: reply and edit forms (plain and htmx), the author's
view on the document page, the revision diff page and the inbox pages (issue #15)."""

import pytest
from django.test import Client

from reviews.models import Annotation, BodyEdit, InboxItem, Reply
from reviews.services import reply_create, review_submit
from tests.reviews.factories import annotate, make_review
from tests.reviews.threads_fixtures import KV, ROUTER, revise

pytestmark = pytest.mark.django_db


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def submitted(review):
    kv = annotate(review, KV, severity="blocker", body="KV headroom?")
    router = annotate(review, ROUTER, kind="question", severity="minor", body="<b>keys</b>?")
    review_submit(actor=review.reviewer, review=review, verdict="request-changes")
    return kv, router


def test_reply_form_plain_and_htmx(submitted, author, reviewer):
    kv, _ = submitted
    client = client_for(author)
    plain = client.post(f"/reviews/a/{kv.pk}/reply/", {"body": "Plain *reply*"})
    assert plain.status_code == 302
    assert plain["Location"].endswith(f"#ann-{kv.pk}")
    htmx = client.post(
        f"/reviews/a/{kv.pk}/reply/", {"body": "Via **htmx**"}, HTTP_HX_REQUEST="true"
    )
    assert htmx.status_code == 200
    html = htmx.content.decode()
    assert f'id="thread-{kv.pk}"' in html
    assert "<strong>htmx</strong>" in html
    assert "<em>reply</em>" in html
    # A refused reply keeps the typed text and says why.
    refused = client.post(
        f"/reviews/a/{kv.pk}/reply/", {"body": "x" * 10_001}, HTTP_HX_REQUEST="true"
    )
    assert "at most 10000 characters" in refused.content.decode()
    assert Reply.objects.count() == 2
    # `next` only leads back into this site.
    away = client.post(
        f"/reviews/a/{kv.pk}/reply/", {"body": "ok", "next": "https://evil.example/"}
    )
    assert away["Location"].startswith("/reviews/r/")
    home = client.post(f"/reviews/a/{kv.pk}/reply/", {"body": "ok", "next": "/reviews/d/1/"})
    assert home["Location"] == "/reviews/d/1/"


def test_draft_annotations_are_404_on_the_pages(doc, author, third):
    draft = make_review(third, doc[1])
    note = annotate(draft, KV)
    assert client_for(author).post(f"/reviews/a/{note.pk}/reply/", {"body": "x"}).status_code == 404
    own = client_for(third).post(f"/reviews/a/{note.pk}/reply/", {"body": "x"})
    assert own.status_code == 302
    assert not Reply.objects.exists()
    assert client_for(author).get("/reviews/a/999/reply/").status_code == 405  # POST only


def test_reply_and_annotation_edits_from_the_page(submitted, author, reviewer):
    kv, _ = submitted
    reply = reply_create(actor=author, annotation=kv, body="First")
    assert (
        client_for(reviewer).post(f"/reviews/replies/{reply.pk}/edit/", {"body": "no"}).status_code
        == 403
    )
    edited = client_for(author).post(
        f"/reviews/replies/{reply.pk}/edit/", {"body": "Second"}, HTTP_HX_REQUEST="true"
    )
    html = edited.content.decode()
    assert "Second" in html
    assert "1 earlier version" in html
    assert "First" in html

    assert (
        client_for(author).post(f"/reviews/a/{kv.pk}/edit/", {"body": "mine now"}).status_code
        == 403
    )
    response = client_for(reviewer).post(
        f"/reviews/a/{kv.pk}/edit/", {"body": "KV headroom is 0.", "severity": "major"}
    )
    assert response.status_code == 302
    fresh = Annotation.objects.get(pk=kv.pk)
    assert (fresh.body, fresh.severity) == ("KV headroom is 0.", "major")
    assert fresh.edited_at
    assert BodyEdit.objects.filter(annotation=kv).get().body == "KV headroom?"
    page = client_for(author).get(f"/reviews/r/{kv.review_id}/").content.decode()
    assert "Changes requested" in page
    assert "1 earlier version" in page
    assert "Edit annotation" not in page  # only its author gets the form
    assert (
        "Edit annotation"
        in client_for(reviewer).get(f"/reviews/r/{kv.review_id}/").content.decode()
    )


def test_doc_page_author_view(doc, submitted, author):
    kv, router = submitted
    reply_create(actor=author, annotation=router, body="Ops rotates them <script>x</script>")
    page = client_for(author).get(f"/reviews/d/{doc[0].pk}/").content.decode()
    assert "Changes requested" in page
    assert "1 blocker" in page
    assert "1 minor" in page
    issues = page[page.index('id="open-issues"') :]
    assert issues.index(f'data-ann-id="{kv.pk}"') < issues.index(f'data-ann-id="{router.pk}"')
    assert "&lt;b&gt;keys&lt;/b&gt;" in issues
    assert "<script>x" not in page
    assert "Compare r" not in page  # one revision: nothing to compare yet


def test_diff_page(doc, submitted, author, third):
    kv, router = submitted
    client = client_for(third)
    single = client.get(f"/reviews/d/{doc[0].pk}/diff/")
    assert single.status_code == 302  # one revision: nothing to compare
    r2 = revise(author, doc[0])
    page = client.get(f"/reviews/d/{doc[0].pk}/diff/")
    html = page.content.decode()
    assert page.status_code == 200
    # untouched by the revision (shifted by the new heading): exact, so not marked (issue #36)
    assert f'data-ann-id="{kv.pk}" data-status=' not in html
    assert f'data-ann-id="{router.pk}" data-status="orphaned"' in html
    assert "rdiff-fold" in html
    assert client.get(f"/reviews/d/{doc[0].pk}/diff/?a=abc&b={r2.pk}").status_code == 404
    assert client.get(f"/reviews/d/{doc[0].pk}/diff/?a=999999").status_code == 404
    assert client.get("/reviews/d/999999/diff/").status_code == 404
    doc_page = client_for(author).get(f"/reviews/d/{doc[0].pk}/").content.decode()
    assert f"/reviews/d/{doc[0].pk}/diff/?a={doc[1].pk}&amp;b={r2.pk}" in doc_page


def test_inbox_pages_and_badge(doc, submitted, author, reviewer, third):
    kv, _ = submitted
    reply = reply_create(actor=author, annotation=kv, body="Answered")
    client = client_for(reviewer)
    page = client.get("/reviews/").content.decode()
    assert 'id="inbox-badge">1<' in page
    inbox = client.get("/reviews/inbox/").content.decode()
    assert "author replied to your annotation" in inbox
    assert "Answered" in inbox
    item = InboxItem.objects.get(recipient=reviewer)
    assert client_for(third).get(f"/reviews/inbox/{item.pk}/").status_code == 404
    opened = client.get(f"/reviews/inbox/{item.pk}/")
    assert opened["Location"] == f"/reviews/r/{kv.review_id}/#reply-{reply.pk}"
    assert InboxItem.objects.get(pk=item.pk).read_at is not None
    assert 'id="inbox-badge"' not in client.get("/reviews/").content.decode()
    # Mark all read (POST only).
    author_client = client_for(author)
    assert 'id="inbox-badge">1<' in author_client.get("/reviews/inbox/").content.decode()
    assert author_client.get("/reviews/inbox/read/").status_code == 405
    author_client.post("/reviews/inbox/read/")
    assert not InboxItem.objects.filter(recipient=author, read_at__isnull=True).exists()
    # A reply's Markdown is rendered and sanitised in the inbox, as in the thread.
    reply_create(
        actor=author,
        annotation=kv,
        body="**Fixed** in `r2`, see <script>alert(1)</script> " + "word " * 80,
    )
    inbox = client.get("/reviews/inbox/").content.decode()
    assert "<strong>Fixed</strong> in <code>r2</code>" in inbox
    assert "**Fixed**" not in inbox
    assert "<script>alert" not in inbox
    assert "word …" not in inbox and "word…" in inbox  # cut at a word, with an ellipsis
    # Anonymous: no badge, the inbox asks to log in.
    assert Client().get("/reviews/inbox/").status_code == 302
