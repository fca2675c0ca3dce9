"""The review page and its parts: the ranked risks, the annotation cards, the checklist (a
plain form htmx swaps in place) and submitting. The interactive parts (annotate, rank, issue
status, re-attach) call the JSON API from `static/js/review.js`."""

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from common.auth import request_actor

from ..exceptions import ReviewsError
from ..models import Annotation, Area, ChecklistItem, DocRevision, Review, Verdict
from ..pages.reviews import card_batch_build, review_page_build, risks_worst_first
from ..panels import panels_for
from ..selectors import (
    annotation_counts_by_area,
    annotation_rows,
    checklist_coverage,
    checklist_list,
    review_get_for_user,
    revision_list,
)
from ..services import (
    review_submit,
    review_update,
)
from .common import HtmxHttpRequest, legacy_revision_redirect, revision_or_default

COVERAGE_SEGMENTS = [
    ("covered", "Covered"),
    ("gap", "Gap"),
    ("na", "N/A"),
    ("unset", "Not assessed"),
]


def _review_or_404(request: HttpRequest, review_id: Any) -> Review:
    return review_get_for_user(user=request.user, review_id=review_id)


def coverage_chart(items: list[ChecklistItem]) -> dict[str, Any]:
    """Segments of the stacked bar (viewBox width 100), with counts for the legend."""
    counts = checklist_coverage(items)
    total = max(sum(counts.values()), 1)
    segments, x = [], 0.0
    for key, label in COVERAGE_SEGMENTS:
        width = 100.0 * counts[key] / total
        segments.append({"key": key, "label": label, "count": counts[key], "x": x, "width": width})
        x += width
    return {"segments": segments, "counts": counts, "total": sum(counts.values())}


def _checklist_context(review: Review, can_edit: bool) -> dict[str, Any]:
    items = checklist_list(review=review)
    counts = annotation_counts_by_area(review=review)
    # An area marked N/A that still has annotations is probably a mistake: say so.
    na_warnings = [
        (item.get_area_display(), counts[item.area])
        for item in items
        if item.status == ChecklistItem.Status.NA and counts.get(item.area)
    ]
    return {
        "review": review,
        "checklist": items,
        "na_warnings": na_warnings,
        "chart": coverage_chart(items),
        "checklist_statuses": ChecklistItem.Status.choices,
        "can_edit": can_edit,
    }


def _card_context(review: Review, viewed: DocRevision, user_id: int) -> dict[str, Any]:
    """What an annotation card needs besides its view (the page's and the fragment's alike)."""
    return {
        "review": review,
        "viewed": viewed,
        "can_edit": review.status == Review.Status.DRAFT and review.reviewer_id == user_id,
        "areas": Area.choices,
        "severities": Annotation.Severity.choices,
        "issue_statuses": Annotation.Status.choices,
    }


def _review_page(request: HttpRequest, review: Review) -> HttpResponse:
    revisions = list(revision_list(doc=review.revision.doc))
    if "rev" in request.GET:
        return legacy_revision_redirect(request, revisions)
    wanted = request.GET.get("r")
    viewed = revision_or_default(revisions, wanted) if wanted else review.revision
    user_id = request_actor(request).pk
    page = review_page_build(review=review, user_id=user_id, revisions=revisions, viewed=viewed)
    can_edit = review.status == Review.Status.DRAFT and review.reviewer_id == user_id
    window = int(settings.REVIEW_CARDS_WINDOW)
    return render(
        request,
        "reviews/review_detail.html",
        {
            **_card_context(review, page.viewed, user_id),
            "section": "reviews",
            "page": page,
            "doc": review.revision.doc,
            "revisions": page.revisions,
            "on_reviewed": page.on_reviewed,
            "doc_html": page.doc_html,
            "source_html": page.source_html,
            "annotations_count": len(page.rows),
            "risks": page.risks,
            "risks_shown": page.risks[:window],
            "risks_rest": [r.pk for r in page.risks[window:]],
            "by_area": page.by_area,
            "cards": page.cards,
            "orphans": page.orphans,
            "here_counts": page.here_counts,
            "kinds": Annotation.Kind.choices,
            "is_doc_author": page.is_doc_author,
            "verdicts": Verdict.choices,
            "panels": panels_for(slot="review", obj=review, request=request),
            **_checklist_context(review, can_edit),
        },
    )


