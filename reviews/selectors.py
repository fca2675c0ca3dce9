"""Reads of the review desk, always scoped to the requesting user.

Who sees what: design documents and their revisions are visible to every signed-in account (a
practice desk: anyone may review any document). A draft review — and everything in it — is
visible only to its reviewer; a submitted review to every signed-in account. Anything a user may
not see raises NotFound, exactly like a missing id.
"""

from dataclasses import dataclass
from typing import Any

from django.db.models import Count, Max, OuterRef, Prefetch, Q, QuerySet, Subquery

from common.auth import Viewer
from common.selectors import object_get_or_not_found, object_id_parse
from questionbank.models import Question
from questionbank.selectors import question_by_slug
from textstore.selectors import blob_read

from .exceptions import NotFound, ReviewsError
from .models import Annotation, AnnotationAnchor, ChecklistItem, DesignDoc, DocRevision, Review

User = Viewer


def _review_visible(user: User) -> Q:
    return Q(reviewer=user) | Q(status=Review.Status.SUBMITTED)


@dataclass(frozen=True)
class DocDetail:
    """A document with its revisions, oldest first."""

    doc: DesignDoc
    revisions: list[DocRevision]

    @property
    def latest(self) -> DocRevision | None:
        return self.revisions[-1] if self.revisions else None


@dataclass(frozen=True)
class ReviewDetail:
    """A review with its checklist, the checklist's coverage counts and its annotations (each
    with its anchors prefetched)."""

    review: Review
    checklist: list[ChecklistItem]
    coverage: dict[str, int]
    annotations: list[Annotation]


# --- documents --------------------------------------------------------------------------------


def doc_list_visible(*, user: User) -> QuerySet[DesignDoc]:
    """Every document, for a signed-in user, with its revision count, latest revision number
    and the number of reviews the user can see (submitted ones and their own drafts)."""
    if not user.is_authenticated:
        return DesignDoc.objects.none()
    latest = DocRevision.objects.filter(doc=OuterRef("pk")).order_by("-number").values("pk")[:1]
    return (
        DesignDoc.objects.select_related("author", "question")
        .annotate(
            revision_count=Count("revisions", distinct=True),
            latest_number=Max("revisions__number"),
            latest_revision_id=Subquery(latest),
            review_count=Count(
                "revisions__reviews",
                filter=Q(revisions__reviews__reviewer=user)
                | Q(revisions__reviews__status=Review.Status.SUBMITTED),
                distinct=True,
            ),
        )
        .order_by("-created_at", "-id")
    )


def doc_list_for_question(*, user: User, question: Any) -> QuerySet[DesignDoc]:
    """Documents tied to the question; for the design-review question, every practice document
    (they are written to be reviewed)."""
    docs = doc_list_visible(user=user)
    condition = Q(question=question)
    if getattr(question, "slug", None) == "review-design-doc":
        condition |= Q(practice=True)
    return docs.filter(condition)


def question_from_slug(slug: str | None) -> Question | None:
    """The question a document is tied to, from a client's slug (pages and API alike): None for
    none, a 400 on `question` for an unknown one."""
    try:
        return question_by_slug(slug=slug)
    except NotFound:
        raise ReviewsError(f"question: unknown question {slug!r}.", field="question") from None


def doc_get_for_user(*, user: User, doc_id: Any) -> DesignDoc:
    if not user.is_authenticated:
        raise NotFound
    return object_get_or_not_found(
        DesignDoc.objects.select_related("author", "question"), pk=object_id_parse(doc_id)
    )


def revision_list(*, doc: DesignDoc) -> QuerySet[DocRevision]:
    """A document's revisions, oldest first, with their authors (one query)."""
    return DocRevision.objects.filter(doc=doc).select_related("author").order_by("number")


def revision_in_doc(*, doc: DesignDoc, revision_id: Any) -> DocRevision:
    return object_get_or_not_found(
        DocRevision.objects.select_related("author"), pk=object_id_parse(revision_id), doc=doc
    )


def revision_get_for_user(*, user: User, revision_id: Any) -> DocRevision:
    if not user.is_authenticated:
        raise NotFound
    return object_get_or_not_found(
        DocRevision.objects.select_related("doc", "doc__author", "doc__question", "author"),
        pk=object_id_parse(revision_id),
    )


