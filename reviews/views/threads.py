"""Pages of the review threads: reply and edit forms (htmx swaps the thread in place), the
revision diff and the inbox. Parse, call one service or selector, render."""

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from common.auth import request_actor
from common.exceptions import Forbidden

from ..exceptions import NotFound, ReviewsError
from ..models import Annotation, DesignDoc, DocRevision, Review
from ..pages.threads import (
    ThreadView,
    anchor_pairs,
    diff_rows_view,
    inbox_item_view,
    inbox_target_url,
    thread_of,
)
from ..revision_diff import revision_diff_compute
from ..selectors import (
    annotation_get_for_user,
    doc_get_for_user,
    inbox_item_get_for_user,
    inbox_list_for_user,
    reply_get_for_user,
    reply_list,
    revision_diff_anchors,
    revision_in_doc,
    revision_list,
    revision_text,
)
from ..services import (
    AnnotationChanges,
    annotation_update,
    inbox_mark_read,
    reply_create,
    reply_update,
)
from .common import HtmxHttpRequest

INBOX_PAGE = 100


def _or_404(fn: Any, **kwargs: Any) -> Any:
    try:
        return fn(**kwargs)
    except NotFound:
        raise Http404 from None


def _back(request: HttpRequest, default: str) -> str:
    """The page the form was on (`next`), if it is one of ours, else `default`."""
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return default


def _thread(request: HttpRequest, annotation: Annotation) -> ThreadView:
    """The annotation's thread as the page shows it (replies and their edits: two queries)."""
    return thread_of(
        annotation.pk,
        list(reply_list(annotation=annotation).prefetch_related("edits")),
        user_id=request.user.pk,
        submitted=annotation.review.status == Review.Status.SUBMITTED,
    )


def _thread_response(
    request: HttpRequest, annotation: Annotation, *, error: str = "", draft: str = ""
) -> HttpResponse:
    """The thread partial for htmx to swap in. A refused reply comes back as 200 with the
    error and the typed text kept (htmx does not swap 4xx responses); the JSON API is where
    bad input answers 400."""
    return render(
        request,
        "reviews/_thread.html",
        {
            "thread": _thread(request, annotation),
            "thread_error": error,
            "draft": draft,
            "next": "",
        },
    )


def _thread_answer(
    request: HtmxHttpRequest,
    annotation: Annotation,
    default: str,
    *,
    error: str = "",
    draft: str = "",
) -> HttpResponse:
    """After a write to a thread: for htmx the thread partial (a refusal shown in it, the typed
    text kept); else back to the page the form was on, a refusal as a message."""
    if request.htmx:
        return _thread_response(request, annotation, error=error, draft=draft)
    if error:
        messages.error(request, error)
    return redirect(_back(request, default))


@login_required
@require_POST
def reply_create_view(request: HtmxHttpRequest, annotation_id: int) -> HttpResponse:
    annotation = _or_404(annotation_get_for_user, user=request.user, annotation_id=annotation_id)
    default = f"{reverse('reviews:review', args=[annotation.review_id])}#ann-{annotation.pk}"
    body = request.POST.get("body", "")
    try:
        reply_create(actor=request_actor(request), annotation=annotation, body=body)
    except ReviewsError as error:
        return _thread_answer(request, annotation, default, error=error.message, draft=body)
    return _thread_answer(request, annotation, default)


@login_required
@require_POST
def reply_edit_view(request: HtmxHttpRequest, reply_id: int) -> HttpResponse:
    reply = _or_404(reply_get_for_user, user=request.user, reply_id=reply_id)
    annotation = annotation_get_for_user(user=request.user, annotation_id=reply.annotation_id)
    default = f"{reverse('reviews:review', args=[annotation.review_id])}#reply-{reply.pk}"
    try:
        reply_update(actor=request_actor(request), reply=reply, body=request.POST.get("body", ""))
    except Forbidden as error:
        raise PermissionDenied(error.message) from None
    except ReviewsError as error:
        return _thread_answer(request, annotation, default, error=error.message)
    return _thread_answer(request, annotation, default)


