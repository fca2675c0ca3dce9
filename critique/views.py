"""Pages of the critique bridge: the suggestions fragment a draft panel polls, and the
practice page's buttons (copy the starter, score a critique version on the six documents)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from common.auth import request_actor
from common.exceptions import DomainError
from playground.models import Role
from playground.selectors import prompt_access_get_for_user, version_in_prompt

from .panels import suggestion_context
from .selectors import (
    critique_prompts_visible,
    draft_get_for_user,
    practice_columns,
    suggestion_list,
)
from .services import (
    critique_prompt_copy,
    draft_sync,
    practice_evaluation_create,
    practice_testset_ensure,
)


@login_required
@require_GET
def draft_suggestions_view(request: HttpRequest, draft_id: int) -> HttpResponse:
    """The suggestions after position `after`, and the draft's status, as HTML."""
    draft = draft_sync(draft=draft_get_for_user(user=request.user, draft_id=draft_id))
    raw = request.GET.get("after", "-1")
    after = int(raw) if raw.lstrip("-").isdigit() and len(raw) < 10 else -1
    return render(
        request,
        "critique/_suggestions_fragment.html",
        {"draft": draft, **suggestion_context(suggestion_list(draft=draft, after=after))},
    )


@login_required
@require_POST
def starter_copy_view(request: HttpRequest) -> HttpResponse:
    actor = request_actor(request)
    prompt, _ = critique_prompt_copy(actor=actor, docs=practice_columns(user=actor))
    messages.success(request, "The starter critique prompt is now yours to edit.")
    return redirect(reverse("playground:prompt", args=[prompt.pk]))


@login_required
@require_POST
def practice_score_view(request: HttpRequest) -> HttpResponse:
    """Score a version of one of the user's critique prompts on the six documents."""
    actor = request_actor(request)
    prompt_id = request.POST.get("prompt", "")
    prompt = (
        critique_prompts_visible(user=actor).filter(pk=prompt_id).first()
        if prompt_id.isdigit() and len(prompt_id) < 10
        else None
    )
    if prompt is None:
        return redirect("reviews:practice")
    access = prompt_access_get_for_user(user=actor, prompt_id=prompt.pk, min_role=Role.VIEWER)
    version = version_in_prompt(prompt=prompt, version_id=request.POST.get("version"))
    provider = request.POST.get("provider") or version.provider
    try:
        evaluation = practice_evaluation_create(
            actor=actor,
            prompt=prompt,
            role=access.role,
            revision=practice_testset_ensure(
                actor=actor, prompt=prompt, role=access.role, docs=practice_columns(user=actor)
            ),
            versions=[version.pk],
            models=[{"provider": provider, "model": request.POST.get("model", "")}],
        )
    except DomainError as error:
        messages.error(request, error.message)
        return redirect("reviews:practice")
    return redirect(reverse("evals:evaluation", args=[evaluation.pk]))