def doc_detail(*, doc: DesignDoc) -> DocDetail:
    """The document with its revisions (one query)."""
    return DocDetail(doc=doc, revisions=list(revision_list(doc=doc)))


def revision_text(*, revision: DocRevision) -> str:
    """The revision's Markdown (read back from textstore, SHA-256 verified)."""
    return blob_read(sha=revision.body_sha)


# --- reviews ----------------------------------------------------------------------------------


def _reviews() -> QuerySet[Review]:
    return Review.objects.select_related(
        "reviewer", "revision", "revision__doc", "revision__doc__author", "revision__doc__question"
    )


def review_get_for_user(*, user: User, review_id: Any) -> Review:
    """The review if the user may see it: their own, or a submitted one; else NotFound."""
    if not user.is_authenticated:
        raise NotFound
    return object_get_or_not_found(
        _reviews().filter(_review_visible(user)), pk=object_id_parse(review_id)
    )


def review_list_for_doc(*, user: User, doc: DesignDoc) -> QuerySet[Review]:
    """The reviews of the document the user can see, newest first."""
    if not user.is_authenticated:
        return Review.objects.none()
    return (
        _reviews()
        .filter(_review_visible(user), revision__doc=doc)
        .annotate(annotation_count=Count("annotations"))
        .order_by("-created_at", "-id")
    )


def review_list_visible(*, user: User) -> QuerySet[Review]:
    if not user.is_authenticated:
        return Review.objects.none()
    return _reviews().filter(_review_visible(user))


def review_list_for_user(*, user: User) -> QuerySet[Review]:
    """The user's own reviews (drafts and submitted), newest first."""
    if not user.is_authenticated:
        return Review.objects.none()
    return (
        _reviews()
        .filter(reviewer=user)
        .annotate(annotation_count=Count("annotations"))
        .order_by("-created_at", "-id")
    )


def checklist_list(*, review: Review) -> list[ChecklistItem]:
    return list(ChecklistItem.objects.filter(review=review).order_by("position"))


def checklist_coverage(items: list[ChecklistItem]) -> dict[str, int]:
    """Counts per checklist status: covered, gap, na, unset (the chart's data)."""
    counts = {"covered": 0, "gap": 0, "na": 0, "unset": 0}
    for item in items:
        counts[item.status or "unset"] += 1
    return counts


def review_detail(*, review: Review) -> ReviewDetail:
    """The review with its checklist, coverage and annotations with anchors (three queries)."""
    checklist = checklist_list(review=review)
    return ReviewDetail(
        review=review,
        checklist=checklist,
        coverage=checklist_coverage(checklist),
        annotations=list(annotation_list(review=review)),
    )


# --- annotations ------------------------------------------------------------------------------


def annotation_list(*, review: Review) -> QuerySet[Annotation]:
    """The review's annotations with their anchors in every revision (two queries)."""
    return (
        Annotation.objects.filter(review=review)
        .select_related("author", "status_changed_by")
        .prefetch_related(
            Prefetch(
                "anchors",
                queryset=AnnotationAnchor.objects.select_related("revision").order_by(
                    "revision__number"
                ),
            )
        )
        .order_by("id")
    )


def annotation_get_for_user(*, user: User, annotation_id: Any) -> Annotation:
    """The annotation if the user may see its review; else NotFound."""
    if not user.is_authenticated:
        raise NotFound
    return object_get_or_not_found(
        Annotation.objects.select_related(
            "author",
            "status_changed_by",
            "review",
            "review__reviewer",
            "revision",
            "revision__doc",
        ).filter(Q(review__reviewer=user) | Q(review__status=Review.Status.SUBMITTED)),
        pk=object_id_parse(annotation_id),
    )


def anchor_list(*, annotation: Annotation) -> QuerySet[AnnotationAnchor]:
    """Where the annotation landed in each revision, in revision order (one query)."""
    return (
        AnnotationAnchor.objects.filter(annotation=annotation)
        .select_related("revision")
        .order_by("revision__number")
    )
