"""Panels other apps add to the review desk's pages, without the review desk importing them.

The review page and the practice page each have a slot (`review`, `practice`); an app registers
a provider for a slot in its `AppConfig.ready()` (the critique app's "Draft with…" panel and its
leaderboard). A provider is called with the page's object (the review, or None for the practice
page) and the request (for its user and CSRF token), and returns HTML it rendered itself — only
what the requesting user may see — or "" to show nothing.
"""

from collections.abc import Callable
from typing import Any

from django.utils.safestring import SafeString, mark_safe

PanelProvider = Callable[[Any, Any], str]
SLOTS = ("review", "practice")
_providers: dict[str, dict[str, PanelProvider]] = {slot: {} for slot in SLOTS}


def panel_register(*, slot: str, name: str, provider: PanelProvider) -> None:
    if slot not in _providers:
        raise ValueError(f"unknown panel slot {slot!r}: expected one of {SLOTS}")
    _providers[slot][name] = provider


def panels_for(*, slot: str, obj: Any, request: Any) -> list[SafeString]:
    """The registered panels of `slot`, in name order; providers render with autoescaping."""
    out = []
    for _, provider in sorted(_providers[slot].items()):
        html = provider(obj, request)
        if html:
            out.append(mark_safe(html))  # noqa: S308 (rendered by the provider's template)
    return out
