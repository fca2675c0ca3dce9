"""`fixture`: an offline provider that answers with a recorded reply.

Other apps register resolvers (`fixture_replies_register`, from their `AppConfig.ready()`): a
resolver reads the request body and returns the recorded reply for it, or None when it has none.
The first resolver that answers wins; a request nobody recorded fails the run with a reason, so a
fixture run never invents an answer. The reply is streamed in pieces of `FIXTURE_PIECE_CHARS`
characters, `RUN_FIXTURE_DELAY_MS` apart, so streaming readers see it arrive as from a model.
Deterministic: the same request always gets the same reply. Its requests have the Anthropic
Messages shape (so a structured-output request carries `output_config`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from django.conf import settings

from common.registry import Registry

from ...exports.api_calls import Api
from .base import Event, Finished, ProviderError, TextDelta

FIXTURE_PIECE_CHARS = 48

FixtureResolver = Callable[[Mapping[str, Any]], str | None]
fixture_resolvers: Registry[FixtureResolver] = Registry("fixture reply resolver")


def fixture_replies_register(*, name: str, resolver: FixtureResolver) -> None:
    """Add a source of recorded replies under `name`."""
    fixture_resolvers.register(name, resolver)


def fixture_reply(body: Mapping[str, Any]) -> str | None:
    """The recorded reply to `body`, from the first resolver (by name) that has one."""
    for resolver in fixture_resolvers.values():
        reply = resolver(body)
        if reply is not None:
            return reply
    return None


def _words(text: str) -> int:
    return len(text.split())


class FixtureProvider:
    name = "fixture"
    api: Api = "anthropic"

    def base_url(self) -> str:
        return "fixture:"

    def check_configured(self) -> None:
        return None

    def stream(self, *, request: Mapping[str, Any], timeout: float) -> Iterator[Event]:
        body = request["body"]
        reply = fixture_reply(body)
        if reply is None:
            raise ProviderError(
                "The fixture provider has no recorded reply for this request (it answers only"
                " the requests an app recorded, such as a critique of a practice document)."
            )
        delay = settings.RUN_FIXTURE_DELAY_MS / 1000
        for at in range(0, len(reply), FIXTURE_PIECE_CHARS):
            if delay and at:
                time.sleep(delay)
            yield TextDelta(reply[at : at + FIXTURE_PIECE_CHARS])
        texts = [body.get("system") or ""] + [m["content"] for m in body.get("messages") or []]
        yield Finished("end_turn", sum(_words(t) for t in texts), _words(reply))
