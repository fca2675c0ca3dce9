"""Reads of the review desk, always scoped to the requesting user.

Who sees what: design documents and their revisions are visible to every signed-in account (a
practice desk: anyone may review any document). A draft review — and everything in it — is
visible only to its reviewer; a submitted review to every signed-in account. Anything a user may
not see raises NotFound, exactly like a missing id.

Documents of kind `change` (a prompt change request's text) are not the desk's: every selector
here answers for `design` documents unless the caller names `kind` — only the `changes` app
does, after deciding access through the prompt (docs/design.md, Prompt change review).
"""

from dataclasses import dataclass
from datetime import datetime

from django.db.models import (
    Case,
    Count,
    F,
    FilteredRelation,
    IntegerField,
    Max,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Subquery,
    Value,
    When,
)

from common.auth import Viewer
from common.selectors import object_get_or_not_found, object_id_parse
from questionbank.models import Question
from questionbank.selectors import question_by_slug
from textstore.selectors import blob_read

from .exceptions import NotFound, ReviewsError
from .models import (
    Annotation,
    AnnotationAnchor,
    BodyEdit,
    ChecklistItem,
    DesignDoc,
    DocRevision,
    InboxItem,
    Reply,
    Review,
)

User = Viewer

DESIGN = DesignDoc.Kind.DESIGN


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
        DesignDoc.objects.filter(kind=DESIGN)
        .select_related("author", "question")
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


def doc_list_for_question(*, user: User, question: object) -> QuerySet[DesignDoc]:
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


def doc_get_for_user(*, user: User, doc_id: object, kind: str = DESIGN) -> DesignDoc:
    if not user.is_authenticated:
        raise NotFound
    return object_get_or_not_found(
        DesignDoc.objects.filter(kind=kind).select_related("author", "question"),
        pk=object_id_parse(doc_id),
    )


def revision_list(*, doc: DesignDoc) -> QuerySet[DocRevision]:
    """A document's revisions, oldest first, with their authors (one query)."""
    return DocRevision.objects.filter(doc=doc).select_related("author").order_by("number")


def revision_in_doc(*, doc: DesignDoc, revision_id: object) -> DocRevision:
    return object_get_or_not_found(
        DocRevision.objects.select_related("author"), pk=object_id_parse(revision_id), doc=doc
    )


