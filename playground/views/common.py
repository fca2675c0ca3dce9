"""What the playground pages share: the prompt or version a URL names (404 when not yours),
the URLs of a version's long texts, the htmx request type."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.urls import reverse
from django_htmx.middleware import HtmxDetails

from ..models import Prompt, PromptVersion, Role
from ..selectors import (
    prompt_get_for_user,
    version_in_prompt,
)
from ..text.content import VersionContent
from ..text.ranges import ContentPreview


def prompt_or_404(request: HttpRequest, prompt_id: int, min_role: str = Role.VIEWER) -> Prompt:
    """The prompt if the user has at least `min_role` on it."""
    return prompt_get_for_user(user=request.user, prompt_id=prompt_id, min_role=min_role)


def version_or_404(prompt: Prompt, version_id: Any) -> PromptVersion:
    return version_in_prompt(prompt=prompt, version_id=version_id)


def text_urls(range_url: str, download_url: str, query: str) -> dict[str, str]:
    """Where the lazy text view loads ranges and downloads from; `query` is appended to both
    (`&version=N` on shared pages, so a reader never mixes two versions' texts)."""
    return {"range": range_url, "download": download_url, "query": query}


def texts_context(
    content: VersionContent | None, preview: ContentPreview, urls: dict[str, str]
) -> dict[str, Any]:
    return {"content": content, "preview": preview, "text_urls": urls}


def version_text_urls(version: PromptVersion) -> dict[str, str]:
    return text_urls(
        reverse("api-version-text", args=[version.pk]),
        reverse("api-version-text-download", args=[version.pk]),
        "",
    )


class HtmxHttpRequest(HttpRequest):
    """A request through django-htmx's middleware (typing only: it sets `request.htmx`)."""

    htmx: HtmxDetails
