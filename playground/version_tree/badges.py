"""Badges other apps put beside versions in the version tree, without the playground importing
them (docs/architecture.md, Dependency rules).

An app registers a provider in its `AppConfig.ready()`. The tree calls every provider once per
drawing with the prompt and the ids of the versions drawn, so a provider must answer for all of
them in a bounded number of queries (never one per version). The tree is drawn only for people
with at least viewer access to the prompt (never on a shared link's page); a provider must return
only what such a viewer may read.
"""

from collections.abc import Callable
from dataclasses import dataclass

from common.registry import Registry


@dataclass(frozen=True)
class VersionBadge:
    text: str  # short: "92% pass"
    url: str  # where it leads
    title: str  # the longer explanation (tooltip and accessible description)
    # How the figure reads: "good" (green), "warn" (amber), "bad" (red) or "neutral" (blue);
    # a "0% pass" is never drawn green (issue 33).
    tone: str = "neutral"


# (prompt_id, version_ids) -> {version_id: badge}, versions without a badge left out.
BadgeProvider = Callable[[int, list[int]], dict[int, VersionBadge]]
badge_providers: Registry[BadgeProvider] = Registry("version badge provider")


def version_badges_register(*, name: str, provider: BadgeProvider) -> None:
    badge_providers.register(name, provider)


def version_badges_for(*, prompt_id: int, version_ids: list[int]) -> dict[int, list[VersionBadge]]:
    """Every registered provider's badges for these versions, in provider-name order."""
    badges: dict[int, list[VersionBadge]] = {}
    if not version_ids:
        return badges
    for provider in badge_providers.values():
        for version_id, badge in provider(prompt_id, version_ids).items():
            badges.setdefault(version_id, []).append(badge)
    return badges
