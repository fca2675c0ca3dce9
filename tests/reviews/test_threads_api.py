"""Threads, edits, verdicts, the revision diff, the document's review list and the inbox,
end to end through the HTTP API (issue #15)."""

import pytest
from django.db import transaction

from reviews.models import Annotation, BodyEdit, InboxItem, Reply, Review
from reviews.services import review_submit
from tests.factories import api_client_for, make_user
from tests.reviews.factories import annotate, make_review
from tests.reviews.threads_fixtures import KV, REVISED, ROUTER, revise

pytestmark = pytest.mark.django_db


def submitted(review, *, verdict: str | None = None):
    """`review` with two annotations (a blocker risk on KV, a minor question on ROUTER),
    submitted."""
    kv = annotate(review, KV, severity="blocker")
    router = annotate(review, ROUTER, kind="question", severity="minor", body="Which cache?")
    review_submit(actor=review.reviewer, review=review, verdict=verdict)
    return kv, router


def rows(model) -> list[dict]:
    return list(model.objects.order_by("pk").values())


# --- replies: who may, what they look like --------------------------------------------------


def test_reply_visibility_matrix(doc, review, author, reviewer, third):
    """Submitted: the document's author, the annotation's author and any other signed-in
    account (another reviewer) may read and reply. A draft's annotation: 404 for everyone but
    its author, who may not reply before submitting. Anonymous: 401."""
    other_reviewer = make_user("other-reviewer")
    draft = make_review(other_reviewer, doc[1])
    draft_annotation = annotate(draft, KV, body="draft thought")
    kv, _ = submitted(review)

    for who in (author, reviewer, other_reviewer, third):
        api = api_client_for(who)
        posted = api.post(
            f"/api/v1/annotations/{kv.pk}/replies/", {"body": f"from {who}"}, format="json"
        )
        assert posted.status_code == 201, (who, posted.json())
        assert set(posted.json()) >= {"id", "author", "body", "created_at"}
        assert posted.json()["author"] == who.username
        listed = api.get(f"/api/v1/annotations/{kv.pk}/replies/")
        assert listed.status_code == 200

    url = f"/api/v1/annotations/{draft_annotation.pk}/replies/"
    for who in (author, reviewer, third):
        api = api_client_for(who)
        assert api.get(url).status_code == 404
        assert api.post(url, {"body": "peek"}, format="json").status_code == 404
        assert api.get(f"/api/v1/annotations/{draft_annotation.pk}/").status_code == 404
    own = api_client_for(other_reviewer)
    assert own.get(url).json() == []
    refused = own.post(url, {"body": "note to self"}, format="json")
    assert refused.status_code == 400
    assert refused.json()["detail"] == "Replies open once the review is submitted."

    anonymous = api_client_for(None)
    assert anonymous.get(f"/api/v1/annotations/{kv.pk}/replies/").status_code == 401
    assert (
        anonymous.post(f"/api/v1/annotations/{kv.pk}/replies/", {"body": "x"}, format="json")
    ).status_code == 401
    assert not Reply.objects.filter(annotation=draft_annotation).exists()
    assert Reply.objects.filter(annotation=kv).count() == 4


def test_replies_are_ordered_by_time_and_rendered_sanitised(review, author, reviewer):
    kv, _ = submitted(review)
    api = api_client_for(author)
    bodies = [
        "First: **why 40 GB?**",
        'Then <script>alert("x")</script> [click](javascript:alert(1)) and [docs](https://example.com)',
        "Third\n\n- a\n- b",
    ]
    for body in bodies:
        assert (
            api.post(f"/api/v1/annotations/{kv.pk}/replies/", {"body": body}, format="json")
        ).status_code == 201
    listed = api_client_for(reviewer).get(f"/api/v1/annotations/{kv.pk}/replies/").json()
    assert [r["body"] for r in listed] == bodies
    assert [r["created_at"] for r in listed] == sorted(r["created_at"] for r in listed)
    assert "<strong>why 40 GB?</strong>" in listed[0]["body_html"]
    html = listed[1]["body_html"]
    assert "<script>" not in html
    assert "&lt;script&gt;" in html
    assert "javascript:" not in html.replace("[click](javascript:alert(1))", "")
    assert 'href="https://example.com"' in html
    assert 'rel="noopener noreferrer nofollow"' in html
    assert "<li>a</li>" in listed[2]["body_html"]


