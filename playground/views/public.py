"""What a share link opens: the shared page, its exports, copying it into your own prompts,
and the log-in round trip."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from common.auth import request_actor

from ..exceptions import ContentInvalid
from ..exports.api_calls import Api, ExportFormat, export_render
from ..models import PromptVersion, ShareLink
from ..pages import (
    version_page_content,
)
from ..services import (
    prompt_copy_from_link,
)
from ..sharing.links import LinkEnded, LoginRequired, shared_open
from ..text.content import VersionContent, variables_unfilled_check
from ..text.ranges import ContentPreview
from .common import text_urls, texts_context

EXPORT_APIS: tuple[tuple[Api, str], ...] = (("anthropic", "Anthropic"), ("openai", "OpenAI"))


EXPORT_FORMATS: tuple[tuple[ExportFormat, str], ...] = (
    ("curl", "curl"),
    ("python", "Python"),
    ("typescript", "TypeScript"),
    ("json", "JSON"),
)


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
            **texts_context(
                content,
                preview,
                text_urls(
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
