"""Playground pages: parse, call one selector or service, render."""

from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.views.decorators.http import require_POST
from django_htmx.middleware import HtmxDetails

from common.auth import request_actor
from common.exceptions import Forbidden
from common.limits import TITLE_MAX_CHARS
from questionbank.selectors import question_by_slug, question_list

from .content import (
    DEFAULT_MODELS,
    PROVIDERS,
    VersionContent,
    content_validate,
    variables_unfilled_check,
)
from .diffing import FOLD_STEP, diff_expand
from .editor import editor_settings, editor_values_for_version, editor_values_from_post
from .exceptions import ContentInvalid, LabelConflict, NotFound, PlaygroundError
from .export import Api, ExportFormat, export_render
from .forms import content_as_form_values, content_from_form
from .models import Label, Prompt, PromptVersion, Role, ShareLink
from .pages import (
    TreeView,
    prompt_page_build,
    tree_shown_parse,
    version_page_content,
    version_tree_view,
    version_url,
)
from .selectors import (
    PromptAccess,
    access_log,
    grant_list,
    label_list,
    label_moves,
    prompt_access_get_for_user,
    prompt_get_for_user,
    prompt_list_for_user,
    prompt_list_shared_with_user,
    share_link_list,
    version_in_prompt,
    version_number,
)
from .services import (
    SaveResult,
    access_log_grant_use,
    grant_revoke,
    grant_set,
    label_move,
    label_protect_set,
    prompt_copy_from_link,
    prompt_create,
    prompt_update,
    prompt_version_create,
    prompt_version_revert,
    share_link_create,
    share_link_revoke,
)
from .shared import LinkEnded, LoginRequired, shared_open
from .texts import ContentPreview, version_content_diff
from .tree_html import TreeHtml, tree_html
from .uploads import content_prepare

EXPORT_APIS: tuple[tuple[Api, str], ...] = (("anthropic", "Anthropic"), ("openai", "OpenAI"))
EXPORT_FORMATS: tuple[tuple[ExportFormat, str], ...] = (
    ("curl", "curl"),
    ("python", "Python"),
    ("typescript", "TypeScript"),
    ("json", "JSON"),
)

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


# NotFound (404) and Forbidden (403) from selectors and services are answered by
# common.middleware.DomainErrorMiddleware; views catch only the errors they show in a form.


def _prompt_or_404(request: HttpRequest, prompt_id: int, min_role: str = Role.VIEWER) -> Prompt:
    """The prompt if the user has at least `min_role` on it."""
    return prompt_get_for_user(user=request.user, prompt_id=prompt_id, min_role=min_role)


def _version_or_404(prompt: Prompt, version_id: Any) -> PromptVersion:
    return version_in_prompt(prompt=prompt, version_id=version_id)


def _text_urls(range_url: str, download_url: str, query: str) -> dict[str, str]:
    """Where the lazy text view loads ranges and downloads from; `query` is appended to both
    (`&version=N` on shared pages, so a reader never mixes two versions' texts)."""
    return {"range": range_url, "download": download_url, "query": query}


def _texts_context(
    content: VersionContent | None, preview: ContentPreview, urls: dict[str, str]
) -> dict[str, Any]:
    return {"content": content, "preview": preview, "text_urls": urls}


def _version_text_urls(version: PromptVersion) -> dict[str, str]:
    return _text_urls(
        reverse("api-version-text", args=[version.pk]),
        reverse("api-version-text-download", args=[version.pk]),
        "",
    )


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
    prompt = _prompt_or_404(request, prompt_id, Role.OWNER)
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
            content=content_prepare(
                actor=actor, parent=None, content=content_from_form(request.POST)
            ),
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


def _prompt_page(
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
            **_texts_context(page.content, page.preview, _version_text_urls(page.selected)),
            "error": error,
            "versions_count": page.versions_count,
            "can_edit": access.can_edit,
            "is_owner": access.is_owner,
            **(_share_context(access.prompt, page.selected.pk) if access.is_owner else {}),
            **(_version_editor(page.selected, editor_values) if access.can_edit else {}),
        },
        status=status,
    )


def _version_editor(version: PromptVersion, values: dict[str, Any] | None) -> dict[str, Any]:
    """The editor's context: what was posted (after an error), else the version's own values
    (long texts by reference, see playground.editor)."""
    return _editor_context(values or editor_values_for_version(version=version))


