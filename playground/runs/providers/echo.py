"""`echo`: an offline provider that streams back a short summary of the request it was given.

Deterministic (the same request always gives the same reply), token by token with a small delay
(`RUN_ECHO_DELAY_MS`), so the embedded default runs, streams and shows usage with no key and no
network. Its requests have the Anthropic Messages shape.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Mapping
from typing import Any

from django.conf import settings

from ...exports.api_calls import Api
from .base import Event, Finished, TextDelta

TOKEN = re.compile(r"\s*\S+")
QUOTE_WORDS = 40


def _words(text: str) -> int:
    return len(TOKEN.findall(text))


def echo_reply(body: Mapping[str, Any]) -> str:
    """The reply to `body`: what was asked, of which model, with which settings."""
    messages = body.get("messages") or []
    system = body.get("system") or ""
    last_user = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
    quoted = " ".join(last_user.split()[:QUOTE_WORDS])
    if len(last_user.split()) > QUOTE_WORDS:
        quoted += " …"
    turns = "turn" if len(messages) == 1 else "turns"
    parts = [
        f"Echo of a call to {body.get('model', '?')}:",
        f"{len(messages)} {turns}",
        f"and a system prompt of {_words(system)} words." if system else "and no system prompt.",
        f"The last user turn says: “{quoted}”." if quoted else "There is no user turn.",
        f"max_tokens {body.get('max_tokens')}",
    ]
    if body.get("temperature") is not None:
        parts[-1] += f", temperature {body['temperature']:g}"
    parts[-1] += "."
    if body.get("tools"):
        names = ", ".join(tool["name"] for tool in body["tools"])
        parts.append(f"Tools offered: {names}.")
    return " ".join(parts)


class EchoProvider:
    name = "echo"
    api: Api = "anthropic"

    def base_url(self) -> str:
        return "echo:"

    def check_configured(self) -> None:
        return None

    def stream(self, *, request: Mapping[str, Any], timeout: float) -> Iterator[Event]:
        body = request["body"]
        delay = settings.RUN_ECHO_DELAY_MS / 1000
        tokens = TOKEN.findall(echo_reply(body))
        limit = int(body.get("max_tokens") or len(tokens))
        texts = [body.get("system") or ""] + [m["content"] for m in body.get("messages") or []]
        for token in tokens[:limit]:
            if delay:
                time.sleep(delay)
            yield TextDelta(token)
        stop = "end_turn" if len(tokens) <= limit else "max_tokens"
        yield Finished(stop, sum(_words(t) for t in texts), min(len(tokens), limit))
