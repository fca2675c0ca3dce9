"""Review-desk services: documents, revisions, reviews, annotations, ranks, statuses."""

import pytest
from django.db import IntegrityError, transaction

from common.exceptions import Forbidden
from reviews.exceptions import (
    RankTaken,
    ReviewLocked,
    ReviewsError,
    RevisionImmutable,
    SelectorInvalid,
)
from reviews.models import Annotation, AnnotationAnchor, ChecklistItem, DocRevision, Review
from reviews.selectors import revision_text
from reviews.services import (
    annotation_create,
    annotation_delete,
    annotation_update,
    doc_constraints_set,
    doc_revision_create,
    review_create,
    review_risks_rank,
    review_submit,
    review_update,
    selector_resolve,
)
from tests.factories import make_user
from tests.reviews.factories import CONSTRAINT, DOC, annotate, span_of
from textstore.models import Blob

pytestmark = pytest.mark.django_db

DUP = "Requests longer than the context window are rejected with HTTP 413 before they reach a GPU."
ROUTER = "The router terminates TLS, authenticates the tenant key"


# --- documents and revisions ------------------------------------------------------------------


def test_revisions_are_numbered_stored_as_deltas_and_immutable(author, doc):
    design, r1 = doc
    assert r1.number == 1
    assert revision_text(revision=r1) == DOC
    r2, created = doc_revision_create(
        actor=author, doc=design, body=DOC.replace("Zürich", "Frankfurt"), message="region"
    )
    assert created
    assert r2.number == 2
    assert r2.message == "region"
    assert Blob.objects.get(pk=r2.body_sha).base_id == r1.body_sha  # a delta on r1
    assert "Frankfurt" in revision_text(revision=r2)

    replay, created = doc_revision_create(
        actor=author, doc=design, body=DOC.replace("Zürich", "Frankfurt")
    )
    assert (replay.pk, created) == (r2.pk, False)
    with pytest.raises(RevisionImmutable):
        r2.message = "edited"
        r2.save()
    with pytest.raises(RevisionImmutable):
        DocRevision.objects.filter(pk=r2.pk).update(message="edited")
    with pytest.raises(RevisionImmutable):
        r2.delete()


def test_crlf_bodies_are_stored_with_lf(author, doc):
    revision, _ = doc_revision_create(actor=author, doc=doc.design, body="# T\r\n\r\nLine one.\r\n")
    assert revision_text(revision=revision) == "# T\n\nLine one.\n"


def test_only_the_author_adds_revisions_or_edits_constraints(doc, reviewer):
    with pytest.raises(Forbidden):
        doc_revision_create(actor=reviewer, doc=doc.design, body="# Mine now\n")
    with pytest.raises(Forbidden):
        doc_constraints_set(actor=reviewer, doc=doc.design, constraints=["nope"])
    assert DocRevision.objects.filter(doc=doc.design).count() == 1


def test_constraints_are_cleaned(author, doc):
    design = doc_constraints_set(
        actor=author, doc=doc.design, constraints=["  Fixed   batch size ", "", "Fixed batch size"]
    )
    assert design.constraints == ["Fixed batch size"]
    with pytest.raises(ReviewsError):
        doc_constraints_set(actor=author, doc=doc.design, constraints=["x" * 201])


# --- reviews ------------------------------------------------------------------------------------


def test_review_has_eight_checklist_rows_and_one_per_reviewer(doc, reviewer):
    review, created = review_create(actor=reviewer, revision=doc.revision)
    again, created_again = review_create(actor=reviewer, revision=doc.revision)
    assert created
    assert not created_again
    assert again.pk == review.pk
    assert [item.area for item in ChecklistItem.objects.filter(review=review)] == [
        "goals",
        "alternatives",
        "scale-cost",
        "failure-modes",
        "rollout-rollback",
        "observability",
        "security",
        "migration",
    ]
    with pytest.raises(IntegrityError), transaction.atomic():
        Review.objects.create(revision=doc.revision, reviewer=reviewer)


def test_checklist_and_summary_are_edited_until_submitted(review, reviewer, author):
    review_update(
        actor=reviewer,
        review=review,
        summary="Rollback is missing.",
        checklist=[
            {"area": "rollout-rollback", "status": "gap", "note": "no rollback plan"},
            {"area": "security", "status": "covered"},
        ],
    )
    items = {i.area: i for i in ChecklistItem.objects.filter(review=review)}
    assert (items["rollout-rollback"].status, items["rollout-rollback"].note) == (
        "gap",
        "no rollback plan",
    )
    assert items["security"].status == "covered"
    assert items["goals"].status == ""
    with pytest.raises(ReviewsError):
        review_update(actor=reviewer, review=review, checklist=[{"area": "vibes", "status": "gap"}])
    with pytest.raises(Forbidden):
        review_update(actor=author, review=review, summary="not mine")

    submitted, changed = review_submit(actor=reviewer, review=review)
    assert changed
    assert submitted.status == "submitted"
    assert submitted.submitted_at is not None
    again, changed_again = review_submit(actor=reviewer, review=review)
    assert not changed_again
    assert again.submitted_at == submitted.submitted_at
    with pytest.raises(ReviewLocked, match="Submitted reviews cannot be edited"):
        review_update(actor=reviewer, review=review, summary="late edit")
    assert Review.objects.get(pk=review.pk).summary == "Rollback is missing."