def _count_param(raw: str | None, name: str) -> int | None:
    if raw in (None, ""):
        return None
    if not raw.isdigit() or len(raw) > 9:
        raise ValueError(f"{name}: a whole number")
    return int(raw)


@login_required
def review_risks_view(request: HttpRequest, review_id: int) -> HttpResponse:
    """Every risk of the review, worst first (htmx "Show all risks": the page lists the first
    REVIEW_CARDS_WINDOW)."""
    review = _review_or_404(request, review_id)
    user_id = request_actor(request).pk
    rows = annotation_rows(review=review, viewed=review.revision)
    return render(
        request,
        "reviews/_risk_items.html",
        {
            "risks": risks_worst_first(rows),
            "can_edit": review.status == Review.Status.DRAFT and review.reviewer_id == user_id,
        },
    )


@login_required
def review_cards_view(request: HttpRequest, review_id: int) -> HttpResponse:
    """More annotation cards (htmx "Show more annotations"): REVIEW_CARDS_WINDOW from
    `offset`, or further up to the annotation `until` (a highlight or link to a card that is
    not on the page yet)."""
    review = _review_or_404(request, review_id)
    revisions = list(revision_list(doc=review.revision.doc))
    wanted = request.GET.get("r")
    viewed = revision_or_default(revisions, wanted) if wanted else review.revision
    try:
        offset = _count_param(request.GET.get("offset"), "offset") or 0
        until = _count_param(request.GET.get("until"), "until")
    except ValueError as error:
        return HttpResponse(str(error), status=400)
    user_id = request_actor(request).pk
    rows = annotation_rows(review=review, viewed=viewed)
    batch = card_batch_build(
        review=review, viewed=viewed, user_id=user_id, rows=rows, start=offset, until=until
    )
    return render(
        request,
        "reviews/_cards.html",
        {**_card_context(review, viewed, user_id), "cards": batch, "reveal": True},
    )


@login_required
def review_detail_view(request: HttpRequest, review_id: int) -> HttpResponse:
    return _review_page(request, _review_or_404(request, review_id))


@login_required
@require_POST
def review_checklist_view(request: HtmxHttpRequest, review_id: int) -> HttpResponse:
    review = _review_or_404(request, review_id)
    checklist = [
        {
            "area": area,
            "status": request.POST.get(f"status-{area}", ""),
            "note": request.POST.get(f"note-{area}", ""),
        }
        for area in Area.values
        if f"status-{area}" in request.POST or f"note-{area}" in request.POST
    ]
    error = None
    try:
        review = review_update(actor=request_actor(request), review=review, checklist=checklist)
    except ReviewsError as exc:
        error = exc
    if request.htmx:
        context = _checklist_context(review, review.status == Review.Status.DRAFT)
        return render(
            request,
            "reviews/_checklist.html",
            {**context, "checklist_error": error, "checklist_saved": error is None},
            status=400 if error else 200,
        )
    if error is not None:
        messages.error(request, error.message)
    else:
        messages.success(request, "Checklist saved.")
    return redirect("reviews:review", review_id=review.pk)


@login_required
@require_POST
def review_submit_view(request: HttpRequest, review_id: int) -> HttpResponse:
    review = _review_or_404(request, review_id)
    try:
        review, changed = review_submit(
            actor=request_actor(request),
            review=review,
            summary=request.POST.get("summary"),
            verdict=request.POST.get("verdict") or None,
        )
    except ReviewsError as exc:
        messages.error(request, exc.message)
        return redirect("reviews:review", review_id=review.pk)
    if changed:
        messages.success(
            request, "Review submitted: the author and other reviewers can read it now."
        )
    return redirect("reviews:review", review_id=review.pk)
