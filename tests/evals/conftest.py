"""The loopback provider server and inline runs, shared with the playground's run tests."""

from tests.playground.runkit.fixtures import inline_runs, provider_server, providers

__all__ = ["inline_runs", "provider_server", "providers"]
