"""Reads for practice: scorecards and a user's mock reviews, scoped to the requesting user.

The answer key is read only here, and only for the reviewer of a submitted review: a draft,
another account's review, or a document without a key raises NotFound, like a missing id. The
one other reader, `practice_notes_score`, scores a machine critique for the answer-key grader
(docs/critique.md) and returns a scorecard whose callers show counts only, never the key.
"""

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Prefetch, QuerySet

from common.auth import Viewer
from common.selectors import object_id_parse

from ..exceptions import NotFound
from ..models import Annotation, ChecklistItem, DesignDoc, DocRevision, Review
from ..selectors import revision_text
from .keys import key_from_model
from .models import AnswerKey, PlantedItem, TimedReview
from .scoring import Note, Scorecard, Submission, review_score


@dataclass(frozen=True)
class TimerView:
    """What the review page shows about a mock review's clock."""

    started_at: datetime
    minutes_allowed: int
    ends_at: datetime | None  # submitted_at, once submitted


@dataclass(frozen=True)
class ScorecardPage:
    """A submitted review with its scorecard and the annotations it refers to by id."""

    review: Review
    doc: DesignDoc
    scorecard: Scorecard
    annotations: dict[int, Annotation]
    timed: bool
    minutes_allowed: int | None  # the timer's, for a mock review


@dataclass(frozen=True)
class MockReviewRow:
    """One mock review on the progress page; the score only once it is submitted."""

    review: Review
    doc: DesignDoc
    started_at: datetime
    minutes_allowed: int
    scorecard: Scorecard | None


@dataclass(frozen=True)
class QuestionProgress:
    """A user's mock reviews of one question's practice documents, oldest first."""

    title: str
    slug: str | None
    rows: tuple[MockReviewRow, ...]
    best_found: int | None
    total: int | None


def answer_key_for_doc(*, doc: DesignDoc) -> AnswerKey | None:
    """The document's key row (no items), to know whether it can be practised on."""
    return AnswerKey.objects.filter(doc=doc).first()


def draft_review_exists(*, user: Viewer, doc: DesignDoc) -> bool:
    """Whether the user has a draft of the document's latest revision (a mock review resumes
    it)."""
    if not user.is_authenticated:
        return False
    latest = DocRevision.objects.filter(doc=doc).order_by("-number").values("pk")[:1]
    return Review.objects.filter(
        revision_id__in=latest, reviewer_id=user.pk, status=Review.Status.DRAFT
    ).exists()


def timer_for_review(*, review: Review) -> TimerView | None:
    timer = TimedReview.objects.filter(review=review).first()
    if timer is None:
        return None
    return TimerView(
        started_at=timer.started_at,
        minutes_allowed=timer.minutes_allowed,
        ends_at=review.submitted_at,
    )


def _keys_by_doc(doc_ids: set[int]) -> dict[int, AnswerKey]:
    keys = AnswerKey.objects.filter(doc_id__in=doc_ids).prefetch_related(
        Prefetch("items", queryset=PlantedItem.objects.order_by("position"))
    )
    return {key.doc_id: key for key in keys}


def _notes(annotations: list[Annotation]) -> tuple[Note, ...]:
    return tuple(
        Note(
            id=a.pk,
            kind=a.kind,
            area=a.area,
            severity=a.severity,
            span=None if a.whole_document or a.start is None else (a.start, a.end or a.start),
            rank=a.rank,
            body=a.body,
            tradeoff=a.tradeoff,
            constraint=a.constraint,
        )
        for a in annotations
    )


def _minutes(started_at: datetime, review: Review) -> float | None:
    if review.submitted_at is None:
        return None
    return round((review.submitted_at - started_at).total_seconds() / 60.0, 1)


