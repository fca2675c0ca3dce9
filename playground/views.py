"""Playground pages: parse, call one selector or service, render."""

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from common.exceptions import Forbidden, RateLimited
from questionbank.selectors import question_by_slug, question_list

from .content import DEFAULT_MODELS, PROVIDERS, content_validate
from .diffing import content_diff
from .exceptions import ContentInvalid, NotFound, PlaygroundError
from .export import export_render
from .forms import content_as_form_values, content_from_form, form_values_from_post
from .models import Prompt, PromptVersion, Role, ShareLink
from .selectors import (
    access_log,
    grant_list,
    label_list,
    prompt_get_for_user,
    prompt_list_for_user,
    prompt_list_shared_with_user,
    share_link_list,
    version_content,
    version_in_prompt,
    version_tree,
)
from .services import (
    access_log_grant_use,
    grant_revoke,
    grant_set,
    prompt_copy_from_link,
    prompt_create,
    prompt_version_create,
    prompt_version_revert,
    share_link_create,
    share_link_revoke,
)
from .shared import LoginRequired, shared_open
from .tree import tree_layout

STARTER_CONTENT = {
    "provider": "echo",
    "model": DEFAULT_MODELS["echo"],
    "system": "You are a senior engineer who reviews system designs. Be concrete.",
    "messages": [{"role": "user", "content": "Critique this design: {{design}}"}],
    "params": {"temperature": 1.0, "max_tokens": 1024, "top_p": None, "stop": []},
    "tools": [],
    "response_format": None,
    "variables": {"design": "a URL shortener on one PostgreSQL node"},
}


def _prompt_or_404(request: HttpRequest, prompt_id: int, min_role: str = Role.VIEWER) -> Prompt:
    """The prompt if the user may see it (else 404); PermissionDenied (403) if they may see it
    but lack `min_role`."""
    try:
        return prompt_get_for_user(user=request.user, prompt_id=prompt_id, min_role=min_role)
    except NotFound:
        raise Http404 from None
    except Forbidden as error:
        raise PermissionDenied(error.message) from None


def _version_or_404(prompt: Prompt, version_id: Any) -> PromptVersion:
    try:
        return version_in_prompt(prompt=prompt, version_id=version_id)
    except NotFound:
        raise Http404 from None


def _editor_context(values: dict[str, Any]) -> dict[str, Any]:
    return {"editor": values, "providers": PROVIDERS, "default_models": DEFAULT_MODELS}


@login_required
def prompt_list_view(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "playground/prompt_list.html",
        {
            "prompts": prompt_list_for_user(user=request.user),
            "shared": prompt_list_shared_with_user(user=request.user),
            "section": "playground",
        },
    )


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
        prompt, _ = prompt_create(
            actor=request.user,
            title=title,
            content=content_from_form(request.POST),
            question=question,
            message=request.POST.get("commit_message", ""),
        )
    except PlaygroundError as error:
        context.update(_editor_context(form_values_from_post(request.POST)))
        return render(
            request,
            "playground/prompt_new.html",
            {**context, "error": error, "title": title, "question_slug": slug},
            status=400,
        )
    return redirect("playground:prompt", prompt_id=prompt.pk)


def _prompt_page(
    request: HttpRequest,
    prompt: Prompt,
    selected: PromptVersion | None,
    *,
    editor_values: dict[str, Any] | None = None,
    error: PlaygroundError | None = None,
    status: int = 200,
) -> HttpResponse:
    versions = list(version_tree(prompt=prompt))
    labels = list(label_list(prompt=prompt))
    by_version: dict[int, list[str]] = {}
    for label in labels:
        by_version.setdefault(label.version_id, []).append(label.name)
    main = next((label for label in labels if label.name == "main"), None)
    if selected is None:
        selected = next((v for v in versions if main and v.pk == main.version_id), versions[-1])
    content = version_content(version=selected)
    layout = tree_layout(versions, by_version)
    return render(
        request,
        "playground/prompt_detail.html",
        {
            "section": "playground",
            "prompt": prompt,
            "layout": layout,
            "labels": labels,
            "main": main,
            "selected": selected,
            "selected_labels": by_version.get(selected.pk, []),
            "content": content,
            "error": error,
            "versions_count": len(versions),
            "diff_default_a": selected.parent_id or selected.pk,
            "can_edit": prompt.role in (Role.OWNER, Role.EDITOR),
            "is_owner": prompt.role == Role.OWNER,
            **(_share_context(prompt, selected.pk) if prompt.role == Role.OWNER else {}),
            **_editor_context(editor_values or content_as_form_values(content)),
        },
        status=status,
    )


