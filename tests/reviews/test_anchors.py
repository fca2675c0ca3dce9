"""End to end: a new revision (service or API) enqueues `reviews.revision_reanchor` after commit,
and the task stores where every annotation of earlier revisions landed.

The algorithm's own edit scenarios are in test_anchoring.py; these check the path around it:
which annotations are mapped from which revision, what is stored, idempotency, re-attach.
"""

import pytest

from reviews.models import AnnotationAnchor
from reviews.services import annotation_reattach, doc_revision_create
from reviews.services.anchors import revision_anchors_write
from reviews.tasks import revision_reanchor
from tests.factories import api_client_for, make_user
from tests.reviews.factories import DOC, annotate, make_doc, make_review, span_of

pytestmark = pytest.mark.django_db

KV = "Each decode replica holds a 40 GB paged KV cache and evicts the least-recently-used sequences"
TENANT = "Tenant keys are hashed at rest and compared in constant time."
ROLLBACK = "Rollback flips\nthe flag back to the legacy proxy"
SCHEDULER_DOWN = (
    "- The scheduler is down: the router sheds new requests with HTTP 503 and keeps streaming the\n"
    "  ones in flight.\n"
)


@pytest.fixture
def setup(author):
    doc, r1 = make_doc(author)
    review = make_review(make_user("reviewer"), r1)
    return doc, r1, review


def anchor_in(annotation, revision) -> AnnotationAnchor:
    return AnnotationAnchor.objects.get(annotation=annotation, revision=revision)


def move_kv_paragraph(text: str) -> str:
    """Move the KV-cache section above the prefill/decode section."""
    start = text.index("### KV cache")
    end = text.index("## Capacity and cost")
    section = text[start:end]
    text = text[:start] + text[end:]
    at = text.index("### Prefill and decode pools")
    return text[:at] + section + text[at:]


def test_new_revision_via_service_runs_the_task_on_commit(
    setup, author, django_capture_on_commit_callbacks
):
    doc, r1, review = setup
    moved = annotate(review, KV, area="scale-cost")
    deleted = annotate(review, SCHEDULER_DOWN.strip(), area="failure-modes")
    reworded = annotate(review, TENANT, area="security")
    whole = annotate(review, None, kind="missing", area="migration", body="No migration plan.")

    new_text = (
        move_kv_paragraph(DOC)
        .replace(SCHEDULER_DOWN, "")
        .replace(TENANT, "Tenant keys are hashed at rest and always compared in constant time.")
    )
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        r2, created = doc_revision_create(actor=author, doc=doc, body=new_text, message="moves")
    assert created
    assert callbacks  # the task is enqueued on commit (textstore adds its own)

    landed = anchor_in(moved, r2)
    assert landed.status == "moved"
    assert new_text[landed.start : landed.end] == KV
    assert landed.start < new_text.index("### Prefill")
    assert anchor_in(deleted, r2).status == "orphaned"
    assert anchor_in(deleted, r2).start is None
    fuzzy = anchor_in(reworded, r2)
    assert fuzzy.status == "fuzzy"
    assert 0.6 < fuzzy.score < 1.0
    assert "Tenant keys are hashed" in new_text[fuzzy.start : fuzzy.end]
    assert anchor_in(whole, r2).status == "exact"
    assert anchor_in(whole, r2).start is None

    # Running the task again stores nothing new.
    assert revision_reanchor.delay(r2.pk).get() == {"revision": r2.pk, "stored": 0}
    assert AnnotationAnchor.objects.filter(revision=r2).count() == 4


def test_new_revision_via_api_triggers_reanchoring(
    setup, author, django_capture_on_commit_callbacks
):
    doc, r1, review = setup
    annotation = annotate(review, KV, area="scale-cost")
    api = api_client_for(author)
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(
            f"/api/v1/docs/{doc.pk}/revisions/",
            {"body": "# Preface\n\nA new first paragraph.\n\n" + DOC, "message": "preface"},
            format="json",
        )
    assert response.status_code == 201, response.json()
    r2 = response.json()["id"]
    anchors = api_client_for(review.reviewer).get(f"/api/v1/annotations/{annotation.pk}/anchors/")
    assert anchors.status_code == 200
    body = anchors.json()
    # Untouched by the revision: still `exact`, its offsets shifted by the new preface.
    assert [(a["revision"], a["status"]) for a in body] == [(r1.pk, "exact"), (r2, "exact")]
    assert body[1]["start"] == body[0]["start"] + len("# Preface\n\nA new first paragraph.\n\n")
    assert body[1]["score"] == 1.0