def _score_many(
    reviews: list[Review], started: dict[int, datetime]
) -> dict[int, tuple[Scorecard, dict[int, Annotation]]]:
    """Scorecards of submitted reviews of keyed documents, in a fixed number of queries (plus
    one text read per distinct revision)."""
    if not reviews:
        return {}
    keys = _keys_by_doc({r.revision.doc_id for r in reviews})
    scored = [r for r in reviews if r.revision.doc_id in keys]
    ids = [r.pk for r in scored]
    by_review: dict[int, list[Annotation]] = defaultdict(list)
    for annotation in Annotation.objects.filter(review_id__in=ids).order_by("id"):
        by_review[annotation.review_id].append(annotation)
    checklists: dict[int, dict[str, str]] = defaultdict(dict)
    for item in ChecklistItem.objects.filter(review_id__in=ids):
        checklists[item.review_id][item.area] = item.status
    texts: dict[int, str] = {}
    result = {}
    for review in scored:
        revision: DocRevision = review.revision
        if revision.pk not in texts:
            texts[revision.pk] = revision_text(revision=revision)
        key = key_from_model(keys[revision.doc_id], text=texts[revision.pk])
        annotations = by_review[review.pk]
        submission = Submission(
            notes=_notes(annotations),
            checklist=checklists[review.pk],
            minutes_taken=_minutes(started.get(review.pk, review.created_at), review),
        )
        result[review.pk] = (review_score(key, submission), {a.pk: a for a in annotations})
    return result


def scorecard_get_for_user(*, user: Viewer, review_id: object) -> ScorecardPage:
    """The scorecard of the user's own submitted review of a document with an answer key."""
    if not user.is_authenticated:
        raise NotFound
    review = (
        Review.objects.select_related("reviewer", "revision", "revision__doc")
        .filter(
            pk=object_id_parse(review_id),
            reviewer_id=user.pk,
            status=Review.Status.SUBMITTED,
            revision__doc__answer_key__isnull=False,
        )
        .first()
    )
    if review is None:
        raise NotFound
    timer = TimedReview.objects.filter(review=review).first()
    started = {review.pk: timer.started_at} if timer else {}
    scorecard, annotations = _score_many([review], started)[review.pk]
    return ScorecardPage(
        review=review,
        doc=review.revision.doc,
        scorecard=scorecard,
        annotations=annotations,
        timed=timer is not None,
        minutes_allowed=timer.minutes_allowed if timer else None,
    )


def answer_key_readable(*, user: Viewer, doc_id: int) -> bool:
    """Whether `user` may learn anything of the document's key: the reviewer of a submitted
    review of it, as `scorecard_get_for_user` answers (docs/design.md, Answer keys stay secret
    until submit)."""
    if not user.is_authenticated:
        return False
    return Review.objects.filter(
        reviewer_id=user.pk, status=Review.Status.SUBMITTED, revision__doc_id=doc_id
    ).exists()


def mock_review_list_for_user(*, user: Viewer) -> QuerySet[TimedReview]:
    if not user.is_authenticated:
        return TimedReview.objects.none()
    return (
        TimedReview.objects.filter(review__reviewer_id=user.pk)
        .select_related(
            "review", "review__revision", "review__revision__doc", "review__revision__doc__question"
        )
        .order_by("started_at", "id")
    )


def progress_for_user(*, user: Viewer) -> list[QuestionProgress]:
    """The user's mock reviews grouped by question (documents without one by title), each
    submitted one with its scorecard; groups in question-bank order."""
    timers = list(mock_review_list_for_user(user=user))
    reviews = [t.review for t in timers]
    scores = _score_many(
        [r for r in reviews if r.status == Review.Status.SUBMITTED],
        {t.review_id: t.started_at for t in timers},
    )
    groups: dict[tuple[int, str], list[MockReviewRow]] = defaultdict(list)
    titles: dict[tuple[int, str], tuple[str, str | None]] = {}
    for timer in timers:
        doc = timer.review.revision.doc
        question = doc.question
        group = (question.position, question.slug) if question else (10_000, doc.title)
        titles[group] = (question.title, question.slug) if question else (doc.title, None)
        scored = scores.get(timer.review_id)
        groups[group].append(
            MockReviewRow(
                review=timer.review,
                doc=doc,
                started_at=timer.started_at,
                minutes_allowed=timer.minutes_allowed,
                scorecard=scored[0] if scored else None,
            )
        )
    progress = []
    for group in sorted(groups):
        rows = tuple(groups[group])
        cards = [row.scorecard for row in rows if row.scorecard is not None]
        progress.append(
            QuestionProgress(
                title=titles[group][0],
                slug=titles[group][1],
                rows=rows,
                best_found=max((c.found for c in cards), default=None),
                total=cards[-1].total if cards else None,
            )
        )
    return progress