@login_required
def prompt_detail_view(request: HttpRequest, prompt_id: int) -> HttpResponse:
    prompt = _prompt_or_404(request, prompt_id)
    selected = _version_or_404(prompt, request.GET["v"]) if request.GET.get("v") else None
    access_log_grant_use(prompt=prompt, user=request.user, path="page")
    return _prompt_page(request, prompt, selected)


@login_required
@require_POST
def prompt_save_view(request: HttpRequest, prompt_id: int) -> HttpResponse:
    prompt = _prompt_or_404(request, prompt_id, Role.EDITOR)
    parent = _version_or_404(prompt, request.POST.get("parent"))
    try:
        result = prompt_version_create(
            actor=request.user,
            prompt=prompt,
            parent=parent,
            content=content_from_form(request.POST),
            message=request.POST.get("commit_message", ""),
        )
    except PlaygroundError as error:
        return _prompt_page(
            request,
            prompt,
            parent,
            editor_values=form_values_from_post(request.POST),
            error=error,
            status=400,
        )
    version = result.version
    if not result.created:
        messages.info(request, f"Nothing new: v{version.number} already has this content.")
    elif result.main_moved:
        messages.success(request, f"Saved v{version.number}; main now points at it.")
    else:
        messages.warning(
            request,
            f"Saved v{version.number} as a branch from v{parent.number}: main was not at "
            f"v{parent.number} any more (someone moved it, or you edited an older version), "
            "so main stays where it is.",
        )
    return redirect(f"{reverse('playground:prompt', args=[prompt.pk])}?v={version.pk}")


@login_required
@require_POST
def version_revert_view(request: HttpRequest, prompt_id: int, version_id: int) -> HttpResponse:
    prompt = _prompt_or_404(request, prompt_id, Role.EDITOR)
    target = _version_or_404(prompt, version_id)
    parent = _version_or_404(prompt, request.POST.get("parent"))
    try:
        result = prompt_version_revert(
            actor=request.user, prompt=prompt, target=target, parent=parent
        )
    except ContentInvalid as error:
        messages.error(request, error.message)
        return redirect("playground:prompt", prompt_id=prompt.pk)
    messages.success(
        request, f"Reverted: v{result.version.number} has the content of v{target.number}."
    )
    return redirect(f"{reverse('playground:prompt', args=[prompt.pk])}?v={result.version.pk}")


@login_required
def version_diff_view(request: HttpRequest, prompt_id: int) -> HttpResponse:
    prompt = _prompt_or_404(request, prompt_id)
    a = _version_or_404(prompt, request.GET.get("a"))
    b = _version_or_404(prompt, request.GET.get("b"))
    try:
        limit = max(50, min(int(request.GET.get("limit", 400)), 100_000))
    except ValueError:
        limit = 400
    diff = content_diff(version_content(version=a), version_content(version=b), limit=limit)
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
            "more_url": f"?a={a.pk}&b={b.pk}&limit={limit * 4}",
        },
    )


# --- sharing: the owner's share dialog (htmx fragments) -----------------------------------------


def _share_context(prompt: Prompt, selected_id: Any) -> dict[str, Any]:
    return {
        "links": share_link_list(prompt=prompt),
        "grants": grant_list(prompt=prompt),
        "log": access_log(prompt=prompt, limit=20),
        "selected_id": selected_id,
        "now": timezone.now(),
        "presigned_ttl": settings.SHARE_PRESIGNED_TTL,
    }


def _share_panel(
    request: HttpRequest,
    prompt: Prompt,
    *,
    new_link_url: str = "",
    error: str = "",
    status: int = 200,
) -> HttpResponse:
    selected_id = request.POST.get("version") or request.GET.get("v") or ""
    return render(
        request,
        "playground/_share_panel.html",
        {
            "prompt": prompt,
            "labels": label_list(prompt=prompt),
            "new_link_url": new_link_url,
            "share_error": error,
            **_share_context(prompt, selected_id),
        },
        status=status,
    )


@login_required
def share_panel_view(request: HttpRequest, prompt_id: int) -> HttpResponse:
    return _share_panel(request, _prompt_or_404(request, prompt_id, Role.OWNER))


@login_required
@require_POST
def share_link_create_view(request: HttpRequest, prompt_id: int) -> HttpResponse:
    prompt = _prompt_or_404(request, prompt_id, Role.OWNER)
    scope = request.POST.get("scope", "version")
    label_name = scope.removeprefix("label:") if scope.startswith("label:") else ""
    expires_raw = request.POST.get("expires_at", "").strip()
    try:
        version = None if label_name else _version_or_404(prompt, request.POST.get("version"))
        expires_at = None
        if expires_raw:
            expires_at = parse_datetime(expires_raw)
            if expires_at is None:
                raise ContentInvalid("expires_at: not a date and time.", field="expires_at")
            if timezone.is_naive(expires_at):
                expires_at = timezone.make_aware(expires_at)
        _, token = share_link_create(
            actor=request.user,
            prompt=prompt,
            access=request.POST.get("access", ""),
            version=version,
            label_name=label_name,
            expires_at=expires_at,
        )
    except (PlaygroundError, Http404) as error:
        message = getattr(error, "message", "No such version.")
        return _share_panel(request, prompt, error=message, status=400)
    url = request.build_absolute_uri(reverse("shared-page", args=[token]))
    return _share_panel(request, prompt, new_link_url=url)


