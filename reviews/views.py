"""Review desk pages: parse, call selectors or one service, render.

The review page itself calls the JSON API from `static/js/review.js` for the interactive parts
(annotate, rank, issue status, re-attach); the checklist and submit are plain forms (htmx swaps
the checklist panel in place).
"""

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_POST
from django_htmx.middleware import HtmxDetails

from common.auth import request_actor
from questionbank.selectors import question_list

from .exceptions import NotFound, ReviewsError
from .models import Annotation, Area, ChecklistItem, DesignDoc, DocRevision, Review, Verdict
from .pages import card_batch_build, review_page_build, risks_worst_first
from .panels import panels_for
from .rendering import markdown_render
from .selectors import (
    annotation_counts_by_area,
    annotation_rows,
    checklist_coverage,
    checklist_list,
    doc_get_for_user,
    doc_list_visible,
    question_from_slug,
    review_get_for_user,
    review_list_for_doc,
    review_list_for_user,
    revision_in_doc,
    revision_list,
    revision_text,
)
from .services import (
    doc_constraints_set,
    doc_create,
    doc_revision_create,
    review_create,
    review_submit,
    review_update,
)
from .thread_pages import author_view_build

COVERAGE_SEGMENTS = [
    ("covered", "Covered"),
    ("gap", "Gap"),
    ("na", "N/A"),
    ("unset", "Not assessed"),
]


# NotFound (404) and Forbidden (403) from selectors and services are answered by
# common.middleware.DomainErrorMiddleware; views catch only the errors they show in a form.


def _doc_or_404(request: HttpRequest, doc_id: Any) -> DesignDoc:
    return doc_get_for_user(user=request.user, doc_id=doc_id)


def _review_or_404(request: HttpRequest, review_id: Any) -> Review:
    return review_get_for_user(user=request.user, review_id=review_id)


def _revision_or_default(revisions: list[DocRevision], wanted: Any) -> DocRevision:
    """The revision `?r=` names by its number among the document's (404 if it is not one),
    else the latest."""
    if not wanted:
        return revisions[-1]
    found = next((r for r in revisions if str(r.number) == str(wanted)), None)
    if found is None:
        raise NotFound
    return found


def _legacy_revision_redirect(request: HttpRequest, revisions: list[DocRevision]) -> HttpResponse:
    """Old links named a revision by its id (`?rev=<id>`): send them to `?r=<number>` with the
    rest of the query kept (404 for an id that is not one of the document's revisions)."""
    legacy = request.GET["rev"]
    found = next((r for r in revisions if str(r.pk) == legacy), None)
    if found is None:
        raise NotFound
    query = request.GET.copy()
    del query["rev"]
    query["r"] = str(found.number)
    return redirect(f"{request.path}?{query.urlencode()}")


class HtmxHttpRequest(HttpRequest):
    """A request through django-htmx's middleware (typing only: it sets `request.htmx`)."""

    htmx: HtmxDetails


def _constraints_from_text(raw: str) -> list[str]:
    return [line.strip() for line in (raw or "").splitlines() if line.strip()]


# --- documents --------------------------------------------------------------------------------


@login_required
def doc_list_view(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "reviews/doc_list.html",
        {
            "section": "reviews",
            "docs": doc_list_visible(user=request.user),
            "my_reviews": review_list_for_user(user=request.user),
        },
    )


@login_required
def doc_new_view(request: HttpRequest) -> HttpResponse:
    context: dict[str, Any] = {
        "section": "reviews",
        "questions": question_list().only("slug", "title"),
        "values": {"question": request.GET.get("question", "")},
    }
    if request.method != "POST":
        return render(request, "reviews/doc_new.html", context)
    values = {
        key: request.POST.get(key, "") for key in ("title", "question", "constraints", "body")
    }
    try:
        doc, _ = doc_create(
            actor=request_actor(request),
            title=values["title"],
            body=values["body"],
            question=question_from_slug(values["question"]),
            constraints=_constraints_from_text(values["constraints"]),
        )
    except ReviewsError as error:
        return render(
            request,
            "reviews/doc_new.html",
            {**context, "values": values, "error": error},
            status=400,
        )
    messages.success(request, "Document created. Share its page with reviewers.")
    return redirect("reviews:doc", doc_id=doc.pk)


