"""Query counts of the document page, the review page and the thread endpoints do not grow
with replies, reviews and revisions (docs/design.md, Targets; issue #15)."""

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from reviews.services import (
    annotation_create,
    annotation_update,
    doc_revision_create,
    reply_create,
    reply_update,
    review_submit,
)
from reviews.services.anchors import revision_anchors_write
from tests.factories import api_client_for, make_user
from tests.reviews.factories import DOC, make_doc, make_review
from tests.reviews.threads_fixtures import KV, ROUTER

pytestmark = pytest.mark.django_db

PASSAGES = [KV, ROUTER, "Serve 2,000 concurrent streams per region"]


def build(*, revisions: int, reviews: int, replies: int):
    """A document with `revisions` revisions, `reviews` submitted reviews spread over them
    (three annotations each, one edited), `replies` replies under every annotation (one
    edited), every annotation anchored on every later revision."""
    author = make_user()
    doc, r1 = make_doc(author)
    texts = {r1.pk: DOC}
    all_revisions = [r1]
    for number in range(2, revisions + 1):
        body = "# Preface\n\n" * (number - 1) + DOC
        revision, _ = doc_revision_create(actor=author, doc=doc, body=body)
        texts[revision.pk] = body
        all_revisions.append(revision)
    first_review = None
    for index in range(reviews):
        revision = all_revisions[index % len(all_revisions)]
        review = make_review(make_user(), revision)
        first_review = first_review or review
        annotations = []
        for passage_index, passage in enumerate(PASSAGES):
            start = texts[revision.pk].index(passage)
            annotations.append(
                annotation_create(
                    actor=review.reviewer,
                    review=review,
                    start=start,
                    end=start + len(passage),
                    area="scale-cost",
                    kind="risk" if passage_index == 0 else "question",
                    severity=["blocker", "major", "nit"][passage_index],
                    body=f"Comment {index}.{passage_index}",
                )
            )
        review_submit(actor=review.reviewer, review=review, verdict="request-changes")
        annotation_update(
            actor=review.reviewer, annotation=annotations[0], changes={"body": "Edited."}
        )
        for annotation in annotations:
            for n in range(replies):
                reply = reply_create(
                    actor=author if n % 2 == 0 else review.reviewer,
                    annotation=annotation,
                    body=f"**Reply** {n}",
                )
                if n == 0:
                    reply_update(actor=author, reply=reply, body="Edited reply")
    revision_anchors_write(revision=all_revisions[-1])
    return author, doc, first_review, all_revisions


def count(fetch) -> int:
    fetch()  # warm caches (text store, sessions) so both sides start alike
    with CaptureQueriesContext(connection) as captured:
        response = fetch()
    assert response.status_code == 200, response.content[:300]
    return len(captured.captured_queries)


def test_doc_page_review_page_and_thread_apis_do_not_grow():
    counts = []
    for size in (
        {"revisions": 2, "reviews": 2, "replies": 1},
        {"revisions": 5, "reviews": 7, "replies": 5},
    ):
        author, doc, review, revisions = build(**size)
        client = Client()
        client.force_login(author)
        api = api_client_for(author)
        page = client.get(f"/reviews/d/{doc.pk}/").content.decode()
        # Everything the page promises is on it, at both sizes.
        assert page.count('class="doc-review"') == size["reviews"]
        assert page.count('class="reply"') >= size["replies"]
        annotation = review.annotations.order_by("id").first()
        latest, first = revisions[-1], revisions[0]
        counts.append(
            {
                "doc page": count(
                    lambda doc=doc, client=client: client.get(f"/reviews/d/{doc.pk}/")
                ),
                "review page": count(
                    lambda review=review, client=client: client.get(f"/reviews/r/{review.pk}/")
                ),
                "review page, latest": count(
                    lambda review=review, client=client, latest=latest: client.get(
                        f"/reviews/r/{review.pk}/?r={latest.number}"
                    )
                ),
                "diff page": count(
                    lambda doc=doc, client=client, first=first, latest=latest: client.get(
                        f"/reviews/d/{doc.pk}/diff/?a={first.pk}&b={latest.pk}"
                    )
                ),
                "inbox page": count(lambda client=client: client.get("/reviews/inbox/")),
                "doc reviews API": count(
                    lambda api=api, doc=doc: api.get(f"/api/v1/docs/{doc.pk}/reviews/")
                ),
                "replies API": count(
                    lambda api=api, a=annotation: api.get(f"/api/v1/annotations/{a.pk}/replies/")
                ),
                "diff API": count(
                    lambda api=api, first=first, latest=latest: api.get(
                        f"/api/v1/revisions/{latest.pk}/diff/?against={first.pk}"
                    )
                ),
                "inbox API": count(lambda api=api: api.get("/api/v1/inbox/")),
            }
        )
    print("queries, small vs large:", counts)
    assert counts[0] == counts[1]