@pytest.mark.parametrize(
    ("payload", "detail"),
    [
        ({}, "body: This field is required."),
        ({"body": "   "}, "body: This field may not be blank."),
        ({"body": "x" * 10_001}, "body: Ensure this field has no more than 10000 characters."),
        ({"body": ["a list"]}, "body: Not a valid string."),
        ({"body": "nul \x00 byte"}, "body: Null characters are not allowed."),
    ],
)
def test_bad_replies_are_400_and_write_nothing(review, author, payload, detail):
    kv, _ = submitted(review)
    before = (rows(Reply), rows(InboxItem))
    response = api_client_for(author).post(
        f"/api/v1/annotations/{kv.pk}/replies/", payload, format="json"
    )
    assert response.status_code == 400
    assert response.json()["detail"] == detail
    assert (rows(Reply), rows(InboxItem)) == before


def test_invalid_utf8_and_unknown_ids(review, author):
    kv, _ = submitted(review)
    api = api_client_for(author)
    broken = api.generic(
        "POST",
        f"/api/v1/annotations/{kv.pk}/replies/",
        b'{"body": "caf\xe9"}',
        content_type="application/json",
    )
    assert broken.status_code == 400
    assert "detail" in broken.json()
    assert api.get("/api/v1/annotations/999999/replies/").status_code == 404
    assert (
        api.post("/api/v1/annotations/999999/replies/", {"body": "x"}, format="json").status_code
        == 404
    )
    assert api.patch("/api/v1/replies/999999/", {"body": "x"}, format="json").status_code == 404
    assert not Reply.objects.exists()


def test_a_reply_and_its_inbox_rows_commit_together(review, author, reviewer, monkeypatch):
    """The inbox row is written in the reply's transaction: if it fails, no reply either."""
    kv, _ = submitted(review)
    api = api_client_for(author)
    assert (
        api.post(f"/api/v1/annotations/{kv.pk}/replies/", {"body": "ok"}, format="json").status_code
        == 201
    )
    item = InboxItem.objects.get(kind="reply")
    assert (item.recipient, item.actor, item.annotation_id) == (reviewer, author, kv.pk)

    import reviews.services.threads as threads

    def broken(**kwargs):
        raise RuntimeError("inbox down")

    monkeypatch.setattr(threads, "inbox_notify_reply", broken)
    with pytest.raises(RuntimeError), transaction.atomic():
        threads.reply_create(actor=author, annotation=kv, body="lost")
    assert list(Reply.objects.values_list("body", flat=True)) == ["ok"]


def test_thread_participants_are_notified_but_never_the_replier(review, author, reviewer, third):
    kv, _ = submitted(review)
    for who, body in ((author, "a"), (third, "b"), (reviewer, "c"), (author, "d")):
        api_client_for(who).post(
            f"/api/v1/annotations/{kv.pk}/replies/", {"body": body}, format="json"
        )
    got = sorted(
        (item.recipient.username, item.reply.body)
        for item in InboxItem.objects.filter(kind="reply")
    )
    assert got == [
        ("author", "b"),  # the author replied first, so follows the thread
        ("author", "c"),
        ("reviewer", "a"),
        ("reviewer", "b"),
        ("reviewer", "d"),
        ("third", "c"),
        ("third", "d"),
    ]


# --- edits ---------------------------------------------------------------------------------------


