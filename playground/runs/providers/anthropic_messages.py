"""Anthropic Messages API through the official `anthropic` SDK, streamed."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from django.conf import settings

from ...exports.api_calls import Api, export_sdk_arguments
from .base import Event, Finished, ProviderError, ProviderNotConfigured, TextDelta, ToolCall
from .sdk import sdk_errors

DEFAULT_BASE_URL = "https://api.anthropic.com"
TITLE = "Anthropic"


class AnthropicProvider:
    name = "anthropic"
    api: Api = "anthropic"

    def base_url(self) -> str:
        return (settings.ANTHROPIC_BASE_URL or DEFAULT_BASE_URL).rstrip("/")

    def check_configured(self) -> None:
        if not settings.ANTHROPIC_API_KEY:
            raise ProviderNotConfigured(
                "provider: Anthropic is not configured here (set ANTHROPIC_API_KEY).",
                field="provider",
            )

    def stream(self, *, request: Mapping[str, Any], timeout: float) -> Iterator[Event]:
        self.check_configured()
        # Imported here: the SDK takes a second or more to import, which every process (a
        # manage.py command, a web or Celery worker) would pay at start-up whether or not it
        # ever calls Anthropic.
        import anthropic

        args = export_sdk_arguments(request=request, api="anthropic")
        client = anthropic.Anthropic(
            api_key=settings.ANTHROPIC_API_KEY,
            base_url=self.base_url(),
            timeout=timeout,
            max_retries=0,  # the run retries 429s itself, within its bound
            default_headers=args.default_headers,
        )
        with sdk_errors(anthropic, title=TITLE, base_url=self.base_url(), timeout=timeout) as call:
            stream = client.messages.create(**args.typed, extra_body=args.extra_body or None)
            call.answered = True
            with stream:
                yield from _events(stream)


def _events(stream: Any) -> Iterator[Event]:
    input_tokens: int | None = None
    output_tokens: int | None = None
    stop_reason = ""
    tools: dict[int, dict[str, Any]] = {}
    for event in stream:
        kind = event.type
        if kind == "message_start":
            input_tokens = event.message.usage.input_tokens
            output_tokens = event.message.usage.output_tokens
        elif kind == "content_block_start" and event.content_block.type == "tool_use":
            block = event.content_block
            tools[event.index] = {"id": block.id, "name": block.name, "json": ""}
        elif kind == "content_block_delta":
            delta = event.delta
            if delta.type == "text_delta":
                yield TextDelta(delta.text)
            elif delta.type == "input_json_delta" and event.index in tools:
                tools[event.index]["json"] += delta.partial_json
        elif kind == "content_block_stop" and event.index in tools:
            tool = tools.pop(event.index)
            try:
                arguments = json.loads(tool["json"]) if tool["json"] else {}
            except json.JSONDecodeError:
                raise ProviderError(
                    f"{TITLE} sent malformed arguments for tool {tool['name']!r}."
                ) from None
            yield ToolCall(id=tool["id"], name=tool["name"], input=arguments)
        elif kind == "message_delta":
            stop_reason = event.delta.stop_reason or stop_reason
            if event.usage is not None and event.usage.output_tokens is not None:
                output_tokens = event.usage.output_tokens
        elif kind == "message_stop":
            yield Finished(stop_reason or "end_turn", input_tokens, output_tokens)
            return
    raise ProviderError(f"{TITLE}'s stream ended before the reply finished (no message_stop).")
