"""Fixtures for run tests: the loopback provider server wired into settings, inline runs."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.playground.exportkit.providers import FakeProviders


@pytest.fixture(scope="session")
def provider_server() -> Iterator[FakeProviders]:
    with FakeProviders() as server:
        yield server


@pytest.fixture
def providers(provider_server: FakeProviders, settings: Any) -> Iterator[FakeProviders]:
    """The fake Anthropic/OpenAI server as this deployment's providers; runs execute inline."""
    provider_server.clear()
    settings.ANTHROPIC_BASE_URL = provider_server.origin
    settings.ANTHROPIC_API_KEY = "sk-ant-test"
    settings.OPENAI_BASE_URL = f"{provider_server.origin}/v1"
    settings.OPENAI_API_KEY = "sk-openai-test"
    settings.RUN_EAGER_MODE = "inline"
    settings.RUN_PROVIDER_TIMEOUT = 2.0
    settings.RUN_RETRY_MAX_WAIT = 2.0
    settings.RUN_ECHO_DELAY_MS = 0
    yield provider_server
    provider_server.clear()


@pytest.fixture
def inline_runs(settings: Any) -> None:
    settings.RUN_EAGER_MODE = "inline"
    settings.RUN_ECHO_DELAY_MS = 0