def _correction_changes(request: HttpRequest) -> AnnotationChanges:
    """The fields the correction form sent; the service validates their values."""
    form = request.POST
    changes = AnnotationChanges()
    if "body" in form:
        changes["body"] = form["body"]
    if "severity" in form:
        changes["severity"] = form["severity"]
    if "area" in form:
        changes["area"] = form["area"]
    if "tradeoff" in form:
        changes["tradeoff"] = form["tradeoff"]
    return changes


@login_required
@require_POST
def annotation_edit_view(request: HtmxHttpRequest, annotation_id: int) -> HttpResponse:
    """The annotation's author corrects it after submission (the earlier text is kept)."""
    annotation = _or_404(annotation_get_for_user, user=request.user, annotation_id=annotation_id)
    changes = _correction_changes(request)
    default = f"{reverse('reviews:review', args=[annotation.review_id])}#ann-{annotation.pk}"
    try:
        annotation_update(actor=request_actor(request), annotation=annotation, changes=changes)
    except Forbidden as error:
        raise PermissionDenied(error.message) from None
    except ReviewsError as error:
        messages.error(request, error.message)
    return redirect(_back(request, default))


# --- the revision diff -------------------------------------------------------------------------


def _sides(
    request: HttpRequest, doc: DesignDoc, revisions: list[DocRevision]
) -> tuple[DocRevision, DocRevision]:
    """The revisions `?a=` (older side) and `?b=` (newer side) name, by default the latest and
    the one before it."""
    new = (
        _or_404(revision_in_doc, doc=doc, revision_id=request.GET["b"])
        if request.GET.get("b")
        else revisions[-1]
    )
    default_old = next((r for r in reversed(revisions) if r.number < new.number), revisions[0])
    old = (
        _or_404(revision_in_doc, doc=doc, revision_id=request.GET["a"])
        if request.GET.get("a")
        else default_old
    )
    return old, new


@login_required
def revision_diff_view(request: HtmxHttpRequest, doc_id: int) -> HttpResponse:
    """`?a=` (older side) and `?b=` (newer side): revision ids of the document; by default
    the latest revision against the one before it."""
    doc = _or_404(doc_get_for_user, user=request.user, doc_id=doc_id)
    revisions = list(revision_list(doc=doc))
    if len(revisions) < 2:
        messages.info(request, "This document has one revision: nothing to compare yet.")
        return redirect("reviews:doc", doc_id=doc.pk)
    old, new = _sides(request, doc, revisions)
    anchors = revision_diff_anchors(user=request.user, old=old, new=new)
    diff = revision_diff_compute(
        old_text=revision_text(revision=old),
        new_text=revision_text(revision=new),
        anchors=anchor_pairs(anchors, old, new),
    )
    annotations = {anchor.annotation_id: anchor.annotation for anchor in anchors}
    marks = [m for m in diff.markers if m.status != "exact"]
    return render(
        request,
        "reviews/revision_diff.html",
        {
            "section": "reviews",
            "doc": doc,
            "revisions": revisions,
            "old": old,
            "new": new,
            "diff": diff,
            "items": diff_rows_view(diff, annotations, new_revision_number=new.number),
            "moved_count": sum(1 for m in marks if m.status in ("moved", "fuzzy", "reattached")),
            "orphaned_count": sum(1 for m in marks if m.status == "orphaned"),
        },
    )


# --- the inbox ----------------------------------------------------------------------------------


@login_required
def inbox_view(request: HtmxHttpRequest) -> HttpResponse:
    items = list(inbox_list_for_user(user=request.user)[:INBOX_PAGE])
    return render(
        request,
        "reviews/inbox.html",
        {"section": "inbox", "items": [inbox_item_view(item) for item in items]},
    )


@login_required
def inbox_open_view(request: HtmxHttpRequest, item_id: int) -> HttpResponse:
    """Follow an inbox item to what it is about, marking it read."""
    item = _or_404(inbox_item_get_for_user, user=request.user, item_id=item_id)
    inbox_mark_read(actor=request_actor(request), ids=[item.pk])
    return redirect(inbox_target_url(item))


@login_required
@require_POST
def inbox_read_view(request: HtmxHttpRequest) -> HttpResponse:
    changed = inbox_mark_read(actor=request_actor(request))
    if changed:
        messages.success(request, f"Marked {changed} item{'s' if changed != 1 else ''} read.")
    return redirect("reviews:inbox")