def test_the_annotation_author_edits_after_submission_and_history_is_kept(review, author, third):
    kv, _ = submitted(review)
    url = f"/api/v1/annotations/{kv.pk}/"
    for who in (author, third):
        before = rows(Annotation)
        refused = api_client_for(who).patch(url, {"body": "hijacked"}, format="json")
        assert refused.status_code == 403
        assert refused.json()["detail"] == "Only the annotation's author can edit it."
        assert rows(Annotation) == before
        assert not BodyEdit.objects.exists()

    api = api_client_for(review.reviewer)
    original = kv.body
    first = api.patch(url, {"body": "KV cache math is off: 32k prompts need 60 GB."}, format="json")
    assert first.status_code == 200, first.json()
    assert first.json()["body"].startswith("KV cache math")
    assert first.json()["edited_at"]
    second = api.patch(url, {"severity": "major", "area": "scale-cost"}, format="json")
    assert second.json()["severity"] == "major"
    assert second.json()["area"] == "scale-cost"
    assert second.json()["edited_at"] >= first.json()["edited_at"]
    # The same content again is not an edit.
    again = api.patch(url, {"severity": "major"}, format="json")
    assert again.status_code == 200
    assert again.json()["edited_at"] == second.json()["edited_at"]

    history = api_client_for(third).get(f"{url}history/").json()
    assert [h["body"] for h in history] == [
        original,
        "KV cache math is off: 32k prompts need 60 GB.",
    ]
    assert history[0]["fields"]["severity"] == "blocker"
    assert history[1]["fields"] == {
        "area": "failure-modes",
        "kind": "risk",
        "severity": "blocker",
        "tradeoff": "",
        "constraint": "",
    }
    assert history[0]["replaced_at"] <= history[1]["replaced_at"]
    # The rank stays what the submitted review said.
    assert api.patch(url, {"rank": 5}, format="json").status_code == 400
    assert Annotation.objects.get(pk=kv.pk).rank == 1


def test_reply_edits_by_their_author_only_with_history(review, author, reviewer):
    kv, _ = submitted(review)
    reply = (
        api_client_for(author)
        .post(
            f"/api/v1/annotations/{kv.pk}/replies/",
            {"body": "We cap prompts at 8k."},
            format="json",
        )
        .json()
    )
    url = f"/api/v1/replies/{reply['id']}/"
    refused = api_client_for(reviewer).patch(url, {"body": "no"}, format="json")
    assert refused.status_code == 403
    assert refused.json()["detail"] == "Only the reply's author can edit it."
    api = api_client_for(author)
    edited = api.patch(url, {"body": "We cap prompts at 16k."}, format="json")
    assert edited.status_code == 200
    assert edited.json()["edited_at"]
    assert edited.json()["body"] == "We cap prompts at 16k."
    same = api.patch(url, {"body": "We cap prompts at 16k."}, format="json")
    assert same.json()["edited_at"] == edited.json()["edited_at"]
    assert [h["body"] for h in api.get(f"{url}history/").json()] == ["We cap prompts at 8k."]
    assert api.patch(url, {"body": ""}, format="json").status_code == 400
    assert api.get(url).json()["body"] == "We cap prompts at 16k."


def test_history_rows_are_write_once(review):
    kv, _ = submitted(review)
    api_client_for(review.reviewer).patch(
        f"/api/v1/annotations/{kv.pk}/", {"body": "new"}, format="json"
    )
    edit = BodyEdit.objects.get()
    from common.models import Immutable

    edit.body = "rewritten history"
    with pytest.raises(Immutable):
        edit.save()
    with pytest.raises(Immutable):
        BodyEdit.objects.all().delete()


# --- verdicts ------------------------------------------------------------------------------------


@pytest.mark.parametrize("verdict", ["approve", "request-changes", "comment", None])
def test_submit_takes_a_verdict(review, author, verdict):
    api = api_client_for(review.reviewer)
    payload = {} if verdict is None else {"verdict": verdict}
    response = api.post(f"/api/v1/reviews/{review.pk}/submit/", payload, format="json")
    assert response.status_code == 200
    assert response.json()["status"] == "submitted"
    assert response.json()["verdict"] == (verdict or "comment")
    # Submitting again is a no-op: the first verdict stands.
    again = api.post(f"/api/v1/reviews/{review.pk}/submit/", {"verdict": "approve"}, format="json")
    assert again.json()["verdict"] == (verdict or "comment")
    item = InboxItem.objects.get()
    assert (item.kind, item.recipient, item.review_id) == ("review-submitted", author, review.pk)