def test_a_look_alike_elsewhere_does_not_capture_a_deleted_passage(
    setup, author, django_capture_on_commit_callbacks
):
    doc, r1, review = setup
    # The first of two identical sentences (API section) is annotated, then deleted; the
    # other one (failure modes) stays. The annotation must not jump to it.
    dup = "Requests longer than the context window are rejected with HTTP 413 before they reach a GPU."
    start = DOC.index(dup)
    annotation = annotate(review, None, start=start, end=start + len(dup), area="scale-cost")
    new_text = DOC.replace(dup + "\n", "", 1)
    assert new_text.count(dup) == 1
    with django_capture_on_commit_callbacks(execute=True):
        r2, _ = doc_revision_create(actor=author, doc=doc, body=new_text)
    assert anchor_in(annotation, r2).status == "orphaned"


def test_annotations_chain_from_their_latest_anchored_revision(
    setup, author, django_capture_on_commit_callbacks
):
    doc, r1, review = setup
    annotation = annotate(review, TENANT, area="security")
    r2_text = DOC.replace(TENANT, "")
    r3_text = DOC  # the passage comes back
    r4_text = "# Preface\n\n" + DOC
    with django_capture_on_commit_callbacks(execute=True):
        r2, _ = doc_revision_create(actor=author, doc=doc, body=r2_text)
    with django_capture_on_commit_callbacks(execute=True):
        r3, _ = doc_revision_create(actor=author, doc=doc, body=r3_text)
    with django_capture_on_commit_callbacks(execute=True):
        r4, _ = doc_revision_create(actor=author, doc=doc, body=r4_text)
    assert anchor_in(annotation, r2).status == "orphaned"
    # r3 is mapped from r1 (the last revision where it was anchored), not from the orphan.
    assert anchor_in(annotation, r3).status == "exact"
    landed = anchor_in(annotation, r4)
    assert landed.status == "exact"  # a preface added above leaves the passage untouched
    assert r4_text[landed.start : landed.end] == TENANT


def test_fuzzy_chains_stay_fuzzy_against_the_original_quote(
    setup, author, django_capture_on_commit_callbacks
):
    doc, r1, review = setup
    annotation = annotate(review, TENANT, area="security")
    reworded = "Tenant keys are hashed at rest and always compared in constant time."
    r2_text = DOC.replace(TENANT, reworded)
    with django_capture_on_commit_callbacks(execute=True):
        r2, _ = doc_revision_create(actor=author, doc=doc, body=r2_text)
    with django_capture_on_commit_callbacks(execute=True):
        r3, _ = doc_revision_create(actor=author, doc=doc, body="# Preface\n\n" + r2_text)
    in_r2, in_r3 = anchor_in(annotation, r2), anchor_in(annotation, r3)
    assert in_r2.status == "fuzzy"
    # Unchanged since r2, so it moved verbatim from r2 — but it is not the original quote.
    assert in_r3.status == "fuzzy"
    assert in_r3.score == in_r2.score
    assert in_r3.start == in_r2.start + len("# Preface\n\n")


def test_annotation_on_an_older_revision_is_anchored_onto_later_ones(
    setup, author, django_capture_on_commit_callbacks
):
    doc, r1, review = setup
    with django_capture_on_commit_callbacks(execute=True):
        r2, _ = doc_revision_create(actor=author, doc=doc, body="# Preface\n\n" + DOC)
    with django_capture_on_commit_callbacks(execute=True):
        annotation = annotate(review, KV, area="scale-cost")  # review of r1, made after r2
    assert anchor_in(annotation, r2).status == "exact"


