"""Fixtures shared by the playground's run tests (the loopback provider server, inline runs)."""

from tests.playground.runkit.fixtures import inline_runs, provider_server, providers

__all__ = ["inline_runs", "provider_server", "providers"]
