"""Versions: save (a new immutable version), revert, and the diff of two versions with its folds."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from common.auth import request_actor

from ..exceptions import ContentInvalid, NotFound, PlaygroundError
from ..forms import content_from_form
from ..models import Prompt, PromptVersion, Role
from ..pages import (
    version_diff_context,
    version_url,
)
from ..selectors import (
    prompt_access_get_for_user,
)
from ..services import (
    SaveResult,
    prompt_version_create,
    prompt_version_revert,
)
from ..text.diffing import FOLD_STEP, diff_expand, page_row_budget
from ..text.ranges import version_content_diff
from .common import prompt_or_404, version_or_404
from .editor import editor_values_from_post
from .prompts import prompt_page


@login_required
@require_POST
def prompt_save_view(request: HttpRequest, prompt_id: int) -> HttpResponse:
    access = prompt_access_get_for_user(
        user=request.user, prompt_id=prompt_id, min_role=Role.EDITOR
    )
    prompt = access.prompt
    parent = version_or_404(prompt, request.POST.get("parent"))
    try:
        actor = request_actor(request)
        result = prompt_version_create(
            actor=actor,
            prompt=prompt,
            parent=parent,
            content=content_from_form(request.POST),
            message=request.POST.get("commit_message", ""),
        )
    except PlaygroundError as error:
        return prompt_page(
            request,
            access,
            parent,
            editor_values=editor_values_from_post(request.POST),
            error=error,
            status=400,
        )
    version = result.version
    messages.add_message(request, *_save_notice(result, parent, request.POST.get("main_at", "")))
    return redirect(version_url(version))


def _save_notice(result: SaveResult, parent: PromptVersion, main_seen: str) -> tuple[int, str]:
    """What the save did, in words: nothing, a new version on main, or a branch (and why)."""
    version = result.version
    if result.unchanged:
        return messages.INFO, "No changes — nothing saved."
    if not result.created:
        return messages.INFO, f"Nothing new: v{version.number} already has this content."
    if result.main_moved:
        return messages.SUCCESS, f"Saved v{version.number}; main now points at it."
    if result.main_number is None:
        return messages.SUCCESS, f"Saved v{version.number} as a child of v{parent.number}."
    notice = f"Saved v{version.number} as a branch from v{parent.number}; "
    if main_seen == str(parent.pk):
        # The page showed main at the parent, so it moved while the user was editing.
        notice += f"main was moved to v{result.main_number} meanwhile and stays there."
    else:
        notice += f"main stays at v{result.main_number}."
    return messages.WARNING, notice


@login_required
@require_POST
def version_revert_view(request: HttpRequest, prompt_id: int, version_id: int) -> HttpResponse:
    prompt = prompt_or_404(request, prompt_id, Role.EDITOR)
    target = version_or_404(prompt, version_id)
    parent = version_or_404(prompt, request.POST.get("parent"))
    try:
        result = prompt_version_revert(
            actor=request_actor(request), prompt=prompt, target=target, parent=parent
        )
    except ContentInvalid as error:
        messages.error(request, error.message)
        return redirect("playground:prompt", prompt_id=prompt.pk)
    if result.unchanged:
        messages.info(request, f"No changes — main already has the content of v{target.number}.")
    else:
        messages.success(
            request, f"Reverted: v{result.version.number} has the content of v{target.number}."
        )
    return redirect(version_url(result.version))


def _diff_versions(
    request: HttpRequest, prompt_id: int
) -> tuple[Prompt, PromptVersion, PromptVersion]:
    prompt = prompt_or_404(request, prompt_id)
    a = version_or_404(prompt, request.GET.get("a"))
    b = version_or_404(prompt, request.GET.get("b"))
    return prompt, a, b


@login_required
def version_diff_view(request: HttpRequest, prompt_id: int) -> HttpResponse:
    """The whole diff with unchanged runs folded (expanded on demand by `version_diff_rows_view`),
    so the page grows with what changed, not with the text around it. `?view=split` shows
    the two sides next to each other."""
    prompt, a, b = _diff_versions(request, prompt_id)
    split = request.GET.get("view") == "split"
    context = version_diff_context(prompt=prompt, a=a, b=b, split=split)
    return render(request, "playground/diff.html", {"section": "playground", **context})


@login_required
def version_diff_rows_view(request: HttpRequest, prompt_id: int) -> HttpResponse:
    """One fold of a diff page, expanded: all of it, or its first/last FOLD_STEP rows."""
    prompt, a, b = _diff_versions(request, prompt_id)
    field = request.GET.get("field", "")
    direction = request.GET.get("dir", "all")
    try:
        start, end = int(request.GET.get("start", "")), int(request.GET.get("end", ""))
    except ValueError:
        return HttpResponse("start, end: whole numbers required.", status=400)
    if direction not in ("all", "up", "down") or not 0 <= start <= end:
        return HttpResponse("dir: all, up or down; 0 <= start <= end.", status=400)
    diff = version_content_diff(before=a, after=b, limit=None)
    text = next((t for t in diff["texts"] if t.field == field), None)
    if text is None:
        raise NotFound
    return render(
        request,
        "playground/_diff_blocks.html",
        {
            "text": text,
            "blocks": diff_expand(text.rows, start=start, end=end, direction=direction),
            "split": request.GET.get("view") == "split",
            "expand_url": request.path
            + f"?a=v{a.number}&b=v{b.number}"
            + ("&view=split" if request.GET.get("view") == "split" else ""),
            "fold_step": FOLD_STEP,
            "fold_all_max": settings.PLAYGROUND_DIFF_FOLD_ALL_MAX,
            "page_rows": page_row_budget(),
        },
    )
