"""Labels: move one to a version (compare-and-set), protect it."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from common.auth import request_actor
from common.exceptions import Forbidden

from ..exceptions import LabelConflict, LabelGated, PlaygroundError
from ..models import Label, PromptVersion, Role
from ..pages import (
    version_url,
)
from ..selectors import (
    PromptAccess,
    label_list,
    label_moves,
    prompt_access_get_for_user,
)
from ..services import (
    label_move,
    label_protect_set,
)
from .common import HtmxHttpRequest, version_or_404


def _labels_context(access: PromptAccess, selected: PromptVersion) -> dict[str, Any]:
    return {
        "prompt": access.prompt,
        "selected": selected,
        "labels": list(label_list(prompt=access.prompt)),
        "label_moves": label_moves(prompt=access.prompt, limit=30),
        "can_edit": access.can_edit,
        "is_owner": access.is_owner,
    }


def _labels_answer(
    request: HtmxHttpRequest,
    access: PromptAccess,
    selected: PromptVersion,
    *,
    done: str = "",
    error: str = "",
    retry: Label | None = None,
    field_error: bool = False,
    name_value: str = "",
    status: int = 200,
) -> HttpResponse:
    """A success reloads the page (the tree and badges show labels too) with a message; an
    error or a conflict swaps just the labels panel under htmx, keeping the retry at hand."""
    page_url = version_url(selected)
    if not request.htmx or not error:
        if error:
            messages.error(request, error)
        elif done:
            messages.success(request, done)
        if request.htmx:
            response = HttpResponse(status=204)
            response["HX-Redirect"] = page_url
            return response
        return redirect(page_url)
    return render(
        request,
        "playground/_labels_panel.html",
        {
            **_labels_context(access, selected),
            "label_done": done,
            "label_error": error,
            "label_retry": retry,
            "label_field_error": field_error,
            "label_name_value": name_value,  # what was typed stays in the field
        },
        status=status,
    )


def _label_conflict_answer(
    request: HtmxHttpRequest,
    access: Any,
    version: PromptVersion,
    name: str,
    error: LabelConflict | LabelGated,
) -> HttpResponse:
    """409: who moved the label, with a retry against where it points now; or, for "create"
    with the name of a label already on this version, that there is nothing to change; or that
    the label is gated (it moves by a merged change request), naming its rules."""
    if isinstance(error, LabelGated):
        return _labels_answer(request, access, version, error=error.message, status=409)
    current = label_list(prompt=access.prompt).filter(name=name).first()
    if current is not None and current.version_id == version.pk:
        return _labels_answer(
            request,
            access,
            version,
            error=f"“{current.name}” is already on v{version.number}: nothing to change.",
            name_value=name,
            status=409,
        )
    return _labels_answer(request, access, version, error=error.message, retry=current, status=409)


@login_required
@require_POST
def label_move_view(request: HtmxHttpRequest, prompt_id: int) -> HttpResponse:
    """Create a label on a version, or move one there by compare-and-set (`expected` is where
    the page saw it; empty = the label must be new). A lost race answers 409 with who moved it
    and a button to retry against where it points now."""
    access = prompt_access_get_for_user(
        user=request.user, prompt_id=prompt_id, min_role=Role.EDITOR
    )
    prompt, expected_raw = access.prompt, request.POST.get("expected", "")
    version = version_or_404(prompt, request.POST.get("version"))
    name = request.POST.get("name", "").strip()
    expected = version_or_404(prompt, expected_raw) if expected_raw else None
    try:
        label = label_move(
            actor=request_actor(request),
            prompt=prompt,
            name=name,
            version=version,
            expected=expected,
            expected_given=True,
            override=request.POST.get("override", ""),
        )
    except (LabelConflict, LabelGated) as error:
        return _label_conflict_answer(request, access, version, name, error)
    except Forbidden as error:
        return _labels_answer(request, access, version, error=error.message, status=403)
    except PlaygroundError as error:
        return _labels_answer(
            request,
            access,
            version,
            error=error.message,
            field_error=error.field == "name",
            name_value=name,
            status=400,
        )
    verb = "Created" if expected is None else "Moved"
    return _labels_answer(
        request, access, version, done=f"{verb} “{label.name}” at v{version.number}."
    )


@login_required
@require_POST
def label_protect_view(request: HtmxHttpRequest, prompt_id: int, name: str) -> HttpResponse:
    access = prompt_access_get_for_user(user=request.user, prompt_id=prompt_id, min_role=Role.OWNER)
    version = version_or_404(access.prompt, request.POST.get("version"))
    protected = request.POST.get("protected") == "1"
    label = label_protect_set(
        actor=request_actor(request), prompt=access.prompt, name=name, protected=protected
    )
    state = "protected: only you can move it" if label.protected else "unprotected"
    return _labels_answer(request, access, version, done=f"“{label.name}” is {state}.")
