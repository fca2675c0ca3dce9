"""Review desk pages: parse, call selectors or one service, render.

The review page itself calls the JSON API from `static/js/review.js` for the interactive parts
(annotate, rank, issue status, re-attach); the checklist and submit are plain forms (htmx swaps
the checklist panel in place).
"""

from dataclasses import dataclass
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_POST

from common.exceptions import Forbidden
from questionbank.models import Question

from .exceptions import NotFound, ReviewsError
from .export import risk_order
from .models import (
    Annotation,
    AnnotationAnchor,
    Area,
    ChecklistItem,
    DesignDoc,
    DocRevision,
    Review,
)
from .practice.views import doc_practice, review_practice
from .rendering import markdown_render, source_render
from .selectors import (
    annotation_list,
    checklist_coverage,
    checklist_list,
    doc_get_for_user,
    doc_list_visible,
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

AREA_LABELS = dict(Area.choices)
COVERAGE_SEGMENTS = [
    ("covered", "Covered"),
    ("gap", "Gap"),
    ("na", "N/A"),
    ("unset", "Not assessed"),
]


def _doc_or_404(request: HttpRequest, doc_id: Any) -> DesignDoc:
    try:
        return doc_get_for_user(user=request.user, doc_id=doc_id)
    except NotFound:
        raise Http404 from None


def _review_or_404(request: HttpRequest, review_id: Any) -> Review:
    try:
        return review_get_for_user(user=request.user, review_id=review_id)
    except NotFound:
        raise Http404 from None


def _revision_or_default(revisions: list[DocRevision], wanted: Any) -> DocRevision:
    """The revision `?rev=` names among the document's (404 if it is not one), else the
    latest."""
    if not wanted:
        return revisions[-1]
    found = next((r for r in revisions if str(r.pk) == str(wanted)), None)
    if found is None:
        raise Http404
    return found


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
        "questions": Question.objects.only("slug", "title"),
        "values": {"question": request.GET.get("question", "")},
    }
    if request.method != "POST":
        return render(request, "reviews/doc_new.html", context)
    values = {
        key: request.POST.get(key, "") for key in ("title", "question", "constraints", "body")
    }
    try:
        question = Question.objects.filter(slug=values["question"]).first()
        doc, _ = doc_create(
            actor=request.user,
            title=values["title"],
            body=values["body"],
            question=question,
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
    if viewed is None:
        viewed = _revision_or_default(revisions, request.GET.get("rev"))
    text = revision_text(revision=viewed)
    latest = revisions[-1]
    reviews = list(review_list_for_doc(user=request.user, doc=doc))
    mine = next(
        (r for r in reviews if r.reviewer_id == request.user.pk and r.revision_id == viewed.pk),
        None,
    )
    is_author = doc.author_id == request.user.pk
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
            "reviews": reviews,
            "my_review": mine,
            "is_author": is_author,
            "editor_body": draft
            if draft is not None
            else (text if viewed.pk == latest.pk else revision_text(revision=latest)),
            "constraints_text": "\n".join(doc.constraints),
            "error": error,
            "practice": doc_practice(doc=doc, user=request.user),
        },
        status=status,
    )


@login_required
def doc_detail_view(request: HttpRequest, doc_id: int) -> HttpResponse:
    return _doc_page(request, _doc_or_404(request, doc_id))


@login_required
@require_POST
def doc_revise_view(request: HttpRequest, doc_id: int) -> HttpResponse:
    doc = _doc_or_404(request, doc_id)
    body = request.POST.get("body", "")
    try:
        revision, created = doc_revision_create(
            actor=request.user, doc=doc, body=body, message=request.POST.get("message", "")
        )
    except Forbidden as error:
        raise PermissionDenied(error.message) from None
    except ReviewsError as error:
        return _doc_page(request, doc, error=error, draft=body, status=400)
    if created:
        messages.success(request, f"Saved r{revision.number}; annotations are re-anchored onto it.")
    else:
        messages.info(request, f"Nothing new: r{revision.number} already has this text.")
    return redirect(f"{reverse('reviews:doc', args=[doc.pk])}?rev={revision.pk}")


@login_required
@require_POST
def doc_constraints_view(request: HttpRequest, doc_id: int) -> HttpResponse:
    doc = _doc_or_404(request, doc_id)
    try:
        doc_constraints_set(
            actor=request.user,
            doc=doc,
            constraints=_constraints_from_text(request.POST.get("constraints", "")),
        )
    except Forbidden as error:
        raise PermissionDenied(error.message) from None
    except ReviewsError as error:
        messages.error(request, error.message)
    return redirect("reviews:doc", doc_id=doc.pk)