@pytest.mark.parametrize("verdict", ["reject", "", "APPROVE", 1, None])
def test_an_unknown_verdict_is_400_and_the_review_stays_a_draft(review, verdict):
    response = api_client_for(review.reviewer).post(
        f"/api/v1/reviews/{review.pk}/submit/", {"verdict": verdict}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["detail"].startswith("verdict:")
    fresh = Review.objects.get(pk=review.pk)
    assert (fresh.status, fresh.verdict) == ("draft", "")
    assert not InboxItem.objects.exists()


def test_drafts_show_no_verdict(review):
    body = api_client_for(review.reviewer).get(f"/api/v1/reviews/{review.pk}/").json()
    assert body["verdict"] == ""
    assert body["status"] == "draft"


# --- the revision diff ----------------------------------------------------------------------------


def test_revision_diff_marks_moved_and_orphaned_annotations(doc, review, author, third):
    kv, router = submitted(review)
    other = make_review(make_user("drafter"), doc[1])
    hidden = annotate(other, KV, body="a private draft note")
    r2 = revise(author, doc[0], message="summary")
    api = api_client_for(third)
    response = api.get(f"/api/v1/revisions/{r2.pk}/diff/?against={doc[1].pk}")
    assert response.status_code == 200, response.json()
    diff = response.json()
    assert diff["revision"] == {"id": r2.pk, "number": 2}
    assert diff["against"] == {"id": doc[1].pk, "number": 1}
    assert diff["added"] >= 2
    assert diff["removed"] + diff["changed"] >= 1
    ops = [row["op"] for row in diff["rows"]]
    assert ops[:2] == ["insert", "insert"]  # the new heading and summary paragraph
    by_id = {m["annotation"]: m for m in diff["annotations"]}
    assert hidden.pk not in by_id  # someone else's draft
    assert by_id[kv.pk]["status"] == "exact"  # untouched, shifted by the new heading
    assert by_id[kv.pk]["side"] == "new"
    assert by_id[router.pk]["status"] == "orphaned"
    assert by_id[router.pk]["side"] == "old"
    revised_start = REVISED.index(KV)
    assert (by_id[kv.pk]["start"], by_id[kv.pk]["end"]) == (revised_start, revised_start + len(KV))
    # Each mark sits on the paragraph that holds its passage.
    kv_row = next(
        r for r in diff["rows"] if any(m["annotation"] == kv.pk for m in r["annotations"])
    )
    assert KV in kv_row["new"]["text"]
    router_row = next(
        r for r in diff["rows"] if any(m["annotation"] == router.pk for m in r["annotations"])
    )
    assert ROUTER in router_row["old"]["text"]
    assert router_row["op"] in ("delete", "change")
    # The reverse direction works too and the draft's author sees their own note.
    own = api_client_for(other.reviewer).get(f"/api/v1/revisions/{r2.pk}/diff/?against={doc[1].pk}")
    assert hidden.pk in {m["annotation"] for m in own.json()["annotations"]}


def test_revision_diff_bad_input(doc, author, third):
    from tests.reviews.factories import make_doc

    r2 = revise(author, doc[0])
    _, elsewhere = make_doc(author, title="Another")
    api = api_client_for(third)
    url = f"/api/v1/revisions/{r2.pk}/diff/"
    cases = {
        "": "against: required (the id of the other revision).",
        "?against=": "against: required (the id of the other revision).",
        f"?against={elsewhere.pk}": "against: not a revision of this document.",
        "?against=abc": "against: not a revision of this document.",
        "?against=99999999999999999999999": "against: not a revision of this document.",
    }
    for query, detail in cases.items():
        response = api.get(url + query)
        assert response.status_code == 400, query
        assert response.json()["detail"] == detail
    assert api.get(f"/api/v1/revisions/999999/diff/?against={r2.pk}").status_code == 404
    same = api.get(f"{url}?against={r2.pk}").json()
    assert same["added"] == same["removed"] == same["changed"] == 0


# --- the author's view ---------------------------------------------------------------------------


def test_doc_reviews_lists_submitted_reviews_of_every_revision_and_own_drafts(doc, review, author):
    submitted(review, verdict="request-changes")
    r2 = revise(author, doc[0])
    late = make_review(make_user("late"), r2)
    annotate(late, KV, text=REVISED, severity="nit")
    review_submit(actor=late.reviewer, review=late, verdict="approve")
    someone_elses_draft = make_review(make_user("drafting"), r2)
    mine = make_review(author, r2)

    listed = api_client_for(author).get(f"/api/v1/docs/{doc[0].pk}/reviews/")
    assert listed.status_code == 200
    body = {row["id"]: row for row in listed.json()}
    assert set(body) == {review.pk, late.pk, mine.pk}
    assert someone_elses_draft.pk not in body
    first = body[review.pk]
    assert (first["revision_number"], first["verdict"], first["reviewer"]) == (
        1,
        "request-changes",
        "reviewer",
    )
    assert first["open_counts"] == {"blocker": 1, "major": 0, "minor": 1, "nit": 0}
    assert body[late.pk]["open_counts"]["nit"] == 1
    assert body[late.pk]["verdict"] == "approve"
    assert body[mine.pk]["status"] == "draft"
    assert body[mine.pk]["verdict"] == ""
    # Resolving an issue takes it out of the open counts.
    kv = Annotation.objects.get(review=review, severity="blocker")
    api_client_for(author).patch(
        f"/api/v1/annotations/{kv.pk}/", {"status": "resolved"}, format="json"
    )
    again = {
        r["id"]: r for r in api_client_for(author).get(f"/api/v1/docs/{doc[0].pk}/reviews/").json()
    }
    assert again[review.pk]["open_counts"]["blocker"] == 0
    assert api_client_for(author).get("/api/v1/docs/999999/reviews/").status_code == 404


# --- the inbox -------------------------------------------------------------------------------------


def test_inbox_lists_marks_read_and_is_private(doc, review, author, reviewer, third):
    kv, router = submitted(review)
    api_client_for(author).post(
        f"/api/v1/annotations/{kv.pk}/replies/", {"body": "Fair."}, format="json"
    )
    revise(author, doc[0])  # orphans `router`

    mine = api_client_for(reviewer)
    listed = mine.get("/api/v1/inbox/").json()
    kinds = [item["kind"] for item in listed["results"]]
    assert sorted(kinds) == ["orphaned", "reply"]
    orphan = next(i for i in listed["results"] if i["kind"] == "orphaned")
    assert orphan["annotation"] == router.pk
    assert orphan["actor"] == "author"
    assert orphan["unread"]
    reply = next(i for i in listed["results"] if i["kind"] == "reply")
    assert reply["doc_title"] == doc[0].title
    assert reply["annotation"] == kv.pk

    authors = api_client_for(author).get("/api/v1/inbox/").json()["results"]
    assert [i["kind"] for i in authors] == ["review-submitted"]
    assert api_client_for(third).get("/api/v1/inbox/").json()["count"] == 0

    # Someone else's ids are ignored; marking twice changes nothing the second time.
    stranger = api_client_for(third).post(
        "/api/v1/inbox/read/", {"ids": [reply["id"]]}, format="json"
    )
    assert stranger.json() == {"changed": 0, "unread": 0}
    first = mine.post("/api/v1/inbox/read/", {"ids": [reply["id"]]}, format="json").json()
    assert first == {"changed": 1, "unread": 1}
    assert (
        mine.post("/api/v1/inbox/read/", {"ids": [reply["id"]]}, format="json").json()["changed"]
        == 0
    )
    assert [i["kind"] for i in mine.get("/api/v1/inbox/?unread=1").json()["results"]] == [
        "orphaned"
    ]
    assert mine.post("/api/v1/inbox/read/", {}, format="json").json() == {"changed": 1, "unread": 0}
    bad = mine.post("/api/v1/inbox/read/", {"ids": "all"}, format="json")
    assert bad.status_code == 400
    assert bad.json()["detail"].startswith("ids")


def test_orphan_notices_once_per_revision_and_not_for_your_own_revision(doc, review, author):
    _, router = submitted(review)
    revise(author, doc[0])
    from reviews.services.anchors import revision_anchors_write

    revision_anchors_write(revision=doc[0].revisions.order_by("-number").first())  # a replay
    assert InboxItem.objects.filter(kind="orphaned").count() == 1
    # A document author who annotates their own doc is not told about their own revision.
    self_review = make_review(author, doc[1])
    annotate(self_review, "Serve 2,000 concurrent streams per region")
    revise(author, doc[0], REVISED.replace("Serve 2,000", "Handle 9"))
    assert not InboxItem.objects.filter(recipient=author, kind="orphaned").exists()


def test_the_export_carries_the_verdict(review):
    submitted(review, verdict="request-changes")
    api = api_client_for(review.reviewer)
    data = api.get(f"/api/v1/reviews/{review.pk}/export/?format=json").json()
    assert data["review"]["verdict"] == "request-changes"
    markdown = api.get(f"/api/v1/reviews/{review.pk}/export/?format=markdown").content.decode()
    assert "Verdict: **Request changes**" in markdown
