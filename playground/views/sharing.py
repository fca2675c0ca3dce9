"""Sharing, from the owner's side: the share panel, links and grants, their revocation."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.views.decorators.http import require_POST

from common.auth import request_actor

from ..exceptions import ContentInvalid, NotFound, PlaygroundError
from ..models import Prompt, Role
from ..selectors import (
    access_log,
    grant_list,
    label_list,
    share_link_list,
    version_number,
)
from ..services import (
    grant_revoke,
    grant_set,
    share_link_create,
    share_link_revoke,
)
from .common import prompt_or_404, version_or_404


def share_context(prompt: Prompt, selected_id: Any) -> dict[str, Any]:
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
            **share_context(prompt, selected_id),
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
    return _share_panel(request, prompt_or_404(request, prompt_id, Role.OWNER))


@login_required
@require_POST
def share_link_create_view(request: HttpRequest, prompt_id: int) -> HttpResponse:
    prompt = prompt_or_404(request, prompt_id, Role.OWNER)
    scope = request.POST.get("scope", "version")
    label_name = scope.removeprefix("label:") if scope.startswith("label:") else ""
    try:
        version = None if label_name else version_or_404(prompt, request.POST.get("version"))
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
    prompt = prompt_or_404(request, prompt_id, Role.OWNER)
    link = share_link_list(prompt=prompt).filter(pk=link_id).first()
    if link is None:
        raise NotFound
    share_link_revoke(actor=request_actor(request), link=link)
    return _share_panel(request, prompt)


@login_required
@require_POST
def grant_create_view(request: HttpRequest, prompt_id: int) -> HttpResponse:
    prompt = prompt_or_404(request, prompt_id, Role.OWNER)
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
    prompt = prompt_or_404(request, prompt_id, Role.OWNER)
    grant_revoke(actor=request_actor(request), prompt=prompt, username=username)
    return _share_panel(request, prompt)