@login_required
@require_POST
def review_start_view(request: HttpRequest, doc_id: int) -> HttpResponse:
    doc = _doc_or_404(request, doc_id)
    try:
        revision = revision_in_doc(doc=doc, revision_id=request.POST.get("revision"))
    except NotFound:
        raise Http404 from None
    review, _ = review_create(actor=request.user, revision=revision)
    return redirect("reviews:review", review_id=review.pk)


# --- the review page --------------------------------------------------------------------------


@dataclass
class AnnotationView:
    """One annotation as the page shows it on the viewed revision."""

    annotation: Annotation
    here: AnnotationAnchor | None  # its anchor on the viewed revision (None: not computed yet)
    trail: list[AnnotationAnchor]
    can_change_status: bool
    can_reattach: bool

    @property
    def status_here(self) -> str:
        return self.here.status if self.here is not None else "pending"

    @property
    def where(self) -> str:
        """The innermost two headings above the passage (the full path is its title)."""
        return " › ".join(self.annotation.heading_path[-2:])


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
    for item in items:
        item.label = AREA_LABELS[item.area]
    return {
        "review": review,
        "checklist": items,
        "chart": coverage_chart(items),
        "checklist_statuses": ChecklistItem.Status.choices,
        "can_edit": can_edit,
    }


def _review_page(request: HttpRequest, review: Review) -> HttpResponse:
    doc = review.revision.doc
    revisions = list(revision_list(doc=doc))
    viewed = review.revision
    if request.GET.get("rev"):
        viewed = _revision_or_default(revisions, request.GET["rev"])
    text = revision_text(revision=viewed)
    user_id = request.user.pk
    can_edit = review.status == Review.Status.DRAFT and review.reviewer_id == user_id
    views: list[AnnotationView] = []
    for annotation in annotation_list(review=review):
        trail = list(annotation.anchors.all())
        here = next((a for a in trail if a.revision_id == viewed.pk), None)
        may_status = user_id in (annotation.author_id, doc.author_id)
        views.append(
            AnnotationView(
                annotation=annotation,
                here=here,
                trail=trail,
                can_change_status=may_status,
                can_reattach=may_status and viewed.number > review.revision.number,
            )
        )
    highlights = [
        (v.here.start, v.here.end, v.annotation.pk)
        for v in views
        if v.here is not None and v.here.start is not None
    ]
    by_area = [
        (area, label, [v for v in views if v.annotation.area == area])
        for area, label in Area.choices
    ]
    here_counts: dict[str, int] = {}
    for v in views:
        here_counts[v.status_here] = here_counts.get(v.status_here, 0) + 1
    return render(
        request,
        "reviews/review_detail.html",
        {
            "section": "reviews",
            "review": review,
            "doc": doc,
            "revisions": revisions,
            "viewed": viewed,
            "on_reviewed": viewed.pk == review.revision_id,
            "doc_html": mark_safe(  # noqa: S308 (sanitised by nh3)
                markdown_render(text=text, highlights=highlights)
            ),
            "source_html": mark_safe(  # noqa: S308 (escaped by source_render)
                source_render(text=text, highlights=highlights)
            ),
            "annotations": views,
            "risks": sorted(
                (v for v in views if v.annotation.kind == Annotation.Kind.RISK),
                key=lambda v: risk_order(v.annotation),
            ),
            "by_area": [group for group in by_area if group[2]],
            "orphans": [v for v in views if v.status_here == AnnotationAnchor.Status.ORPHANED],
            "here_counts": sorted(here_counts.items()),
            "areas": Area.choices,
            "kinds": Annotation.Kind.choices,
            "severities": Annotation.Severity.choices,
            "issue_statuses": Annotation.Status.choices,
            "is_doc_author": doc.author_id == user_id,
            "practice": review_practice(review=review, user=request.user),
            **_checklist_context(review, can_edit),
        },
    )


@login_required
def review_detail_view(request: HttpRequest, review_id: int) -> HttpResponse:
    return _review_page(request, _review_or_404(request, review_id))


@login_required
@require_POST
def review_checklist_view(request: HttpRequest, review_id: int) -> HttpResponse:
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
        review = review_update(actor=request.user, review=review, checklist=checklist)
    except Forbidden as exc:
        raise PermissionDenied(exc.message) from None
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
            actor=request.user, review=review, summary=request.POST.get("summary")
        )
    except Forbidden as exc:
        raise PermissionDenied(exc.message) from None
    except ReviewsError as exc:
        messages.error(request, exc.message)
        return redirect("reviews:review", review_id=review.pk)
    if changed:
        messages.success(
            request, "Review submitted: the author and other reviewers can read it now."
        )
    return redirect("reviews:review", review_id=review.pk)
