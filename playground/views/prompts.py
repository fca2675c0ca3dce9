"""Prompt pages: the list, a new prompt, rename and archive, the prompt page with its editor
and version tree."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from common.auth import request_actor
from common.limits import TITLE_MAX_CHARS
from questionbank.selectors import question_by_slug, question_list

from ..exceptions import ContentInvalid, NotFound, PlaygroundError
from ..forms import content_as_form_values, content_from_form
from ..models import Prompt, PromptVersion, Role
from ..pages import (
    TreeView,
    prompt_page_build,
    tree_shown_parse,
    version_tree_view,
)
from ..selectors import (
    PromptAccess,
    label_list,
    prompt_access_get_for_user,
    prompt_list_for_user,
    prompt_list_shared_with_user,
)
from ..services import (
    access_log_grant_use,
    prompt_create,
    prompt_update,
)
from ..text.content import DEFAULT_MODELS, PROVIDERS, content_validate
from ..version_tree.markup import TreeHtml, tree_html
from .common import prompt_or_404, texts_context, version_or_404, version_text_urls
from .editor import editor_settings, editor_values_for_version, editor_values_from_post
from .sharing import share_context

STARTER_CONTENT: dict[str, Any] = {
    "provider": "echo",
    "model": DEFAULT_MODELS["echo"],
    "system": "You are a senior engineer who reviews system designs. Be concrete.",
    "messages": [{"role": "user", "content": "Critique this design: {{design}}"}],
    "params": {"temperature": 1.0, "max_tokens": 1024, "top_p": None, "stop": []},
    "tools": [],
    "response_format": None,
    "variables": {"design": "a URL shortener on one PostgreSQL node"},
}


def _editor_context(values: dict[str, Any]) -> dict[str, Any]:
    return {
        "editor": values,
        "providers": PROVIDERS,
        "default_models": DEFAULT_MODELS,
        "provider_models": [(p, DEFAULT_MODELS[p]) for p in PROVIDERS],
        "editor_limits": editor_settings(),
    }


@login_required
def prompt_list_view(request: HttpRequest) -> HttpResponse:
    search = request.GET.get("q", "")[:TITLE_MAX_CHARS]  # it matches titles
    archived = request.GET.get("archived") == "1"
    return render(
        request,
        "playground/prompt_list.html",
        {
            "prompts": prompt_list_for_user(user=request.user, search=search, archived=archived),
            "shared": prompt_list_shared_with_user(user=request.user),
            "search": search,
            "archived": archived,
            "section": "playground",
        },
    )


@login_required
@require_POST
def prompt_update_view(request: HttpRequest, prompt_id: int) -> HttpResponse:
    """Rename (`title`) or archive/unarchive (`archived` = 1/0) from the list; back to it."""
    prompt = prompt_or_404(request, prompt_id, Role.OWNER)
    archived = request.POST.get("archived")
    try:
        prompt_update(
            actor=request_actor(request),
            prompt=prompt,
            title=request.POST["title"] if "title" in request.POST else None,
            archived=None if archived is None else archived == "1",
        )
    except PlaygroundError as error:
        messages.error(request, f"Could not rename “{prompt.title}”: {error.message}")
    else:
        if archived == "1":
            messages.success(request, f"Archived “{prompt.title}”. It is listed under Archived.")
        elif archived == "0":
            messages.success(request, f"Restored “{prompt.title}”.")
        else:
            messages.success(request, f"Renamed to “{prompt.title}”.")
    back = request.POST.get("next", "")
    if not back.startswith("/playground/") or back.startswith("//"):
        back = reverse("playground:list")
    return redirect(back)


@login_required
def prompt_new_view(request: HttpRequest) -> HttpResponse:
    questions = question_list().only("slug", "title")
    context: dict[str, Any] = {"section": "playground", "questions": questions}
    if request.method != "POST":
        initial_question = request.GET.get("question", "")
        context.update(_editor_context(content_as_form_values(content_validate(STARTER_CONTENT))))
        return render(
            request,
            "playground/prompt_new.html",
            {**context, "title": "", "question_slug": initial_question},
        )
    title = request.POST.get("title", "")
    slug = request.POST.get("question", "")
    try:
        try:
            question = question_by_slug(slug=slug)
        except NotFound:
            raise ContentInvalid("question: unknown question.", field="question") from None
        actor = request_actor(request)
        prompt, _ = prompt_create(
            actor=actor,
            title=title,
            content=content_from_form(request.POST),
            question=question,
            message=request.POST.get("commit_message", ""),
        )
    except PlaygroundError as error:
        context.update(_editor_context(editor_values_from_post(request.POST)))
        return render(
            request,
            "playground/prompt_new.html",
            {**context, "error": error, "title": title, "question_slug": slug},
            status=400,
        )
    return redirect("playground:prompt", prompt_id=prompt.pk)


def _tree_html(prompt: Prompt, tree: TreeView, selected: PromptVersion) -> TreeHtml:
    return tree_html(
        layout=tree.layout,
        prompt_id=prompt.pk,
        selected_id=selected.pk,
        compare_from=selected.parent_id or selected.pk,
        next_shown=tree.next_shown,
        step=tree.step,
        badges=tree.badges,
    )


def prompt_page(
    request: HttpRequest,
    access: PromptAccess,
    selected: PromptVersion | None,
    *,
    editor_values: dict[str, Any] | None = None,
    error: PlaygroundError | None = None,
    status: int = 200,
    shown: int | None = None,
) -> HttpResponse:
    page = prompt_page_build(access=access, selected=selected, shown=shown)
    return render(
        request,
        "playground/prompt_detail.html",
        {
            "section": "playground",
            "prompt": access.prompt,
            "access": access,
            "tree": page.tree,
            "tree_html": _tree_html(access.prompt, page.tree, page.selected),
            "layout": page.layout,
            "labels": page.labels,
            "label_moves": page.label_moves,
            "main": page.main,
            "selected": page.selected,
            "selected_labels": page.selected_labels,
            "fetch_etag": page.fetch_etag,
            "parent_number": page.parent_number,
            "fetch_label": page.fetch_label,
            **texts_context(page.content, page.preview, version_text_urls(page.selected)),
            "error": error,
            "versions_count": page.versions_count,
            "can_edit": access.can_edit,
            "is_owner": access.is_owner,
            **(share_context(access.prompt, page.selected.pk) if access.is_owner else {}),
            **(_version_editor(page.selected, editor_values) if access.can_edit else {}),
        },
        status=status,
    )


def _version_editor(version: PromptVersion, values: dict[str, Any] | None) -> dict[str, Any]:
    """The editor's context: what was posted (after an error), else the version's own values
    (long texts by reference, see playground.views.editor)."""
    return _editor_context(values or editor_values_for_version(version=version))


@login_required
def prompt_detail_view(
    request: HttpRequest, prompt_id: int, number: int | None = None
) -> HttpResponse:
    access = prompt_access_get_for_user(user=request.user, prompt_id=prompt_id)
    version_id = f"v{number}" if number is not None else request.GET.get("v")
    selected = version_or_404(access.prompt, version_id) if version_id else None
    try:
        shown = tree_shown_parse(request.GET.get("show"))
    except ValueError as error:
        return HttpResponse(str(error), status=400)
    access_log_grant_use(
        prompt_id=access.prompt.pk,
        grant_id=access.grant_id,
        user=request_actor(request),
        path="page",
    )
    return prompt_page(request, access, selected, shown=shown)


@login_required
def prompt_tree_view(request: HttpRequest, prompt_id: int) -> HttpResponse:
    """The version tree alone (htmx "Show older versions"): the newest `show` versions, and the
    selected version `v` with its ancestors, as on the page."""
    access = prompt_access_get_for_user(user=request.user, prompt_id=prompt_id)
    selected = version_or_404(access.prompt, request.GET.get("v"))
    try:
        shown = tree_shown_parse(request.GET.get("show"))
    except ValueError as error:
        return HttpResponse(str(error), status=400)
    tree = version_tree_view(
        access=access, selected=selected, labels=list(label_list(prompt=access.prompt)), shown=shown
    )
    revealed = request.GET.get("from", "")
    return render(
        request,
        "playground/_tree.html",
        {
            "prompt": access.prompt,
            "tree": tree,
            "tree_html": _tree_html(access.prompt, tree, selected),
            "layout": tree.layout,
            "selected": selected,
            "versions_count": tree.total,
            "revealed_from": revealed if revealed.isdigit() else "",
        },
    )
