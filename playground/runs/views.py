"""Run pages: the run card and history fragments of the version page's Run panel, a run's own
page, continue, cancel, and the side-by-side compare page. Parse, call one service or
selector, render (the panel's JS streams through the API; these pages work without it)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from common.auth import request_actor
from common.exceptions import Conflict, Forbidden

from ..exceptions import NotFound, PlaygroundError
from ..models import Prompt, PromptVersion, Role, Run
from ..pages import version_url
from ..selectors import prompt_get_for_user, version_get_for_user, version_tree
from ..text.content import PROVIDERS
from ..text.diffing import inline_words_diff
from ..text.ranges import version_preview
from .limits import run_start
from .selectors import (
    RunAccess,
    RunTimings,
    run_get_for_user,
    run_list_for_version,
    run_request,
    run_timings,
)
from .services import run_cancel, run_continue

HISTORY_LIMIT = 20


@dataclass(frozen=True)
class RunCard:
    """What the run card shows: the run, its timings, and what the viewer may do with it."""

    run: Run
    timings: RunTimings
    finished: bool
    tool_calls_json: str
    can_cancel: bool
    can_continue: bool
    poll: bool  # htmx polls the card until the run finishes (the no-SSE fallback)
    variables_visible: bool  # runs.selectors.run_variables_visible for this reader


def run_card_build(*, access: RunAccess, user: Any, poll: bool) -> RunCard:
    run = access.run
    finished = run.status in Run.FINISHED
    return RunCard(
        run=run,
        timings=run_timings(run=run),
        finished=finished,
        tool_calls_json=json.dumps(run.tool_calls, indent=2, ensure_ascii=False)
        if run.tool_calls
        else "",
        can_cancel=not finished and user.pk in (run.created_by_id, run.version.prompt.owner_id),
        can_continue=run.status == Run.Status.DONE
        and bool(run.output)
        and access.role in (Role.OWNER, Role.EDITOR),
        poll=poll and not finished,
        variables_visible=access.variables_visible,
    )


def _access(request: HttpRequest, run_id: int | str | None) -> RunAccess:
    try:
        return run_get_for_user(user=request.user, run_id=run_id)
    except NotFound:
        raise Http404 from None


def _version(request: HttpRequest, version_id: Any) -> PromptVersion:
    try:
        return version_get_for_user(user=request.user, version_id=version_id)
    except NotFound:
        raise Http404 from None


def _prompt(request: HttpRequest, prompt_id: int) -> Prompt:
    try:
        return prompt_get_for_user(user=request.user, prompt_id=prompt_id)
    except NotFound:
        raise Http404 from None


def _form_variables(request: HttpRequest, declared: dict[str, str]) -> dict[str, str]:
    """`var:<name>` fields of a run form, for the names the version declares."""
    return {name: request.POST[f"var:{name}"] for name in declared if f"var:{name}" in request.POST}


@login_required
def run_card_view(request: HttpRequest, run_id: int) -> HttpResponse:
    access = _access(request, run_id)
    polled = request.GET.get("poll") == "1"
    card = run_card_build(access=access, user=request.user, poll=polled)
    return render(request, "playground/_run_card.html", {"card": card, "polled": polled})


@login_required
def run_history_view(request: HttpRequest, version_id: int) -> HttpResponse:
    version = _version(request, version_id)
    runs = list(run_list_for_version(version=version)[:HISTORY_LIMIT])
    rows = [(run, run_timings(run=run)) for run in runs]
    return render(request, "playground/_run_history.html", {"rows": rows, "version": version})


@dataclass(frozen=True)
class RequestSent:
    """The call a run sent, as its page shows it: pretty JSON of the headers and body, or, for a
    version with long texts, only their size (the page never holds a whole long text; the API
    link gives the call whole)."""

    method: str
    url: str
    shown: str  # headers and body as indented JSON; "" when the texts are long
    text_chars: int  # characters in the version's texts
    api_url: str
    variables_filled: bool


def _request_sent(request: HttpRequest, access: RunAccess) -> RequestSent:
    """Built as `GET /api/v1/runs/{id}/request/` builds it, with the same visibility rules."""
    run = access.run
    preview = version_preview(version=run.version)
    built = run_request(
        run=run,
        variables_visible=access.variables_visible,
        base_url_visible=bool(getattr(request.user, "is_staff", False)),
    )
    shown = (
        ""
        if preview.lazy
        else json.dumps(
            {"headers": built["headers"], "body": built["body"]}, indent=2, ensure_ascii=False
        )
    )
    return RequestSent(
        method=str(built["method"]),
        url=str(built["url"]),
        shown=shown,
        text_chars=preview.total,
        api_url=reverse("api-run-request", args=[run.pk]),
        variables_filled=access.variables_visible,
    )


@login_required
def run_detail_view(request: HttpRequest, run_id: int) -> HttpResponse:
    access = _access(request, run_id)
    run = access.run
    # poll=False: runs.js streams the card (and falls back to polling); without scripts the
    # page refreshes itself (run_detail.html).
    card = run_card_build(access=access, user=request.user, poll=False)
    return render(
        request,
        "playground/run_detail.html",
        {
            "section": "playground",
            "card": card,
            "prompt": run.version.prompt,
            "run": run,
            "request_sent": _request_sent(request, access),
        },
    )


@login_required
@require_POST
def run_start_view(request: HttpRequest, version_id: int) -> HttpResponse:
    """The Run form without JavaScript: queue the run, then show its page (which polls)."""
    version = _version(request, version_id)
    try:
        result = run_start(
            actor=request_actor(request),
            version=version,
            variables=_form_variables(request, version.variables),
        )
    except PlaygroundError as error:
        messages.error(request, error.message)
        return redirect(version_url(version))
    return redirect("playground:run", run_id=result.run.pk)


@login_required
@require_POST
def run_cancel_view(request: HttpRequest, run_id: int) -> HttpResponse:
    access = _access(request, run_id)
    try:
        run_cancel(actor=request_actor(request), run=access.run)
    except Forbidden as error:
        raise PermissionDenied(error.message) from None
    return redirect("playground:run", run_id=run_id)


@login_required
@require_POST
def run_continue_view(request: HttpRequest, run_id: int) -> HttpResponse:
    access = _access(request, run_id)
    try:
        result = run_continue(
            actor=request_actor(request),
            run=access.run,
            message=request.POST.get("message", ""),
            role=access.role,
        )
    except Forbidden as error:
        raise PermissionDenied(error.message) from None
    except (PlaygroundError, Conflict) as error:
        messages.error(request, error.message)
        return redirect("playground:run", run_id=run_id)
    version = result.version
    messages.success(
        request,
        f"Saved v{version.number}: the conversation continues from run {run_id}."
        if result.created
        else f"v{version.number} already continues this run with that message.",
    )
    return redirect(version_url(version))


# --- compare ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class CompareSide:
    key: str  # "a" or "b"
    version: PromptVersion
    provider: str
    model: str
    declared: tuple[str, ...]
    card: RunCard | None


def _side(
    request: HttpRequest, prompt: Prompt, key: str, versions: list[PromptVersion], default: int
) -> CompareSide:
    """One side: `?a=v3` names version 3 (a bare integer is a version id, from older links);
    without one, the version numbered `default`."""
    by_number = {v.number: v for v in versions}
    by_id = {v.pk: v for v in versions}
    raw = request.GET.get(key) or request.POST.get(key) or ""
    try:
        if not raw:
            version = by_number[default]
        elif raw[:1] in ("v", "V"):
            version = by_number[int(raw[1:])]
        else:
            version = by_id[int(raw)]
    except (KeyError, ValueError):
        raise Http404 from None
    full = _version(request, version.pk)
    card = None
    run_raw = request.GET.get(f"run_{key}")
    if run_raw:
        access = _access(request, run_raw)
        if access.run.version.prompt_id != prompt.pk:
            raise Http404
        card = run_card_build(access=access, user=request.user, poll=False)
    run = card.run if card else None
    return CompareSide(
        key=key,
        version=full,
        provider=run.provider if run else request.GET.get(f"provider_{key}") or full.provider,
        model=run.model if run else request.GET.get(f"model_{key}") or full.model,
        declared=tuple(sorted(full.variables)),
        card=card,
    )


@login_required
def compare_view(request: HttpRequest, prompt_id: int) -> HttpResponse:
    """Two versions (or one version on two models) side by side on the same variables."""
    prompt = _prompt(request, prompt_id)
    versions = list(version_tree(prompt=prompt))
    # By default B is the newest version and A the one it came from (never the same twice).
    b = _side(request, prompt, "b", versions, versions[-1].number)
    by_id = {v.pk: v for v in versions}
    parent = by_id.get(b.version.parent_id or 0)
    earlier = [v for v in versions if v.number < b.version.number]
    before = parent or (earlier[-1] if earlier else b.version)
    a = _side(request, prompt, "a", versions, before.number)
    if request.method == "POST":
        return _compare_start(request, prompt, a, b)
    variables: dict[str, str] = {}
    for side in (b, a):  # a's defaults win where both declare a name
        # From the row: the texts (maybe megabytes) are not needed for the variables.
        variables.update(side.version.variables)
    for card in (b.card, a.card):  # a viewer sees only their own runs' values
        if a.card and b.card and card is not None and card.variables_visible:
            variables.update(card.run.variables)
    diff = None
    if a.card and b.card and a.card.finished and b.card.finished:
        diff = inline_words_diff(a.card.run.output, b.card.run.output)
    return render(
        request,
        "playground/compare.html",
        {
            "section": "playground",
            "prompt": prompt,
            "versions": versions,
            "sides": (a, b),
            "variables": variables,
            "providers": PROVIDERS,
            "diff": diff,
        },
    )


def _compare_start(
    request: HttpRequest, prompt: Prompt, a: CompareSide, b: CompareSide
) -> HttpResponse:
    """Without JavaScript: queue both runs, then show them side by side (the cards poll)."""
    values = {
        key.removeprefix("var:"): value
        for key, value in request.POST.items()
        if key.startswith("var:")
    }
    page = (
        f"{reverse('playground:compare', args=[prompt.pk])}"
        f"?a=v{a.version.number}&b=v{b.version.number}"
    )
    runs: dict[str, int] = {}
    try:
        for side in (a, b):
            result = run_start(
                actor=request_actor(request),
                version=side.version,
                variables={k: v for k, v in values.items() if k in side.declared},
                provider=request.POST.get(f"provider_{side.key}") or None,
                model=request.POST.get(f"model_{side.key}") or None,
            )
            runs[side.key] = result.run.pk
    except PlaygroundError as error:
        messages.error(request, error.message)
        return redirect(page)
    return redirect(f"{page}&run_a={runs['a']}&run_b={runs['b']}")


@login_required
def compare_diff_view(request: HttpRequest, prompt_id: int) -> HttpResponse:
    """The word diff of two finished runs' outputs (the compare page loads it when both end)."""
    prompt = _prompt(request, prompt_id)
    outputs = []
    for key in ("run_a", "run_b"):
        access = _access(request, request.GET.get(key))
        if access.run.version.prompt_id != prompt.pk:
            raise Http404
        outputs.append(access.run.output)
    return render(request, "playground/_compare_diff.html", {"diff": inline_words_diff(*outputs)})
