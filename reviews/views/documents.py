"""Design documents: the list, a new document, its page, a revision, its pinned constraints,
and starting a review of it. Parse, call selectors or one service, render."""

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_POST

from common.auth import request_actor
from questionbank.selectors import question_list

from ..exceptions import ReviewsError
from ..models import DesignDoc, DocRevision
from ..pages.threads import author_view_build
from ..rendering import markdown_render
from ..selectors import (
    doc_get_for_user,
    doc_list_visible,
    question_from_slug,
    review_list_for_doc,
    review_list_for_user,
    revision_in_doc,
    revision_list,
    revision_text,
)
from ..services import (
    doc_constraints_set,
    doc_create,
    doc_revision_create,
    review_create,
)
from .common import legacy_revision_redirect, revision_or_default


def _doc_or_404(request: HttpRequest, doc_id: Any) -> DesignDoc:
    return doc_get_for_user(user=request.user, doc_id=doc_id)


def _constraints_from_text(raw: str) -> list[str]:
    return [line.strip() for line in (raw or "").splitlines() if line.strip()]


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
    viewed = viewed or revision_or_default(revisions, request.GET.get("r"))
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
        return legacy_revision_redirect(request, list(revision_list(doc=doc)))
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
