"""The provider interface, its events and its errors."""

from __future__ import annotations

import email.utils
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from ...exceptions import PlaygroundError
from ...exports.api_calls import Api


@dataclass(frozen=True)
class TextDelta:
    """Some more output text."""

    text: str


@dataclass(frozen=True)
class ToolCall:
    """The model asked for a tool: its call id, the tool's name and the parsed arguments."""

    id: str
    name: str
    input: Any


@dataclass(frozen=True)
class Finished:
    """The provider finished the reply (the stream's last event)."""

    stop_reason: str
    input_tokens: int | None
    output_tokens: int | None


Event = TextDelta | ToolCall | Finished


class ProviderNotConfigured(PlaygroundError):
    """The version's provider has no key or base URL in this deployment (400, before a run)."""


class ProviderError(Exception):
    """A call failed; `reason` is written for the person who started the run.

    `retry_after` (seconds) is set for answers that ask the caller to come back (429).
    """

    def __init__(self, reason: str, *, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


class Provider(Protocol):
    name: str
    api: Api  # which export shape its requests have

    def base_url(self) -> str:
        """Where the request goes (the provider's default or the configured base URL)."""
        ...

    def check_configured(self) -> None:
        """Raise ProviderNotConfigured naming the setting that is missing."""
        ...

    def stream(self, *, request: Mapping[str, Any], timeout: float) -> Iterator[Event]:
        """Send `request` and yield its events; the last one is `Finished`.

        Raises ProviderError (timeouts, error answers, a malformed or cut-off stream).
        """
        ...


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """`retry-after-ms`, else `retry-after` as seconds or an HTTP date; None when absent."""
    if not headers:
        return None
    lowered = {k.lower(): v for k, v in headers.items()}
    try:
        if "retry-after-ms" in lowered:
            return max(0.0, float(lowered["retry-after-ms"]) / 1000)
        value = lowered.get("retry-after")
        if value is None:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            parsed = email.utils.parsedate_to_datetime(value)
            return max(0.0, parsed.timestamp() - time.time())
    except (TypeError, ValueError):
        return None