def revision_get_for_user(*, user: User, revision_id: object, kind: str = DESIGN) -> DocRevision:
    if not user.is_authenticated:
        raise NotFound
    return object_get_or_not_found(
        DocRevision.objects.filter(doc__kind=kind).select_related(
            "doc", "doc__author", "doc__question", "author"
        ),
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


def review_get_for_user(*, user: User, review_id: object, kind: str = DESIGN) -> Review:
    """The review if the user may see it: their own, or a submitted one; else NotFound."""
    if not user.is_authenticated:
        raise NotFound
    return object_get_or_not_found(
        _reviews().filter(_review_visible(user), revision__doc__kind=kind),
        pk=object_id_parse(review_id),
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
    return _reviews().filter(_review_visible(user), revision__doc__kind=DESIGN)


def review_list_for_user(*, user: User) -> QuerySet[Review]:
    """The user's own reviews (drafts and submitted), newest first."""
    if not user.is_authenticated:
        return Review.objects.none()
    return (
        _reviews()
        .filter(reviewer=user, revision__doc__kind=DESIGN)
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


def annotation_get_for_user(*, user: User, annotation_id: object, kind: str = DESIGN) -> Annotation:
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
        ).filter(
            Q(review__reviewer=user) | Q(review__status=Review.Status.SUBMITTED),
            revision__doc__kind=kind,
        ),
        pk=object_id_parse(annotation_id),
    )


def anchor_list(*, annotation: Annotation) -> QuerySet[AnnotationAnchor]:
    """Where the annotation landed in each revision, in revision order (one query)."""
    return (
        AnnotationAnchor.objects.filter(annotation=annotation)
        .select_related("revision")
        .order_by("revision__number")
    )


# --- threads, the author's view, the inbox ---------------------------------------------------

SEVERITY_ORDER = {"blocker": 0, "major": 1, "minor": 2, "nit": 3}


# Quoted: Prefetch is generic in django-stubs only.
def _edits_prefetch() -> "Prefetch[str, QuerySet[BodyEdit], str]":
    return Prefetch("edits", queryset=BodyEdit.objects.order_by("replaced_at", "id"))


def _replies_prefetch() -> "Prefetch[str, QuerySet[Reply], str]":
    return Prefetch(
        "replies",
        queryset=Reply.objects.select_related("author")
        .prefetch_related(_edits_prefetch())
        .order_by("created_at", "id"),
    )


def annotation_threads(*, review: Review, ids: list[int] | None = None) -> QuerySet[Annotation]:
    """The review's annotations (or those of `ids`) with anchors, replies (with their edits) and
    the annotation's own edit history: five queries however many there are."""
    annotations = annotation_list(review=review)
    if ids is not None:
        annotations = annotations.filter(pk__in=ids)
    return annotations.prefetch_related(_replies_prefetch(), _edits_prefetch())


@dataclass(frozen=True)
class AnnotationRow:
    """What a review page shows of every annotation (the highlights, counts, risks and orphans
    lists), with its anchor on the viewed revision: no thread, no history, no trail."""

    pk: int
    area: str
    kind: str
    severity: str
    status: str
    rank: int | None
    body: str
    exact: str
    author_id: int
    here_status: str | None  # None: not computed on the viewed revision yet
    here_start: int | None
    here_end: int | None

    @property
    def status_here(self) -> str:
        return self.here_status or "pending"

    def get_status_display(self) -> str:
        return str(Annotation.Status(self.status).label)

    def get_kind_display(self) -> str:
        return str(Annotation.Kind(self.kind).label)


def annotation_rows(*, review: Review, viewed: DocRevision) -> list[AnnotationRow]:
    """Every annotation of the review with its anchor on `viewed`, in id order (one query)."""
    rows = (
        Annotation.objects.filter(review=review)
        .annotate(
            here=FilteredRelation("anchors", condition=Q(anchors__revision=viewed)),
        )
        .order_by("id")
        .values_list(
            "id",
            "area",
            "kind",
            "severity",
            "status",
            "rank",
            "body",
            "exact",
            "author_id",
            "here__status",
            "here__start",
            "here__end",
        )
    )
    return [AnnotationRow(*row) for row in rows]


def reply_list(*, annotation: Annotation) -> QuerySet[Reply]:
    """The thread under an annotation, oldest first, with authors (one query)."""
    return (
        Reply.objects.filter(annotation=annotation)
        .select_related("author")
        .order_by("created_at", "id")
    )


def reply_list_for_review(*, review: Review) -> QuerySet[Reply]:
    """Every reply under the review's annotations, thread by thread, oldest first (one query):
    the export's threads."""
    return (
        Reply.objects.filter(annotation__review=review)
        .select_related("author")
        .order_by("annotation_id", "created_at", "id")
    )


def reply_get_for_user(*, user: User, reply_id: object, kind: str = DESIGN) -> Reply:
    """The reply if the user may see its review (every reply is on a submitted review)."""
    if not user.is_authenticated:
        raise NotFound
    reply = (
        Reply.objects.select_related("author", "annotation")
        .filter(
            Q(annotation__review__reviewer=user)
            | Q(annotation__review__status=Review.Status.SUBMITTED),
            annotation__revision__doc__kind=kind,
            pk=object_id_parse(reply_id),
        )
        .first()
    )
    if reply is None:
        raise NotFound
    return reply


def body_edit_list(
    *, annotation: Annotation | None = None, reply: Reply | None = None
) -> QuerySet[BodyEdit]:
    """Earlier texts of an annotation or a reply, oldest first."""
    if annotation is not None:
        return BodyEdit.objects.filter(annotation=annotation).order_by("replaced_at", "id")
    return BodyEdit.objects.filter(reply=reply).order_by("replaced_at", "id")


@dataclass(frozen=True)
class DocReviewRow:
    """One review in the author's view of a document."""

    id: int
    revision_id: int
    revision_number: int
    reviewer: str
    status: str
    verdict: str
    created_at: datetime
    submitted_at: datetime | None
    annotation_count: int
    reply_count: int
    open_blocker: int
    open_major: int
    open_minor: int
    open_nit: int

    @property
    def open_total(self) -> int:
        return self.open_blocker + self.open_major + self.open_minor + self.open_nit

    @property
    def open_counts(self) -> dict[str, int]:
        return {
            "blocker": self.open_blocker,
            "major": self.open_major,
            "minor": self.open_minor,
            "nit": self.open_nit,
        }


def doc_review_rows(*, user: User, doc: DesignDoc) -> list[DocReviewRow]:
    """Every submitted review of every revision of `doc`, plus the user's own drafts, newest
    first, with open issues counted by severity (one query)."""
    if not user.is_authenticated:
        return []
    open_issue = Q(annotations__status=Annotation.Status.OPEN)
    rows = (
        Review.objects.filter(_review_visible(user), revision__doc=doc)
        .values(
            "id",
            "revision_id",
            "revision__number",
            "reviewer__username",
            "status",
            "verdict",
            "created_at",
            "submitted_at",
        )
        .annotate(
            annotation_count=Count("annotations", distinct=True),
            reply_count=Count("annotations__replies", distinct=True),
            **{
                f"open_{severity}": Count(
                    "annotations",
                    filter=open_issue & Q(annotations__severity=severity),
                    distinct=True,
                )
                for severity in SEVERITY_ORDER
            },
        )
        .order_by("-created_at", "-id")
    )
    return [
        DocReviewRow(
            id=row["id"],
            revision_id=row["revision_id"],
            revision_number=row["revision__number"],
            reviewer=row["reviewer__username"],
            status=row["status"],
            verdict=row["verdict"],
            created_at=row["created_at"],
            submitted_at=row["submitted_at"],
            annotation_count=row["annotation_count"],
            reply_count=row["reply_count"],
            open_blocker=row["open_blocker"],
            open_major=row["open_major"],
            open_minor=row["open_minor"],
            open_nit=row["open_nit"],
        )
        for row in rows
    ]


def open_issue_list(
    *, user: User, doc: DesignDoc, latest: DocRevision, limit: int = 200
) -> list[Annotation]:
    """Open annotations of the document's submitted reviews, worst first (severity, then
    rank, then oldest), with their reviews, threads and anchors on `latest` (five queries).
    At most `limit`."""
    if not user.is_authenticated:
        return []
    severity = Case(
        *(When(severity=key, then=Value(order)) for key, order in SEVERITY_ORDER.items()),
        default=Value(9),
        output_field=IntegerField(),
    )
    return list(
        Annotation.objects.filter(
            review__revision__doc=doc,
            review__status=Review.Status.SUBMITTED,
            status=Annotation.Status.OPEN,
        )
        .select_related("author", "review", "review__reviewer", "revision", "status_changed_by")
        .prefetch_related(
            Prefetch(
                "anchors",
                queryset=AnnotationAnchor.objects.filter(revision=latest).select_related(
                    "revision"
                ),
            ),
            _replies_prefetch(),
            _edits_prefetch(),
        )
        .annotate(severity_order=severity)
        .order_by("severity_order", F("rank").asc(nulls_last=True), "created_at", "id")[:limit]
    )


def revision_diff_anchors(
    *, user: User, old: DocRevision, new: DocRevision
) -> list[AnnotationAnchor]:
    """Anchors on `old` and `new` of the annotations the user can see (one query)."""
    return list(
        AnnotationAnchor.objects.filter(revision__in=[old.pk, new.pk])
        .filter(
            Q(annotation__review__reviewer=user)
            | Q(annotation__review__status=Review.Status.SUBMITTED)
        )
        .select_related("annotation", "annotation__review__reviewer")
        .order_by("annotation_id", "revision_id")
    )


def inbox_list_for_user(*, user: User) -> QuerySet[InboxItem]:
    """The user's inbox, newest first, with what each item points at (one query)."""
    if not user.is_authenticated:
        return InboxItem.objects.none()
    return (
        InboxItem.objects.filter(recipient_id=user.pk, review__revision__doc__kind=DESIGN)
        .select_related(
            "actor", "review", "review__revision__doc", "annotation", "reply", "revision"
        )
        .order_by("-created_at", "-id")
    )


def inbox_unread_count(*, user: User) -> int:
    if not user.is_authenticated:
        return 0
    return InboxItem.objects.filter(
        recipient_id=user.pk, read_at__isnull=True, review__revision__doc__kind=DESIGN
    ).count()


def inbox_item_get_for_user(*, user: User, item_id: object) -> InboxItem:
    if not user.is_authenticated:
        raise NotFound
    item = inbox_list_for_user(user=user).filter(pk=object_id_parse(item_id)).first()
    if item is None:
        raise NotFound
    return item
