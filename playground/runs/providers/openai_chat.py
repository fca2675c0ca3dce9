"""OpenAI Chat Completions through the official `openai` SDK, streamed; any compatible base URL
(vLLM, Ollama, LM Studio) works the same way."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from django.conf import settings

from ...exports.api_calls import Api, export_sdk_arguments
from .base import Event, Finished, ProviderError, ProviderNotConfigured, TextDelta, ToolCall
from .sdk import sdk_errors

DEFAULT_BASE_URL = "https://api.openai.com/v1"
TITLE = "OpenAI"
# Local OpenAI-compatible servers take no key, but the SDK insists on one.
NO_KEY = "not-needed"  # noqa: S105


class OpenAIProvider:
    name = "openai"
    api: Api = "openai"

    def base_url(self) -> str:
        return (settings.OPENAI_BASE_URL or DEFAULT_BASE_URL).rstrip("/")

    def check_configured(self) -> None:
        if not (settings.OPENAI_API_KEY or settings.OPENAI_BASE_URL):
            raise ProviderNotConfigured(
                "provider: OpenAI is not configured here (set OPENAI_API_KEY, or OPENAI_BASE_URL"
                " for a compatible server such as vLLM, Ollama or LM Studio).",
                field="provider",
            )

    def stream(self, *, request: Mapping[str, Any], timeout: float) -> Iterator[Event]:
        self.check_configured()
        # Imported here: the SDK takes a second or more to import, which every process (a
        # manage.py command, a web or Celery worker) would pay at start-up whether or not it
        # ever calls OpenAI.
        import openai

        args = export_sdk_arguments(request=request, api="openai")
        client = openai.OpenAI(
            api_key=settings.OPENAI_API_KEY or NO_KEY,
            base_url=self.base_url(),
            timeout=timeout,
            max_retries=0,
            default_headers=args.default_headers or None,
        )
        with sdk_errors(openai, title=TITLE, base_url=self.base_url(), timeout=timeout) as call:
            stream = client.chat.completions.create(
                **args.typed, extra_body=args.extra_body or None
            )
            call.answered = True
            with stream:
                yield from _events(stream)


def _events(stream: Any) -> Iterator[Event]:
    finish_reason = ""
    input_tokens: int | None = None
    output_tokens: int | None = None
    tools: dict[int, dict[str, str]] = {}
    for chunk in stream:
        if chunk.usage is not None:
            input_tokens = chunk.usage.prompt_tokens
            output_tokens = chunk.usage.completion_tokens
        for choice in chunk.choices or []:
            delta = choice.delta
            if delta is not None and delta.content:
                yield TextDelta(delta.content)
            for call in (delta.tool_calls or []) if delta is not None else []:
                tool = tools.setdefault(call.index, {"id": "", "name": "", "json": ""})
                if call.id:
                    tool["id"] = call.id
                if call.function is not None:
                    tool["name"] += call.function.name or ""
                    tool["json"] += call.function.arguments or ""
            if choice.finish_reason:
                finish_reason = choice.finish_reason
    if not finish_reason:
        raise ProviderError(f"{TITLE}'s stream ended before the reply finished (no finish_reason).")
    for _, tool in sorted(tools.items()):
        try:
            arguments = json.loads(tool["json"]) if tool["json"] else {}
        except json.JSONDecodeError:
            raise ProviderError(
                f"{TITLE} sent malformed arguments for tool {tool['name']!r}."
            ) from None
        yield ToolCall(id=tool["id"], name=tool["name"], input=arguments)
    yield Finished(finish_reason, input_tokens, output_tokens)