# --- selectors ------------------------------------------------------------------------------------


def test_selector_resolve_rules():
    text = "alpha beta gamma beta delta"
    assert selector_resolve(text=text, exact=None) is None
    assert selector_resolve(text=text, exact="gamma") == (11, 16)
    assert selector_resolve(text=text, exact=None, start=6, end=10) == (6, 10)
    assert selector_resolve(text=text, exact="beta", start=17, end=21) == (17, 21)
    assert selector_resolve(text=text, exact="beta", prefix="gamma ") == (17, 21)
    assert selector_resolve(text=text, exact="beta", suffix=" gamma") == (6, 10)
    for bad in (
        {"exact": "omega"},
        {"exact": "beta"},  # twice, no context
        {"exact": None, "start": 20, "end": 99},
        {"exact": None, "start": 5, "end": 5},
        {"exact": "beta", "start": 0, "end": 4},
        {"exact": None, "start": 3},
        {"exact": "  "},
    ):
        with pytest.raises(SelectorInvalid):
            selector_resolve(text=text, **bad)


def test_annotation_stores_selectors_derived_from_the_text(review):
    start, end = span_of(DOC, ROUTER)
    annotation = annotation_create(
        actor=review.reviewer,
        review=review,
        exact=ROUTER,
        prefix="client",  # the client's context is not trusted: it is re-derived
        suffix="",
        area="security",
        kind="question",
        severity="minor",
        body="Which cache?",
    )
    assert (annotation.start, annotation.end, annotation.exact) == (start, end, ROUTER)
    assert annotation.prefix == DOC[start - 48 : start]
    assert len(annotation.prefix) >= 32
    assert annotation.suffix == DOC[end : end + 48]
    assert len(annotation.suffix) >= 32
    assert annotation.heading_path == [
        "Design: token-streaming inference gateway",
        "Architecture",
        "Router",
    ]
    anchor = AnnotationAnchor.objects.get(annotation=annotation)
    assert (anchor.revision_id, anchor.status, anchor.start, anchor.end) == (
        review.revision_id,
        "exact",
        start,
        end,
    )


def test_quote_with_context_or_position_disambiguates(review):
    first, second = DOC.index(DUP), DOC.index(DUP, DOC.index(DUP) + 1)
    by_context = annotation_create(
        actor=review.reviewer,
        review=review,
        exact=DUP,
        prefix="- A prompt is longer than the model accepts. ",
        area="failure-modes",
        kind="already-considered",
        severity="nit",
        body="Good: rejected early.",
    )
    assert by_context.start == second
    by_position = annotation_create(
        actor=review.reviewer,
        review=review,
        start=first,
        end=first + len(DUP),
        area="scale-cost",
        kind="question",
        severity="nit",
        body="413 or 400?",
    )
    assert by_position.exact == DUP
    assert by_position.start == first


def test_whole_document_annotation(review):
    annotation = annotate(review, None, kind="missing", area="migration", body="No migration plan.")
    assert annotation.whole_document
    assert annotation.start is None
    assert annotation.exact == ""
    anchor = AnnotationAnchor.objects.get(annotation=annotation)
    assert anchor.status == "exact"
    assert anchor.start is None


def test_alternative_needs_tradeoff_and_constraint_needs_a_pinned_one(review):
    with pytest.raises(ReviewsError, match="tradeoff") as error:
        annotate(review, ROUTER, kind="alternative", body="Use Envoy.")
    assert error.value.field == "tradeoff"
    alt = annotate(review, ROUTER, kind="alternative", body="Use Envoy.", tradeoff="Less control.")
    assert alt.tradeoff == "Less control."
    assert alt.rank is None

    with pytest.raises(ReviewsError, match="pinned") as error:
        annotate(review, ROUTER, kind="constraint", body="Autoscaling?")
    assert error.value.field == "constraint"
    with pytest.raises(ReviewsError):
        annotate(review, ROUTER, kind="constraint", body="?", constraint="made up")
    by_text = annotate(review, ROUTER, kind="constraint", body="Fits.", constraint=CONSTRAINT)
    by_index = annotate(review, ROUTER, kind="constraint", body="Fits.", constraint=0)
    assert by_text.constraint == by_index.constraint == CONSTRAINT
    assert Annotation.objects.filter(review=review).count() == 3