def test_an_orphan_reattached_by_hand_and_later_revisions_follow(
    setup, author, django_capture_on_commit_callbacks
):
    doc, r1, review = setup
    annotation = annotate(review, ROLLBACK, area="rollout-rollback")
    r2_text = DOC.replace(
        "Rollback flips\nthe flag back to the legacy proxy; in-flight streams finish on the gateway.",
        "To undo a region we switch its DNS back; streams in flight are cut.",
    )
    with django_capture_on_commit_callbacks(execute=True):
        r2, _ = doc_revision_create(actor=author, doc=doc, body=r2_text)
    with django_capture_on_commit_callbacks(execute=True):
        r3, _ = doc_revision_create(actor=author, doc=doc, body="# Preface\n\n" + r2_text)
    assert anchor_in(annotation, r2).status == "orphaned"
    assert anchor_in(annotation, r3).status == "orphaned"

    start, end = span_of(r2_text, "To undo a region we switch its DNS back")
    with django_capture_on_commit_callbacks(execute=True):
        anchor = annotation_reattach(
            actor=review.reviewer, annotation=annotation, revision=r2, start=start, end=end
        )
    assert anchor.manual
    assert anchor.status == "reattached"
    assert (anchor.start, anchor.end) == (start, end)
    # r3 is recomputed from the re-attached passage, which is now what it is compared with:
    # the preface above leaves it untouched.
    follow = anchor_in(annotation, r3)
    assert follow.status == "exact"
    assert not follow.manual
    assert follow.start == start + len("# Preface\n\n")


def test_anchoring_a_revision_fills_earlier_gaps_first(setup, author):
    doc, r1, review = setup
    annotation = annotate(review, KV, area="scale-cost")
    # Saved inside the test transaction: the on-commit task does not run here.
    r2, _ = doc_revision_create(actor=author, doc=doc, body="# A\n\n" + DOC)
    r3, _ = doc_revision_create(actor=author, doc=doc, body="# A\n\n# B\n\n" + DOC)
    assert not AnnotationAnchor.objects.filter(revision__in=[r2, r3]).exists()
    assert revision_anchors_write(revision=r3) == 2
    assert anchor_in(annotation, r2).status == "exact"
    assert anchor_in(annotation, r3).status == "exact"


def test_untouched_passages_stay_exact_when_the_revision_edits_around_them(
    setup, author, django_capture_on_commit_callbacks
):
    # Issue #36: a revision that adds a preface, rewords one sentence between two annotated
    # passages and moves a section leaves the two passages it did not touch `exact` (where
    # the diff keeps them, offsets shifted), and only the passage that changed place `moved`.
    doc, r1, review = setup
    first = annotate(review, ROLLBACK, area="rollout-rollback")
    second = annotate(review, SCHEDULER_DOWN.strip(), area="failure-modes")
    moved = annotate(review, KV, area="scale-cost")
    new_text = "# Preface\n\nWhy this document changed.\n\n" + move_kv_paragraph(DOC).replace(
        TENANT, "Tenant keys are hashed at rest and always compared in constant time."
    )
    with django_capture_on_commit_callbacks(execute=True):
        r2, _ = doc_revision_create(actor=author, doc=doc, body=new_text)
    for annotation in (first, second):
        landed = anchor_in(annotation, r2)
        assert landed.status == "exact", annotation.exact
        assert new_text[landed.start : landed.end] == annotation.exact
        assert landed.start != annotation.start  # shifted: the old rule said `moved`
    landed = anchor_in(moved, r2)
    assert landed.status == "moved"
    assert new_text[landed.start : landed.end] == KV


def test_a_reattach_through_the_api_is_stored_and_listed_as_reattached(
    setup, author, django_capture_on_commit_callbacks
):
    doc, r1, review = setup
    annotation = annotate(review, ROLLBACK, area="rollout-rollback")
    r2_text = DOC.replace(
        "Rollback flips\nthe flag back to the legacy proxy; in-flight streams finish on the gateway.",
        "To undo a region we switch its DNS back; streams in flight are cut.",
    )
    with django_capture_on_commit_callbacks(execute=True):
        r2, _ = doc_revision_create(actor=author, doc=doc, body=r2_text)
    assert anchor_in(annotation, r2).status == "orphaned"
    start, end = span_of(r2_text, "To undo a region we switch its DNS back")
    api = api_client_for(review.reviewer)
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(
            f"/api/v1/annotations/{annotation.pk}/reattach/",
            {"revision": r2.pk, "position": {"start": start, "end": end}},
            format="json",
        )
    assert response.status_code == 200, response.json()
    assert (response.json()["status"], response.json()["manual"]) == ("reattached", True)
    listed = api.get(f"/api/v1/annotations/{annotation.pk}/anchors/").json()
    assert [(a["revision"], a["status"], a["start"]) for a in listed] == [
        (r1.pk, "exact", annotation.start),
        (r2.pk, "reattached", start),
    ]