def practice_doc_list(*, user: Viewer) -> QuerySet[DesignDoc]:
    """The documents that can be practised on (they have an answer key), in question order."""
    if not user.is_authenticated:
        return DesignDoc.objects.none()
    return (
        DesignDoc.objects.filter(answer_key__isnull=False)
        .select_related("question", "answer_key")
        .order_by("question__position", "title")
    )


@dataclass(frozen=True)
class ReviewPractice:
    """The practice panel of the review page: the clock, and the debrief link once submitted."""

    timer: TimerView | None
    has_key: bool
    submitted: bool
    is_reviewer: bool


@dataclass(frozen=True)
class DocPractice:
    """The practice panel of a document page."""

    has_key: bool
    minutes: int
    in_progress: bool  # the user has a draft of this document that will be resumed


def review_practice(*, review: Review, user: Viewer) -> ReviewPractice:
    """What the review page shows about practice (two small queries)."""
    return ReviewPractice(
        timer=timer_for_review(review=review),
        has_key=answer_key_for_doc(doc=review.revision.doc) is not None,
        submitted=review.status == Review.Status.SUBMITTED,
        is_reviewer=review.reviewer_id == user.pk,
    )


def doc_practice(*, doc: DesignDoc, user: Viewer) -> DocPractice:
    key = answer_key_for_doc(doc=doc)
    if key is None:
        return DocPractice(has_key=False, minutes=0, in_progress=False)
    return DocPractice(
        has_key=True,
        minutes=key.minutes,
        in_progress=draft_review_exists(user=user, doc=doc),
    )


# --- machine critiques and the anonymous aggregate (the critique app's answer-key grader) ------


@dataclass(frozen=True)
class PracticeScore:
    """A critique scored against a practice document's key. Callers show counts from the
    scorecard, never its items' quotes or explanations (the key stays secret)."""

    doc: DesignDoc
    revision: DocRevision
    scorecard: Scorecard


def practice_revision_for_text_sha(*, body_sha: str) -> DocRevision | None:
    """The practice document's revision whose Markdown has this SHA-256 (a keyed document's
    text, as a test set row or a run variable carries it), or None."""
    return (
        DocRevision.objects.select_related("doc")
        .filter(body_sha=body_sha, doc__answer_key__isnull=False)
        .order_by("-number")
        .first()
    )


def practice_notes_score(
    *, revision: DocRevision, notes: tuple[Note, ...], checklist: dict[str, str] | None = None
) -> PracticeScore | None:
    """Score annotations that are not a review's (a drafted critique) against the key of the
    revision's document with the same scorer as a mock review; None for a document with no
    key. The key is read here only to compute the scorecard."""
    key_row = _keys_by_doc({revision.doc_id}).get(revision.doc_id)
    if key_row is None:
        return None
    key = key_from_model(key_row, text=revision_text(revision=revision))
    card = review_score(key, Submission(notes=notes, checklist=checklist or {}))
    return PracticeScore(doc=revision.doc, revision=revision, scorecard=card)


@dataclass(frozen=True)
class HumanAggregate:
    """Submitted human reviews of one practice document, anonymous: how many, and their mean."""

    doc_id: int
    reviews: int
    mean_score: float
    mean_found: float


# The aggregate scores at most this many recent submitted reviews (a page's cost is bounded).
HUMAN_AGGREGATE_REVIEWS = 300


def practice_human_scores() -> dict[int, HumanAggregate]:
    """Per practice document, the mean score of the most recent submitted reviews of it (every
    account's, no names): what people score, beside what a prompt scores."""
    reviews = list(
        Review.objects.select_related("revision")
        .filter(status=Review.Status.SUBMITTED, revision__doc__answer_key__isnull=False)
        .order_by("-submitted_at", "-id")[:HUMAN_AGGREGATE_REVIEWS]
    )
    scored = _score_many(reviews, {})
    by_doc: dict[int, list[Scorecard]] = defaultdict(list)
    for review in reviews:
        if review.pk in scored:
            by_doc[review.revision.doc_id].append(scored[review.pk][0])
    return {
        doc_id: HumanAggregate(
            doc_id=doc_id,
            reviews=len(cards),
            mean_score=sum(c.score for c in cards) / len(cards),
            mean_found=sum(c.found for c in cards) / len(cards),
        )
        for doc_id, cards in by_doc.items()
    }
