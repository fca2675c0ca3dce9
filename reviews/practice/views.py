"""Practice pages: start a timed review, the debrief after submit, progress over time."""

from dataclasses import dataclass
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from ..exceptions import NotFound, ReviewsError
from ..models import Area, DesignDoc, Review
from ..selectors import doc_get_for_user
from .scoring import SEVERITY_ORDER, ItemResult, RankedRisk
from .selectors import (
    ScorecardPage,
    TimerView,
    answer_key_for_doc,
    draft_review_exists,
    practice_doc_list,
    progress_for_user,
    scorecard_get_for_user,
    timer_for_review,
)
from .services import mock_review_start

AREA_LABELS = dict(Area.choices)
KIND_LABELS = {
    "risk": "Risk",
    "missing": "Missing",
    "already-considered": "Already considered",
    "constraint-trap": "Constraint trap",
}


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


def review_practice(*, review: Review, user: Any) -> ReviewPractice:
    """What the review page shows about practice (two small queries)."""
    return ReviewPractice(
        timer=timer_for_review(review=review),
        has_key=answer_key_for_doc(doc=review.revision.doc) is not None,
        submitted=review.status == Review.Status.SUBMITTED,
        is_reviewer=review.reviewer_id == user.pk,
    )


def doc_practice(*, doc: DesignDoc, user: Any) -> DocPractice:
    key = answer_key_for_doc(doc=doc)
    if key is None:
        return DocPractice(has_key=False, minutes=0, in_progress=False)
    return DocPractice(
        has_key=True,
        minutes=key.minutes,
        in_progress=draft_review_exists(user=user, doc=doc),
    )


def _signed_in(request: HttpRequest) -> AbstractBaseUser:
    """The acting account of a login_required view."""
    if not isinstance(request.user, AbstractBaseUser):
        raise PermissionDenied
    return request.user


@login_required
@require_POST
def practice_start_view(request: HttpRequest, doc_id: int) -> HttpResponse:
    try:
        doc = doc_get_for_user(user=request.user, doc_id=doc_id)
    except NotFound:
        raise Http404 from None
    try:
        review, created = mock_review_start(actor=_signed_in(request), doc=doc)
    except ReviewsError as error:
        messages.error(request, error.message)
        return redirect("reviews:doc", doc_id=doc.pk)
    if created:
        messages.success(request, "Timed review started. The clock is shown, not enforced.")
    else:
        messages.info(request, "Resumed your review in progress.")
    return redirect("reviews:review", review_id=review.pk)


@dataclass(frozen=True)
class DebriefItem:
    result: ItemResult
    area_label: str
    kind_label: str
    matched: tuple[Any, ...]  # the annotations that matched, in order
    trapped: tuple[Any, ...]


def _debrief_items(page: ScorecardPage) -> list[DebriefItem]:
    return [
        DebriefItem(
            result=item,
            area_label=AREA_LABELS.get(item.area, item.area),
            kind_label=KIND_LABELS.get(item.kind, item.kind),
            matched=tuple(page.annotations[i] for i in item.matched_annotations),
            trapped=tuple(page.annotations[i] for i in item.trapped_by),
        )
        for item in page.scorecard.items
    ]


@login_required
def debrief_view(request: HttpRequest, review_id: int) -> HttpResponse:
    try:
        page = scorecard_get_for_user(user=request.user, review_id=review_id)
    except NotFound:
        raise Http404 from None
    items = _debrief_items(page)
    card = page.scorecard
    worst = next(i for i in items if i.result.id == card.worst)
    lead: RankedRisk | None = card.lead
    return render(
        request,
        "reviews/practice_debrief.html",
        {
            "section": "reviews",
            "page": page,
            "review": page.review,
            "doc": page.doc,
            "card": card,
            "percent": round(card.score * 100),
            "found_items": [i for i in items if i.result.found],
            "missed_items": sorted(
                (i for i in items if not i.result.found),
                key=lambda i: SEVERITY_ORDER.get(i.result.severity, 99),
            ),
            "trapped_items": [i for i in items if i.result.trapped_by],
            "worst": worst,
            "lead": lead,
            "lead_annotation": page.annotations.get(lead.annotation) if lead else None,
            "worst_rank": next((r.rank for r in card.ranking if r.item == card.worst), None),
            "ranking": [(r, page.annotations.get(r.annotation)) for r in card.ranking],
            "unset_labels": [AREA_LABELS[a] for a in card.checklist_unset],
            "assessed": len(AREA_LABELS) - len(card.checklist_unset),
            "minutes_allowed": page.minutes_allowed,
        },
    )


@login_required
def progress_view(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "reviews/practice_progress.html",
        {
            "section": "reviews",
            "progress": progress_for_user(user=request.user),
            "practice_docs": practice_doc_list(user=request.user),
        },
    )
