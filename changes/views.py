"""Pages of change requests (docs/design.md, Prompt change review). Forms post and redirect
back to the request page with a message; access is the prompt's, checked by the selectors
(a stranger gets the 404 page on every one)."""

import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from common.auth import request_actor
from common.exceptions import DomainError
from evals.selectors import testset_list_for_prompt
from playground.models import Role
from playground.selectors import (
    PromptAccess,
    label_list,
    prompt_access_get_for_user,
    version_in_prompt,
)
from reviews.models import Annotation

from .exceptions import NotFound
from .pages import KINDS, SEVERITIES, anchor_word, request_page
from .selectors import (
    annotation_in_request,
    gate_rule_for_label,
    notice_list_for_user,
    request_get_for_user,
    request_list_for_prompt,
)
from .services import (
    change_annotate,
    change_annotation_status,
    change_close,
    change_merge,
    change_open,
    change_reply,
    change_review_start,
    change_review_submit,
    gate_rules_delete,
    gate_rules_set,
    notices_mark_read,
    suggested_edit_reject,
    suggestions_accept,
)


def _back(request_id: int, anchor: str = "") -> HttpResponse:
    return redirect(reverse("changes:request", args=[request_id]) + anchor)


def _int(value: str | None) -> int | None:
    return int(value) if value and value.isdigit() else None


@login_required
def request_view(request: HttpRequest, request_id: int) -> HttpResponse:
    target = request_get_for_user(user=request.user, request_id=request_id)
    page = request_page(user=request.user, target=target)
    return render(
        request,
        "changes/request.html",
        {
            "section": "playground",
            "page": page,
            "change": page.request,
            "kinds": KINDS,
            "severities": SEVERITIES,
            "anchor_words": {v.annotation.pk: anchor_word(v) for v in page.annotations},
            **page.diff,
        },
    )


@login_required
@require_POST
def annotate_view(request: HttpRequest, request_id: int) -> HttpResponse:
    """Add an annotation (and a suggested edit) to the caller's draft review."""
    target = request_get_for_user(user=request.user, request_id=request_id)
    form = request.POST
    suggestion = form.get("suggestion", "")
    try:
        review, _ = change_review_start(actor=request_actor(request), target=target)
        change_annotate(
            actor=request_actor(request),
            target=target,
            review=review,
            kind=form.get("kind", ""),
            severity=form.get("severity", ""),
            body=form.get("body", ""),
            exact=form.get("quote") or None,
            start=_int(form.get("start")),
            end=_int(form.get("end")),
            tradeoff=form.get("tradeoff", ""),
            suggestion=suggestion if form.get("suggest") and suggestion.strip() else None,
        )
    except DomainError as error:
        messages.error(request, error.message)
        return _back(request_id, "#annotate")
    messages.success(request, "Added to your draft review (only you see it until you submit).")
    return _back(request_id, "#my-review")


@login_required
@require_POST
def submit_view(request: HttpRequest, request_id: int) -> HttpResponse:
    """Submit the caller's draft review of the current revision with a verdict."""
    target = request_get_for_user(user=request.user, request_id=request_id)
    try:
        review, _ = change_review_start(actor=request_actor(request), target=target)
        change_review_submit(
            actor=request_actor(request),
            target=target,
            review=review,
            verdict=request.POST.get("verdict") or None,
            summary=request.POST.get("summary", ""),
        )
    except DomainError as error:
        messages.error(request, error.message)
        return _back(request_id, "#my-review")
    messages.success(request, "Review submitted.")
    return _back(request_id)


@login_required
@require_POST
def accept_view(request: HttpRequest, request_id: int) -> HttpResponse:
    """Accept the checked suggestions: one child version, pushed to the request."""
    target = request_get_for_user(user=request.user, request_id=request_id, min_role=Role.EDITOR)
    ids = [i for i in (_int(v) for v in request.POST.getlist("suggestion")) if i is not None]
    try:
        result = suggestions_accept(actor=request_actor(request), target=target, ids=ids)
    except DomainError as error:
        messages.error(request, error.message)
        return _back(request_id, "#threads")
    messages.success(
        request,
        f"Saved v{result.version.number} with {len(result.accepted)} suggestion"
        f"{'' if len(result.accepted) == 1 else 's'} applied; it is now under review.",
    )
    return _back(request_id)


@login_required
@require_POST
def reject_view(request: HttpRequest, request_id: int, suggestion_id: int) -> HttpResponse:
    target = request_get_for_user(user=request.user, request_id=request_id, min_role=Role.EDITOR)
    try:
        suggested_edit_reject(
            actor=request_actor(request), target=target, suggestion_id=suggestion_id
        )
    except DomainError as error:
        messages.error(request, error.message)
    return _back(request_id, "#threads")


@login_required
@require_POST
def thread_view(request: HttpRequest, request_id: int, annotation_id: int) -> HttpResponse:
    """Reply under an annotation, or change its status (resolve, reopen)."""
    target = request_get_for_user(user=request.user, request_id=request_id)
    annotation = annotation_in_request(
        user=request.user, request=target.request, annotation_id=annotation_id
    )
    actor = request_actor(request)
    try:
        if request.POST.get("status") in Annotation.Status.values:
            change_annotation_status(
                actor=actor, target=target, annotation=annotation, status=request.POST["status"]
            )
        else:
            change_reply(
                actor=actor, target=target, annotation=annotation, body=request.POST.get("body", "")
            )
    except DomainError as error:
        messages.error(request, error.message)
    return _back(request_id, f"#annotation-{annotation.pk}")


