"""Feature apps tell the question bank what they tie to a question, without it importing them.

`questionbank` depends on nothing of ours (docs/architecture.md, Dependency rules), yet the
question page lists the prompts
and design documents tied to the question. Each feature app registers a provider in its
`AppConfig.ready()`; the provider is called with the question and the requesting user and returns
only what that user may see.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from common.registry import Registry


@dataclass(frozen=True)
class RelatedItem:
    title: str
    url: str
    meta: str = ""


# Items a group shows on the question page; the page's cost must not grow with a user's history
# (bench/pages.py), so a longer list says there is more instead of listing it.
RELATED_SHOWN = 10


@dataclass(frozen=True)
class RelatedGroup:
    title: str
    items: list[RelatedItem]
    empty_text: str = ""
    more: bool = False  # True when more than RELATED_SHOWN items exist; `items` holds the first


RelatedProvider = Callable[[Any, Any], RelatedGroup]
related_providers: Registry[RelatedProvider] = Registry("related-items provider")


def related_register(*, name: str, provider: RelatedProvider) -> None:
    related_providers.register(name, provider)


def related_for(*, question: Any, user: Any) -> list[RelatedGroup]:
    return [provider(question, user) for provider in related_providers.values()]
