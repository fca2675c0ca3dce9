"""Practice pages: start a timed review, the debrief after submit, progress over time."""

from dataclasses import dataclass
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from common.auth import request_actor

from ..exceptions import ReviewsError
from ..models import Area
from ..panels import panels_for
from ..selectors import doc_get_for_user
from .scoring import SEVERITY_ORDER, ItemResult, RankedRisk
from .selectors import (
    ScorecardPage,
    practice_doc_list,
    progress_for_user,
    scorecard_get_for_user,
)
from .services import mock_review_start

AREA_LABELS = dict(Area.choices)
KIND_LABELS = {
    "risk": "Risk",
    "missing": "Missing",
    "already-considered": "Already considered",
    "constraint-trap": "Constraint trap",
}


@login_required
@require_POST
def practice_start_view(request: HttpRequest, doc_id: int) -> HttpResponse:
    doc = doc_get_for_user(user=request.user, doc_id=doc_id)  # NotFound → 404 (middleware)
    try:
        review, created = mock_review_start(actor=request_actor(request), doc=doc)
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
    misfiled: tuple[Any, ...] = ()  # annotations on it filed under another area
    misfiled_area_labels: tuple[str, ...] = ()


def _debrief_items(page: ScorecardPage) -> list[DebriefItem]:
    return [
        DebriefItem(
            result=item,
            area_label=AREA_LABELS.get(item.area, item.area),
            kind_label=KIND_LABELS.get(item.kind, item.kind),
            matched=tuple(page.annotations[i] for i in item.matched_annotations),
            trapped=tuple(page.annotations[i] for i in item.trapped_by),
            misfiled=tuple(page.annotations[i] for i in item.misfiled),
            misfiled_area_labels=tuple(AREA_LABELS.get(a, a) for a in item.misfiled_areas),
        )
        for item in page.scorecard.items
    ]


@login_required
def debrief_view(request: HttpRequest, review_id: int) -> HttpResponse:
    page = scorecard_get_for_user(user=request.user, review_id=review_id)
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
            "partial_items": [i for i in items if i.result.partial],
            "missed_items": sorted(
                (i for i in items if not i.result.found and not i.result.partial),
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
            "panels": panels_for(slot="practice", obj=None, request=request),
        },
    )