def test_risks_get_ranks_in_order_and_collisions_are_refused(review):
    one = annotate(review, ROUTER)
    two = annotate(review, "Tenant keys are hashed at rest")
    assert (one.rank, two.rank) == (1, 2)
    question = annotate(review, ROUTER, kind="question")
    assert question.rank is None

    with pytest.raises(RankTaken):
        annotate(review, ROUTER, rank=1)
    with pytest.raises(RankTaken):
        annotation_update(actor=review.reviewer, annotation=two, changes={"rank": 1})
    with pytest.raises(ReviewsError, match="only risks"):
        annotation_update(actor=review.reviewer, annotation=question, changes={"rank": 3})
    assert [a.rank for a in Annotation.objects.filter(review=review).order_by("id")] == [
        1,
        2,
        None,
    ]

    assert review_risks_rank(actor=review.reviewer, review=review, order=[two.pk, one.pk])
    assert Annotation.objects.get(pk=two.pk).rank == 1
    assert Annotation.objects.get(pk=one.pk).rank == 2
    with pytest.raises(ReviewsError, match="every risk"):
        review_risks_rank(actor=review.reviewer, review=review, order=[two.pk])
    with pytest.raises(ReviewsError, match="every risk"):
        review_risks_rank(actor=review.reviewer, review=review, order=[two.pk, question.pk])

    # A question turned into a risk goes last; a risk turned into a question leaves the ranking.
    annotation_update(actor=review.reviewer, annotation=question, changes={"kind": "risk"})
    assert Annotation.objects.get(pk=question.pk).rank == 3
    annotation_update(actor=review.reviewer, annotation=two, changes={"kind": "question"})
    assert Annotation.objects.get(pk=two.pk).rank is None

    annotation_delete(actor=review.reviewer, annotation=Annotation.objects.get(pk=one.pk))
    assert Annotation.objects.get(pk=question.pk).rank == 1  # ranks close up


def test_status_changes_by_doc_author_or_annotation_author_only(review, author):
    annotation = annotate(review, ROUTER)
    review_submit(actor=review.reviewer, review=review)
    outsider = make_user("outsider")
    with pytest.raises(Forbidden):
        annotation_update(actor=outsider, annotation=annotation, changes={"status": "dropped"})

    changed = annotation_update(actor=author, annotation=annotation, changes={"status": "resolved"})
    assert changed.status == "resolved"
    assert changed.status_changed_by == author
    changed = annotation_update(
        actor=review.reviewer, annotation=annotation, changes={"status": "open"}
    )
    assert changed.status == "open"

    # The rank is frozen once submitted, even for the reviewer; nothing half-written. (Its
    # author may still correct the content: tests/reviews/test_threads_services.py.)
    with pytest.raises(ReviewLocked):
        annotation_update(
            actor=review.reviewer,
            annotation=annotation,
            changes={"status": "dropped", "body": "rewritten", "rank": 2},
        )
    fresh = Annotation.objects.get(pk=annotation.pk)
    assert (fresh.status, fresh.body) == ("open", annotation.body)
    with pytest.raises(ReviewLocked):
        annotate(review, ROUTER)


def test_annotations_only_by_the_reviewer(review, author):
    with pytest.raises(Forbidden):
        annotation_create(
            actor=author,
            review=review,
            area="goals",
            kind="question",
            severity="nit",
            body="Mine?",
        )
    assert not Annotation.objects.filter(review=review).exists()


def test_a_new_risk_takes_its_place_by_severity_worst_first():
    """Issue 33: "Risks, worst first" put a new blocker at #2, below a ranked minor."""
    from reviews.models import Annotation
    from reviews.services import annotation_create, annotation_update
    from tests.reviews.factories import make_doc, make_review

    author, reviewer = make_user("author"), make_user("reviewer")
    _, r1 = make_doc(author)
    review = make_review(reviewer, r1)

    def risk(severity: str, body: str) -> Annotation:
        return annotation_create(
            actor=reviewer,
            review=review,
            area="failure-modes",
            kind="risk",
            severity=severity,
            body=body,
        )

    minor = risk("minor", "a minor one")
    major = risk("major", "a major one")  # before the minor
    blocker = risk("blocker", "a new blocker")  # lands at #1
    nit = risk("nit", "a nit")  # last
    second_major = risk("major", "another major")  # after the first major, before the minor
    ranks = dict(Annotation.objects.filter(review=review).values_list("body", "rank"))
    assert ranks == {
        blocker.body: 1,
        major.body: 2,
        second_major.body: 3,
        minor.body: 4,
        nit.body: 5,
    }
    question = annotation_create(
        actor=reviewer, review=review, area="goals", kind="question", severity="blocker", body="?"
    )
    annotation_update(actor=reviewer, annotation=question, changes={"kind": "risk"})
    question.refresh_from_db()
    assert question.rank == 2  # a blocker again: after the first, before the majors
    assert Annotation.objects.get(pk=major.pk).rank == 3
