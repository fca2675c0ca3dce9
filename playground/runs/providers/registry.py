"""The providers by name: a version's `provider` field → its adapter.

Apart from `base.py` (the interface the adapters import), so that no adapter imports a module
that imports it back."""

from __future__ import annotations

from .anthropic_messages import AnthropicProvider
from .base import Provider, ProviderNotConfigured
from .echo import EchoProvider
from .fixture import FixtureProvider
from .openai_chat import OpenAIProvider

ADAPTERS: dict[str, type[Provider]] = {
    "anthropic": AnthropicProvider,
    "openai": OpenAIProvider,
    "echo": EchoProvider,
    "fixture": FixtureProvider,
}


def provider_get(name: str) -> Provider:
    """The adapter for a version's `provider` field."""
    if name not in ADAPTERS:
        raise ProviderNotConfigured(f"provider: unknown provider {name!r}.", field="provider")
    return ADAPTERS[name]()