def _doc_page(
    request: HttpRequest,
    doc: DesignDoc,
    viewed: DocRevision | None = None,
    *,
    error: ReviewsError | None = None,
    draft: str | None = None,
    status: int = 200,
) -> HttpResponse:
    revisions = list(revision_list(doc=doc))
    viewed = viewed or _revision_or_default(revisions, request.GET.get("r"))
    text = revision_text(revision=viewed)
    latest = revisions[-1]
    if draft is None:  # the editor starts from the latest revision's text
        draft = text if viewed.pk == latest.pk else revision_text(revision=latest)
    reviews = list(review_list_for_doc(user=request.user, doc=doc))
    mine = next(
        (r for r in reviews if r.reviewer_id == request.user.pk and r.revision_id == viewed.pk),
        None,
    )
    return render(
        request,
        "reviews/doc_detail.html",
        {
            "section": "reviews",
            "doc": doc,
            "revisions": revisions,
            "viewed": viewed,
            "latest": latest,
            "doc_html": mark_safe(markdown_render(text=text)),  # noqa: S308 (sanitised by nh3)
            "my_review": mine,
            "is_author": doc.author_id == request.user.pk,
            "editor_body": draft,
            "constraints_text": "\n".join(doc.constraints),
            "error": error,
            "author_view": author_view_build(user=request.user, doc=doc, revisions=revisions),
        },
        status=status,
    )


@login_required
def doc_detail_view(request: HttpRequest, doc_id: int) -> HttpResponse:
    doc = _doc_or_404(request, doc_id)
    if "rev" in request.GET:
        return _legacy_revision_redirect(request, list(revision_list(doc=doc)))
    return _doc_page(request, doc)


@login_required
@require_POST
def doc_revise_view(request: HttpRequest, doc_id: int) -> HttpResponse:
    doc = _doc_or_404(request, doc_id)
    body = request.POST.get("body", "")
    try:
        revision, created = doc_revision_create(
            actor=request_actor(request),
            doc=doc,
            body=body,
            message=request.POST.get("message", ""),
        )
    except ReviewsError as error:
        return _doc_page(request, doc, error=error, draft=body, status=400)
    if created:
        messages.success(request, f"Saved r{revision.number}; annotations are re-anchored onto it.")
    else:
        messages.info(request, f"Nothing new: r{revision.number} already has this text.")
    return redirect(f"{reverse('reviews:doc', args=[doc.pk])}?r={revision.number}")


@login_required
@require_POST
def doc_constraints_view(request: HttpRequest, doc_id: int) -> HttpResponse:
    doc = _doc_or_404(request, doc_id)
    try:
        doc_constraints_set(
            actor=request_actor(request),
            doc=doc,
            constraints=_constraints_from_text(request.POST.get("constraints", "")),
        )
    except ReviewsError as error:
        messages.error(request, error.message)
    return redirect("reviews:doc", doc_id=doc.pk)


@login_required
@require_POST
def review_start_view(request: HttpRequest, doc_id: int) -> HttpResponse:
    doc = _doc_or_404(request, doc_id)
    revision = revision_in_doc(doc=doc, revision_id=request.POST.get("revision"))
    review, _ = review_create(actor=request_actor(request), revision=revision)
    return redirect("reviews:review", review_id=review.pk)


# --- the review page --------------------------------------------------------------------------


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
        return _legacy_revision_redirect(request, revisions)
    wanted = request.GET.get("r")
    viewed = _revision_or_default(revisions, wanted) if wanted else review.revision
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
    viewed = _revision_or_default(revisions, wanted) if wanted else review.revision
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