@login_required
def prompt_detail_view(
    request: HttpRequest, prompt_id: int, number: int | None = None
) -> HttpResponse:
    access = prompt_access_get_for_user(user=request.user, prompt_id=prompt_id)
    version_id = f"v{number}" if number is not None else request.GET.get("v")
    selected = _version_or_404(access.prompt, version_id) if version_id else None
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
    return _prompt_page(request, access, selected, shown=shown)


@login_required
def prompt_tree_view(request: HttpRequest, prompt_id: int) -> HttpResponse:
    """The version tree alone (htmx "Show older versions"): the newest `show` versions, and the
    selected version `v` with its ancestors, as on the page."""
    access = prompt_access_get_for_user(user=request.user, prompt_id=prompt_id)
    selected = _version_or_404(access.prompt, request.GET.get("v"))
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


@login_required
@require_POST
def prompt_save_view(request: HttpRequest, prompt_id: int) -> HttpResponse:
    access = prompt_access_get_for_user(
        user=request.user, prompt_id=prompt_id, min_role=Role.EDITOR
    )
    prompt = access.prompt
    parent = _version_or_404(prompt, request.POST.get("parent"))
    try:
        actor = request_actor(request)
        # Uploaded texts (the editor's large-text mode) are checked and stored first.
        content = content_prepare(
            actor=actor, parent=parent, content=content_from_form(request.POST)
        )
        result = prompt_version_create(
            actor=actor,
            prompt=prompt,
            parent=parent,
            content=content,
            message=request.POST.get("commit_message", ""),
        )
    except PlaygroundError as error:
        return _prompt_page(
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
    prompt = _prompt_or_404(request, prompt_id, Role.EDITOR)
    target = _version_or_404(prompt, version_id)
    parent = _version_or_404(prompt, request.POST.get("parent"))
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
    prompt = _prompt_or_404(request, prompt_id)
    a = _version_or_404(prompt, request.GET.get("a"))
    b = _version_or_404(prompt, request.GET.get("b"))
    return prompt, a, b


@login_required
def version_diff_view(request: HttpRequest, prompt_id: int) -> HttpResponse:
    """The whole diff with unchanged runs folded (expanded on demand by `version_diff_rows_view`),
    so the page grows with what changed, not with the text around it. `?view=split` shows
    the two sides next to each other."""
    prompt, a, b = _diff_versions(request, prompt_id)
    split = request.GET.get("view") == "split"
    diff = version_content_diff(before=a, after=b, limit=None)
    query = f"?a=v{a.number}&b=v{b.number}"
    return render(
        request,
        "playground/diff.html",
        {
            "section": "playground",
            "prompt": prompt,
            "a": a,
            "b": b,
            "texts": [t for t in diff["texts"] if t.changed],
            "changes": diff["changes"],
            "a_label": f"v{a.number}",
            "b_label": f"v{b.number}",
            "split": split,
            "unified_url": query,
            "split_url": f"{query}&view=split",
            "expand_url": reverse("playground:diff-rows", args=[prompt.pk])
            + query
            + ("&view=split" if split else ""),
            "fold_step": FOLD_STEP,
            "fold_all_max": settings.PLAYGROUND_DIFF_FOLD_ALL_MAX,
        },
    )


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
        },
    )


# --- labels: move (compare-and-set), create, protect, history (htmx fragments) ----------------


def _labels_context(access: PromptAccess, selected: PromptVersion) -> dict[str, Any]:
    return {
        "prompt": access.prompt,
        "selected": selected,
        "labels": list(label_list(prompt=access.prompt)),
        "label_moves": label_moves(prompt=access.prompt, limit=30),
        "can_edit": access.can_edit,
        "is_owner": access.is_owner,
    }


class HtmxHttpRequest(HttpRequest):
    """A request through django-htmx's middleware (typing only: it sets `request.htmx`)."""

    htmx: HtmxDetails


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
    request: HtmxHttpRequest, access: Any, version: PromptVersion, name: str, error: LabelConflict
) -> HttpResponse:
    """409: who moved the label, with a retry against where it points now; or, for "create"
    with the name of a label already on this version, that there is nothing to change."""
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
    prompt = access.prompt
    version = _version_or_404(prompt, request.POST.get("version"))
    name = request.POST.get("name", "").strip()
    expected_raw = request.POST.get("expected", "")
    expected = _version_or_404(prompt, expected_raw) if expected_raw else None
    try:
        label = label_move(
            actor=request_actor(request),
            prompt=prompt,
            name=name,
            version=version,
            expected=expected,
            expected_given=True,
        )
    except LabelConflict as error:
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
    version = _version_or_404(access.prompt, request.POST.get("version"))
    protected = request.POST.get("protected") == "1"
    label = label_protect_set(
        actor=request_actor(request), prompt=access.prompt, name=name, protected=protected
    )
    state = "protected: only you can move it" if label.protected else "unprotected"
    return _labels_answer(request, access, version, done=f"“{label.name}” is {state}.")


