"""The providers by name: a version's `provider` field → its adapter.

The playground registers its adapters in `PlaygroundConfig.ready()`, like every registry's
entries (common.registry). Apart from `base.py` (the interface the adapters import), so that no
adapter imports a module that imports it back."""

from __future__ import annotations

from common.registry import Registry

from .base import Provider, ProviderNotConfigured

adapters: Registry[type[Provider]] = Registry("model provider")


def provider_register(*, name: str, adapter: type[Provider]) -> None:
    adapters.register(name, adapter)


def provider_get(name: str) -> Provider:
    """The adapter for a version's `provider` field."""
    adapter = adapters.get(name)
    if adapter is None:
        raise ProviderNotConfigured(f"provider: unknown provider {name!r}.", field="provider")
    return adapter()
