"""Reads of the review desk, always scoped to the requesting user.

Who sees what: design documents and their revisions are visible to every signed-in account (a
practice desk: anyone may review any document). A draft review — and everything in it — is
visible only to its reviewer; a submitted review to every signed-in account. Anything a user may
not see raises NotFound, exactly like a missing id.
"""

from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Count, Max, OuterRef, Prefetch, Q, QuerySet, Subquery

from common.selectors import object_id_parse
from textstore.selectors import blob_read

from .exceptions import NotFound
from .models import Annotation, AnnotationAnchor, ChecklistItem, DesignDoc, DocRevision, Review

User = AbstractBaseUser | AnonymousUser


def _review_visible(user: User) -> Q:
    return Q(reviewer=user) | Q(status=Review.Status.SUBMITTED)


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


def doc_get_for_user(*, user: User, doc_id: Any) -> DesignDoc:
    if not user.is_authenticated:
        raise NotFound
    doc = (
        DesignDoc.objects.select_related("author", "question")
        .filter(pk=object_id_parse(doc_id))
        .first()
    )
    if doc is None:
        raise NotFound
    return doc


def revision_list(*, doc: DesignDoc) -> QuerySet[DocRevision]:
    """A document's revisions, oldest first, with their authors (one query)."""
    return DocRevision.objects.filter(doc=doc).select_related("author").order_by("number")


def revision_in_doc(*, doc: DesignDoc, revision_id: Any) -> DocRevision:
    revision = (
        DocRevision.objects.select_related("author")
        .filter(pk=object_id_parse(revision_id), doc=doc)
        .first()
    )
    if revision is None:
        raise NotFound
    return revision


def revision_get_for_user(*, user: User, revision_id: Any) -> DocRevision:
    if not user.is_authenticated:
        raise NotFound
    revision = (
        DocRevision.objects.select_related("doc", "doc__author", "doc__question", "author")
        .filter(pk=object_id_parse(revision_id))
        .first()
    )
    if revision is None:
        raise NotFound
    return revision


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
    review = _reviews().filter(_review_visible(user), pk=object_id_parse(review_id)).first()
    if review is None:
        raise NotFound
    return review


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


# --- annotations ------------------------------------------------------------------------------


def annotation_counts_by_area(*, review: Review) -> dict[str, int]:
    """How many annotations the review files under each checklist area (one query)."""
    rows = Annotation.objects.filter(review=review).values("area").annotate(n=Count("id"))
    return {row["area"]: row["n"] for row in rows.order_by()}


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
    annotation = (
        Annotation.objects.select_related(
            "author",
            "status_changed_by",
            "review",
            "review__reviewer",
            "revision",
            "revision__doc",
        )
        .filter(pk=object_id_parse(annotation_id))
        .filter(Q(review__reviewer=user) | Q(review__status=Review.Status.SUBMITTED))
        .first()
    )
    if annotation is None:
        raise NotFound
    return annotation


def anchor_list(*, annotation: Annotation) -> QuerySet[AnnotationAnchor]:
    """Where the annotation landed in each revision, in revision order (one query)."""
    return (
        AnnotationAnchor.objects.filter(annotation=annotation)
        .select_related("revision")
        .order_by("revision__number")
    )