@login_required
@require_POST
def merge_view(request: HttpRequest, request_id: int) -> HttpResponse:
    target = request_get_for_user(user=request.user, request_id=request_id, min_role=Role.EDITOR)
    try:
        merged = change_merge(actor=request_actor(request), target=target)
    except DomainError as error:
        messages.error(request, error.message)
        return _back(request_id, "#gate")
    messages.success(
        request, f"Merged: {merged.label.name} now points at v{merged.to_version.number}."
    )
    return _back(request_id)


@login_required
@require_POST
def close_view(request: HttpRequest, request_id: int) -> HttpResponse:
    target = request_get_for_user(user=request.user, request_id=request_id)
    try:
        change_close(actor=request_actor(request), target=target)
    except DomainError as error:
        messages.error(request, error.message)
    else:
        messages.success(request, "Closed without merging.")
    return _back(request_id)


@login_required
def new_view(request: HttpRequest, prompt_id: int) -> HttpResponse:
    """ "Request review" of a version: pick the label, describe, name reviewers."""
    access = prompt_access_get_for_user(
        user=request.user, prompt_id=prompt_id, min_role=Role.EDITOR
    )
    to = version_in_prompt(prompt=access.prompt, version_id=request.GET.get("to") or "")
    error = ""
    if request.method == "POST":
        try:
            opened = change_open(
                actor=request_actor(request),
                access=access,
                label_name=request.POST.get("label", ""),
                to_version=to,
                title=request.POST.get("title", ""),
                description=request.POST.get("description", ""),
                reviewers=[u for u in request.POST.get("reviewers", "").replace(",", " ").split()],
            )
        except DomainError as failure:
            error = failure.message
        else:
            return _back(opened.pk)
    labels = [label for label in label_list(prompt=access.prompt) if label.version_id != to.pk]
    return render(
        request,
        "changes/new.html",
        {"prompt": access.prompt, "to": to, "labels": labels, "error": error, "form": request.POST},
        status=400 if error else 200,
    )


@login_required
def list_view(request: HttpRequest, prompt_id: int) -> HttpResponse:
    access = prompt_access_get_for_user(user=request.user, prompt_id=prompt_id)
    return render(
        request,
        "changes/list.html",
        {"prompt": access.prompt, "requests": request_list_for_prompt(prompt=access.prompt)[:100]},
    )


@login_required
def gate_view(request: HttpRequest, prompt_id: int, name: str) -> HttpResponse:
    """A protected label's gate rules (owner): approvals, reviewers, blockers, evaluation."""
    access = prompt_access_get_for_user(user=request.user, prompt_id=prompt_id, min_role=Role.OWNER)
    label = label_list(prompt=access.prompt).filter(name=name).first()
    if label is None:
        raise NotFound
    error, rule = "", gate_rule_for_label(label_id=label.pk)
    if request.method == "POST":
        try:
            _gate_save(request, access, name)
        except DomainError as failure:
            error = failure.message
        else:
            messages.success(request, f"Saved the gate rules of “{name}”.")
            return redirect("changes:gate", prompt_id=prompt_id, name=name)
    return render(
        request,
        "changes/gate.html",
        {
            "prompt": access.prompt,
            "label": label,
            "rule": rule,
            "graders_json": json.dumps(rule.eval_graders) if rule and rule.eval_graders else "",
            "testsets": testset_list_for_prompt(prompt_id=access.prompt.pk),
            "error": error,
        },
        status=400 if error else 200,
    )


def _gate_save(request: HttpRequest, access: PromptAccess, name: str) -> None:
    form = request.POST
    if form.get("remove"):
        gate_rules_delete(actor=request_actor(request), access=access, label_name=name)
        return
    try:
        graders = json.loads(form.get("eval_graders") or "[]")
    except ValueError:
        raise DomainError("eval_graders: not JSON.", field="eval_graders") from None
    threshold_raw = form.get("eval_threshold", "").strip()
    try:
        threshold = float(threshold_raw) if threshold_raw else None
    except ValueError:
        raise DomainError("eval_threshold: a number from 0 to 1.", field="eval_threshold") from None
    gate_rules_set(
        actor=request_actor(request),
        access=access,
        label_name=name,
        required_approvals=_int(form.get("required_approvals")) or 0,
        required_reviewers=form.get("required_reviewers", "").replace(",", " ").split(),
        no_blockers=bool(form.get("no_blockers")),
        eval_testset=_int(form.get("eval_testset")),
        eval_graders=graders,
        eval_threshold=threshold,
    )


@login_required
def inbox_view(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        notices_mark_read(actor=request_actor(request))
        return redirect("changes:inbox")
    return render(
        request,
        "changes/inbox.html",
        {
            "section": "changes-inbox",
            "notices": list(notice_list_for_user(user=request.user)[:100]),
        },
    )
