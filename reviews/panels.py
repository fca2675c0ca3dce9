"""Panels other apps add to the review desk's pages, without the review desk importing them.

The review page and the practice page each have a slot (`review`, `practice`); an app registers
a provider for a slot in its `AppConfig.ready()` (the critique app's "Draft with…" panel and its
leaderboard). A provider is called with the page's object (the review, or None for the practice
page) and the request (for its user and CSRF token), and returns HTML it rendered itself — only
what the requesting user may see — or "" to show nothing.
"""

from collections.abc import Callable
from typing import Any, Literal, get_args

from django.utils.safestring import SafeString, mark_safe

from common.registry import Registry

PanelProvider = Callable[[Any, Any], str]
PanelSlot = Literal["review", "practice"]
SLOTS: tuple[PanelSlot, ...] = get_args(PanelSlot)
# One registry per slot, of providers by app name.
panel_providers: dict[PanelSlot, Registry[PanelProvider]] = {
    slot: Registry(f"{slot} page panel") for slot in SLOTS
}


def panel_register(*, slot: PanelSlot, name: str, provider: PanelProvider) -> None:
    if slot not in panel_providers:
        raise ValueError(f"unknown panel slot {slot!r}: expected one of {SLOTS}")
    panel_providers[slot].register(name, provider)


def panels_for(*, slot: PanelSlot, obj: Any, request: Any) -> list[SafeString]:
    """The registered panels of `slot`, in name order; providers render with autoescaping."""
    out = []
    for provider in panel_providers[slot].values():
        html = provider(obj, request)
        if html:
            out.append(mark_safe(html))  # noqa: S308 (rendered by the provider's template)
    return out