# --- sharing: the owner's share dialog (htmx fragments) -----------------------------------------


def _share_context(prompt: Prompt, selected_id: Any) -> dict[str, Any]:
    return {
        "links": share_link_list(prompt=prompt),
        "grants": grant_list(prompt=prompt),
        "log": access_log(prompt=prompt, limit=20),
        "selected_id": selected_id,
        # The dialog names the version a pinned link would show ("v3 (pinned)").
        "selected_number": version_number(
            prompt=prompt,
            version_id=int(selected_id)
            if str(selected_id).isdigit() and len(str(selected_id)) < 12
            else None,
        ),
        "now": timezone.now(),
        "presigned_ttl": settings.SHARE_PRESIGNED_TTL,
    }


def _share_panel(
    request: HttpRequest,
    prompt: Prompt,
    *,
    new_link_url: str = "",
    error: str = "",
    error_field: str = "",
    form: str = "",
    status: int = 200,
) -> HttpResponse:
    """The dialog's panel. An error is shown at its field (`error_field`) in the form that
    failed (`form`: "link" or "grant"), with what the user typed kept; a failed create never
    shows an earlier link."""
    selected_id = request.POST.get("version") or request.GET.get("v") or ""
    return render(
        request,
        "playground/_share_panel.html",
        {
            "prompt": prompt,
            "labels": label_list(prompt=prompt),
            "new_link_url": new_link_url,
            "share_error": error,
            "share_error_field": error_field,
            "link_error": bool(error) and form == "link",
            "grant_error": bool(error) and form == "grant",
            "posted": request.POST if error else {},
            **_share_context(prompt, selected_id),
        },
        status=status,
    )


def _expiry_parse(raw: str, zone_name: str) -> datetime | None:
    """The picker's local date-time read in the browser's time zone (an IANA name sent with
    the form); a value with an explicit offset is taken as it is."""
    if not raw:
        return None
    value = parse_datetime(raw)
    if value is None:
        raise ContentInvalid("expires_at: not a date and time.", field="expires_at")
    if timezone.is_aware(value):
        return value
    try:
        zone = ZoneInfo(zone_name) if zone_name else UTC
    except (ZoneInfoNotFoundError, ValueError):
        raise ContentInvalid(
            f"expires_at: unknown time zone {zone_name!r}.", field="expires_at"
        ) from None
    return value.replace(tzinfo=zone)


@login_required
def share_panel_view(request: HttpRequest, prompt_id: int) -> HttpResponse:
    return _share_panel(request, _prompt_or_404(request, prompt_id, Role.OWNER))


@login_required
@require_POST
def share_link_create_view(request: HttpRequest, prompt_id: int) -> HttpResponse:
    prompt = _prompt_or_404(request, prompt_id, Role.OWNER)
    scope = request.POST.get("scope", "version")
    label_name = scope.removeprefix("label:") if scope.startswith("label:") else ""
    try:
        version = None if label_name else _version_or_404(prompt, request.POST.get("version"))
        expires_at = _expiry_parse(
            request.POST.get("expires_at", "").strip(), request.POST.get("tz", "").strip()
        )
        _, token = share_link_create(
            actor=request_actor(request),
            prompt=prompt,
            access=request.POST.get("access", ""),
            version=version,
            label_name=label_name,
            expires_at=expires_at,
        )
    except (PlaygroundError, NotFound) as error:
        message = getattr(error, "message", "version: no such version.")
        field = getattr(error, "field", "") or "version"
        if field in ("version", "label"):
            field = "scope"
        return _share_panel(
            request, prompt, error=message, error_field=field, form="link", status=400
        )
    url = request.build_absolute_uri(reverse("shared-page", args=[token]))
    return _share_panel(request, prompt, new_link_url=url)


@login_required
@require_POST
def share_link_revoke_view(request: HttpRequest, prompt_id: int, link_id: int) -> HttpResponse:
    prompt = _prompt_or_404(request, prompt_id, Role.OWNER)
    link = share_link_list(prompt=prompt).filter(pk=link_id).first()
    if link is None:
        raise NotFound
    share_link_revoke(actor=request_actor(request), link=link)
    return _share_panel(request, prompt)


