"""Query counts of the review page and the review-desk API do not grow with the data
(docs/design.md, Targets): 5 vs 100 annotations, 2 vs 6 revisions, 2 vs 10 documents."""

import re

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from reviews.services import annotation_create, doc_revision_create, review_submit
from reviews.services.anchors import revision_anchors_write
from tests.factories import api_client_for, make_user
from tests.reviews.factories import DOC, make_doc, make_review

pytestmark = pytest.mark.django_db

WORDS = [m.span() for m in re.finditer(r"[A-Za-z]{5,}", DOC)]
KINDS = ["risk", "missing", "question", "already-considered"]


def build(n_annotations: int, n_revisions: int = 2, *, submit: bool = False):
    """A reviewed doc with `n_annotations` passages annotated and `n_revisions` revisions,
    every annotation anchored on every revision."""
    author = make_user()
    doc, r1 = make_doc(author)
    review = make_review(make_user(), r1)
    annotations = []
    for index in range(n_annotations):
        start, end = WORDS[(index * 7) % len(WORDS)]
        annotations.append(
            annotation_create(
                actor=review.reviewer,
                review=review,
                start=start,
                end=end,
                area="scale-cost",
                kind=KINDS[index % len(KINDS)],
                severity="major",
                body=f"Comment {index}",
            )
        )
    for number in range(2, n_revisions + 1):
        revision, _ = doc_revision_create(
            actor=author, doc=doc, body="# Preface\n\n" * (number - 1) + DOC
        )
    if n_revisions > 1:
        revision_anchors_write(revision=revision)
    if submit:
        review_submit(actor=review.reviewer, review=review)
    return review, annotations


def count(fetch) -> int:
    fetch()  # warm caches (text store, sessions) so both sides start alike
    with CaptureQueriesContext(connection) as captured:
        response = fetch()
    assert response.status_code == 200, response.content[:300]
    return len(captured.captured_queries)


def test_review_page_queries_do_not_grow_with_annotations(settings):
    settings.REVIEW_CARDS_WINDOW = 30
    counts = []
    for n in (5, 100):
        review, annotations = build(n)
        client = Client()
        client.force_login(review.reviewer)
        revision = annotations[0].anchors.order_by("-revision_id").first().revision.number
        html = client.get(f"/reviews/r/{review.pk}/").content.decode()
        # Every annotation is highlighted; the first cards are on the page, the rest load later.
        assert len(set(re.findall(r'<mark[^>]* data-ann="(\d+)', html))) == n
        shown = min(n, settings.REVIEW_CARDS_WINDOW)
        assert html.count('class="ann ann-') == shown
        more = client.get(f"/reviews/r/{review.pk}/cards/?offset={shown}").content.decode()
        assert more.count('class="ann ann-') == min(n - shown, settings.REVIEW_CARDS_WINDOW)
        counts.append(
            (
                count(lambda review=review, client=client: client.get(f"/reviews/r/{review.pk}/")),
                count(
                    lambda review=review, client=client, revision=revision: client.get(
                        f"/reviews/r/{review.pk}/?r={revision}"
                    )
                ),
                count(
                    lambda review=review, client=client: client.get(
                        f"/reviews/r/{review.pk}/cards/?offset=2"
                    )
                ),
            )
        )
    print("review page queries (r1, r2, cards) for 5 and 100 annotations:", counts)
    assert counts[0] == counts[1]


def test_annotation_and_review_api_queries_do_not_grow_with_annotations():
    counts = []
    for n in (5, 100):
        review, annotations = build(n)
        api = api_client_for(review.reviewer)
        listed = api.get(f"/api/v1/reviews/{review.pk}/annotations/").json()
        assert len(listed) == n
        assert all(len(a["anchors"]) == 2 for a in listed)
        counts.append(
            (
                count(
                    lambda api=api, review=review: api.get(
                        f"/api/v1/reviews/{review.pk}/annotations/"
                    )
                ),
                count(lambda api=api, review=review: api.get(f"/api/v1/reviews/{review.pk}/")),
                count(
                    lambda api=api, a=annotations[-1]: api.get(
                        f"/api/v1/annotations/{a.pk}/anchors/"
                    )
                ),
            )
        )
    print("annotations list, review detail, anchors for 5 and 100 annotations:", counts)
    assert counts[0] == counts[1]


def test_export_queries_do_not_grow_with_annotations():
    counts = []
    for n in (5, 100):
        review, _ = build(n, submit=True)
        api = api_client_for(review.reviewer)
        counts.append(
            count(
                lambda api=api, review=review: api.get(
                    f"/api/v1/reviews/{review.pk}/export/?format=json"
                )
            )
        )
    print("export queries for 5 and 100 annotations:", counts)
    assert counts[0] == counts[1]


def test_anchors_and_doc_api_queries_do_not_grow_with_revisions():
    counts = []
    for revisions in (2, 6):
        review, annotations = build(5, revisions)
        api = api_client_for(review.reviewer)
        doc_id = review.revision.doc_id
        anchors = api.get(f"/api/v1/annotations/{annotations[0].pk}/anchors/").json()
        assert len(anchors) == revisions
        assert len(api.get(f"/api/v1/docs/{doc_id}/").json()["revisions"]) == revisions
        counts.append(
            (
                count(
                    lambda api=api, a=annotations[0]: api.get(
                        f"/api/v1/annotations/{a.pk}/anchors/"
                    )
                ),
                count(lambda api=api, doc_id=doc_id: api.get(f"/api/v1/docs/{doc_id}/")),
            )
        )
    print("anchors API, doc API for 2 and 6 revisions:", counts)
    assert counts[0] == counts[1]


def test_doc_list_and_doc_page_queries_do_not_grow():
    user = make_user("reader")
    client = Client()
    client.force_login(user)
    api = api_client_for(user)
    counts = []
    seeded = len(api.get("/api/v1/docs/?page_size=100").json()["results"])  # practice docs
    for docs in (2, 10):
        while len(api.get("/api/v1/docs/?page_size=100").json()["results"]) < docs + seeded:
            review, _ = build(3)
            review_submit(actor=review.reviewer, review=review)
        doc_id = review.revision.doc_id
        counts.append(
            (
                count(lambda: api.get("/api/v1/docs/")),
                count(lambda: client.get("/reviews/")),
                count(lambda doc_id=doc_id: client.get(f"/reviews/d/{doc_id}/")),
            )
        )
    print("doc list API, list page, doc page for 2 and 10 docs:", counts)
    assert counts[0] == counts[1]