@login_required
@require_POST
def share_link_revoke_view(request: HttpRequest, prompt_id: int, link_id: int) -> HttpResponse:
    prompt = _prompt_or_404(request, prompt_id, Role.OWNER)
    link = share_link_list(prompt=prompt).filter(pk=link_id).first()
    if link is None:
        raise Http404
    share_link_revoke(actor=request.user, link=link)
    return _share_panel(request, prompt)


@login_required
@require_POST
def grant_create_view(request: HttpRequest, prompt_id: int) -> HttpResponse:
    prompt = _prompt_or_404(request, prompt_id, Role.OWNER)
    try:
        grant_set(
            actor=request.user,
            prompt=prompt,
            username=request.POST.get("username", "").strip(),
            role=request.POST.get("role", ""),
        )
    except PlaygroundError as error:
        return _share_panel(request, prompt, error=error.message, status=400)
    return _share_panel(request, prompt)


@login_required
@require_POST
def grant_revoke_view(request: HttpRequest, prompt_id: int, username: str) -> HttpResponse:
    prompt = _prompt_or_404(request, prompt_id, Role.OWNER)
    grant_revoke(actor=request.user, prompt=prompt, username=username)
    return _share_panel(request, prompt)


# --- shared pages: /s/{token} -------------------------------------------------------------------


def _shared_or_response(
    request: HttpRequest, token: str
) -> tuple[ShareLink, PromptVersion] | HttpResponse:
    try:
        return shared_open(request=request, token=token, path="page")
    except NotFound:
        return render(request, "404.html", status=404)
    except RateLimited as error:
        response = render(request, "429.html", {"retry_after": error.retry_after}, status=429)
        response["Retry-After"] = str(error.retry_after)
        return response
    except LoginRequired:
        return _login_then_resume(request, token)


SHARED_RESUME_KEY = "shared_resume_token"


def _login_then_resume(request: HttpRequest, token: str) -> HttpResponse:
    """To the log-in page without the token in `?next=` (it would reach logs and Referers):
    the token waits in the session and `/s/resume` brings the visitor back to the link."""
    request.session[SHARED_RESUME_KEY] = token
    return redirect_to_login(reverse("shared-resume"))


@never_cache
def shared_login_view(request: HttpRequest, token: str) -> HttpResponse:
    """ "Log in to copy" on a shared page."""
    return _login_then_resume(request, token)


@never_cache
def shared_resume_view(request: HttpRequest) -> HttpResponse:
    token = request.session.pop(SHARED_RESUME_KEY, None)
    if not isinstance(token, str):
        return redirect("home")
    return redirect("shared-page", token=token)


@never_cache
def shared_view(request: HttpRequest, token: str) -> HttpResponse:
    """One shared version, read-only. A link reveals only what it shares, so there is no diff
    against the parent here: the parent may hold text the owner removed before sharing."""
    opened = _shared_or_response(request, token)
    if isinstance(opened, HttpResponse):
        return opened
    link, version = opened
    content = version_content(version=version)
    response = render(
        request,
        "playground/shared.html",
        {
            "link": link,
            "prompt": link.prompt,
            "version": version,
            "content": content,
            "exports": [
                {
                    "title": f"{api_title} — {fmt_title}",
                    "text": export_render(content=content, api=api, format=fmt),
                }
                for api, api_title in (("anthropic", "Anthropic"), ("openai", "OpenAI"))
                for fmt, fmt_title in (
                    ("curl", "curl"),
                    ("python", "Python"),
                    ("typescript", "TypeScript"),
                    ("json", "JSON"),
                )
            ],
            "token": token,
        },
    )
    # The token is in the URL: never send it to another site, but keep the same-origin
    # Referer/Origin the copy form's CSRF check needs (no-referrer made Chromium send
    # `Origin: null`).
    response["Referrer-Policy"] = "same-origin"
    return response


@never_cache
@require_POST
def shared_copy_view(request: HttpRequest, token: str) -> HttpResponse:
    if not request.user.is_authenticated:
        return _login_then_resume(request, token)
    opened = _shared_or_response(request, token)
    if isinstance(opened, HttpResponse):
        return opened
    link, version = opened
    prompt = prompt_copy_from_link(actor=request.user, link=link, version=version)
    messages.success(request, "Copied into your prompts.")
    return redirect("playground:prompt", prompt_id=prompt.pk)
