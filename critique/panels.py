"""The critique app's panels on the review desk's pages (registered in `apps.py`): "Draft
with…" in the review page's margin, and the leaderboard on the practice page."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.template.loader import render_to_string

from playground.runs.providers import ProviderNotConfigured, provider_get
from playground.text.content import PROVIDERS
from reviews.models import Annotation, Area, Review

from .models import Suggestion
from .selectors import (
    critique_prompts_visible,
    draft_latest_for_review,
    draft_version_choices,
    leaderboard_for_user,
    suggestion_list,
)
from .services import draft_sync


def provider_choices() -> list[tuple[str, str, bool]]:
    """(value, label, configured) for the provider select; "" is the version's own."""
    out = [("", "The version's own provider", True)]
    for name in PROVIDERS:
        try:
            provider_get(name).check_configured()
            configured = True
        except ProviderNotConfigured:
            configured = False
        label = {"fixture": "fixture (offline, recorded answers)", "echo": "echo (offline)"}.get(
            name, name
        )
        out.append((name, label if configured else f"{label} — not configured", configured))
    return out


def suggestion_context(suggestions: Any) -> dict[str, Any]:
    return {
        "suggestions": suggestions,
        "areas": Area.choices,
        "kinds": Annotation.Kind.choices,
        "severities": Annotation.Severity.choices,
        "pending": Suggestion.State.PENDING,
    }


def draft_panel(review: Review, request: HttpRequest) -> str:
    """The reviewer's "Draft with…" panel on a draft review; nothing for anyone else."""
    user = request.user
    if review.reviewer_id != getattr(user, "pk", None) or review.status != Review.Status.DRAFT:
        return ""
    draft = draft_latest_for_review(user=user, review=review)
    if draft is not None:
        draft = draft_sync(draft=draft)
    providers = provider_choices()
    # Offline by default when the starter's own provider has no key here.
    default_provider = "" if providers[1][2] else "fixture"
    return render_to_string(
        "critique/_draft_panel.html",
        {
            "review": review,
            "draft": draft,
            "choices": draft_version_choices(user=user),
            "providers": providers,
            "default_provider": default_provider,
            **suggestion_context(suggestion_list(draft=draft) if draft else []),
        },
        request=request,
    )


def leaderboard_panel(_obj: Any, request: HttpRequest) -> str:
    """The leaderboard of critique prompts on the practice page, for a signed-in user."""
    user = request.user
    if not user.is_authenticated:
        return ""
    board = leaderboard_for_user(user=user)
    rows = [(row, list(zip(board.columns, row.scores, strict=True))) for row in board.rows]
    humans = list(zip(board.columns, board.humans.scores, board.humans.reviews, strict=True))
    return render_to_string(
        "critique/_leaderboard.html",
        {
            "board": board,
            "rows": rows,
            "humans": humans,
            "own_prompts": list(critique_prompts_visible(user=user)[:10]),
            "providers": provider_choices(),
        },
        request=request,
    )