@login_required
@require_POST
def grant_create_view(request: HttpRequest, prompt_id: int) -> HttpResponse:
    prompt = _prompt_or_404(request, prompt_id, Role.OWNER)
    try:
        grant_set(
            actor=request_actor(request),
            prompt=prompt,
            username=request.POST.get("username", "").strip(),
            role=request.POST.get("role", ""),
        )
    except PlaygroundError as error:
        return _share_panel(
            request,
            prompt,
            error=error.message,
            error_field=getattr(error, "field", "") or "username",
            form="grant",
            status=400,
        )
    return _share_panel(request, prompt)


@login_required
@require_POST
def grant_revoke_view(request: HttpRequest, prompt_id: int, username: str) -> HttpResponse:
    prompt = _prompt_or_404(request, prompt_id, Role.OWNER)
    grant_revoke(actor=request_actor(request), prompt=prompt, username=username)
    return _share_panel(request, prompt)


# --- shared pages: /s/{token} -------------------------------------------------------------------


def _shared_or_response(
    request: HttpRequest, token: str
) -> tuple[ShareLink, PromptVersion] | HttpResponse:
    try:
        return shared_open(request=request, token=token, path="page")
    except LoginRequired:
        return _login_then_resume(request, token)
    except LinkEnded as ended:
        # 410 Gone: the link existed and ended. Only that is said (not whose, not what).
        response = render(
            request, "playground/shared_ended.html", {"reason": ended.reason}, status=410
        )
        response["Referrer-Policy"] = "same-origin"
        return response


SHARED_RESUME_KEY = "shared_resume_token"


def _login_then_resume(request: HttpRequest, token: str) -> HttpResponse:
    """To the log-in page without the token in `?next=` (it would reach logs and Referers):
    the token waits in the session and `/s/resume` brings the visitor back to the link."""
    request.session[SHARED_RESUME_KEY] = token
    return redirect_to_login(reverse("shared-resume"))


def shared_login_view(request: HttpRequest, token: str) -> HttpResponse:
    """ "Log in to copy" on a shared page."""
    return _login_then_resume(request, token)


def shared_resume_view(request: HttpRequest) -> HttpResponse:
    token = request.session.pop(SHARED_RESUME_KEY, None)
    if not isinstance(token, str):
        return redirect("home")
    return redirect("shared-page", token=token)


def _shared_exports(
    content: VersionContent | None, preview: ContentPreview
) -> tuple[list[dict[str, str]], str]:
    """The export variants shown inline, or why there are none: each holds every text whole,
    so only while no text is long (else the page would grow with the text), and only when
    every variable has a value (an export never sends an empty variable)."""
    if content is None or preview.lazy:
        return [], ""
    try:
        variables_unfilled_check(
            content=content, values=dict(content.get("variables") or {}), declared_only=True
        )
    except ContentInvalid as error:
        return [], error.message
    exports = [
        {
            "title": f"{api_title} — {fmt_title}",
            "text": export_render(content=content, api=api, format=fmt),
        }
        for api, api_title in EXPORT_APIS
        for fmt, fmt_title in EXPORT_FORMATS
    ]
    return exports, ""


def shared_view(request: HttpRequest, token: str) -> HttpResponse:
    """One shared version, read-only. A link reveals only what it shares, so there is no diff
    against the parent here: the parent may hold text the owner removed before sharing."""
    opened = _shared_or_response(request, token)
    if isinstance(opened, HttpResponse):
        return opened
    link, version = opened
    content, preview = version_page_content(version=version)
    exports, exports_refused = _shared_exports(content, preview)
    response = render(
        request,
        "playground/shared.html",
        {
            "link": link,
            "prompt": link.prompt,
            "version": version,
            **_texts_context(
                content,
                preview,
                _text_urls(
                    reverse("api-shared-text", args=[token]),
                    reverse("api-shared-text-download", args=[token]),
                    f"&version={version.pk}",
                ),
            ),
            "exports": exports,
            "exports_refused": exports_refused,
            "token": token,
        },
    )
    # The token is in the URL: never send it to another site, but keep the same-origin
    # Referer/Origin the copy form's CSRF check needs (no-referrer made Chromium send
    # `Origin: null`).
    response["Referrer-Policy"] = "same-origin"
    return response


@require_POST
def shared_copy_view(request: HttpRequest, token: str) -> HttpResponse:
    if not request.user.is_authenticated:
        return _login_then_resume(request, token)
    opened = _shared_or_response(request, token)
    if isinstance(opened, HttpResponse):
        return opened
    link, version = opened
    prompt = prompt_copy_from_link(actor=request_actor(request), link=link, version=version)
    messages.success(request, "Copied into your prompts.")
    return redirect("playground:prompt", prompt_id=prompt.pk)
