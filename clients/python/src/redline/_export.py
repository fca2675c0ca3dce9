"""Request bodies for the Anthropic Messages API and OpenAI Chat Completions.

They are the bodies Redline's export sends (`GET /api/v1/versions/{id}/export/?format=json`),
field for field: the client's tests compare the two on every case they build, and run both
through the official SDKs against a recording server.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._models import CompiledPrompt

# Sampling fields the anthropic SDK (>= 1.0) no longer declares; the API version below still
# takes them, so they travel as extra body fields under that version, as Redline's export does.
ANTHROPIC_UNTYPED = ("temperature", "top_p")
ANTHROPIC_VERSION = "2023-06-01"
# Above this max_tokens the anthropic SDK refuses a non-streaming call unless given a timeout.
ANTHROPIC_NONSTREAMING_MAX_TOKENS = 8192
LONG_TIMEOUT_SECONDS = 3600.0
# The model a call names when the version belongs to the other API's provider: that API's
# default, as Redline's runs and exports choose it (its
# `playground.text.content.DEFAULT_MODELS`; the client's tests check the two tables agree). A
# version keeps its own model on its own API.
DEFAULT_MODELS = {"anthropic": "claude-sonnet-4-6", "openai": "gpt-4.1-mini"}


def call_model(content: Mapping[str, Any], api: str) -> str:
    """The model the call to `api` names (the offline `echo` provider keeps its own)."""
    provider = content["provider"]
    if provider == api or provider not in DEFAULT_MODELS:
        return str(content["model"])
    return DEFAULT_MODELS[api]


def _sampling(params: Mapping[str, Any], *, stop_key: str) -> dict[str, Any]:
    out = {key: params[key] for key in ("temperature", "top_p") if params.get(key) is not None}
    if params.get("stop"):
        out[stop_key] = list(params["stop"])
    return out


def _tool(tool: Mapping[str, Any], *, schema_key: str) -> dict[str, Any]:
    out: dict[str, Any] = {"name": tool["name"]}
    if tool.get("description"):
        out["description"] = tool["description"]
    out[schema_key] = copy.deepcopy(tool["input_schema"])
    return out


def _messages(compiled: CompiledPrompt) -> list[dict[str, Any]]:
    return [{"role": m.role, "content": m.content} for m in compiled.messages]


def anthropic_body(content: Mapping[str, Any], compiled: CompiledPrompt) -> dict[str, Any]:
    params = content["params"]
    body: dict[str, Any] = {
        "model": call_model(content, "anthropic"),
        "max_tokens": params["max_tokens"],
    }
    if content["system"]:
        body["system"] = compiled.system
    body["messages"] = _messages(compiled)
    body.update(_sampling(params, stop_key="stop_sequences"))
    if content["tools"]:
        body["tools"] = [_tool(t, schema_key="input_schema") for t in content["tools"]]
    if fmt := content["response_format"]:
        body["output_config"] = {
            "format": {"type": "json_schema", "schema": copy.deepcopy(fmt["schema"])}
        }
    return body


def openai_body(content: Mapping[str, Any], compiled: CompiledPrompt) -> dict[str, Any]:
    params = content["params"]
    system = [{"role": "system", "content": compiled.system}] if content["system"] else []
    body: dict[str, Any] = {
        "model": call_model(content, "openai"),
        "messages": system + _messages(compiled),
        "max_completion_tokens": params["max_tokens"],
    }
    body.update(_sampling(params, stop_key="stop"))
    if content["tools"]:
        body["tools"] = [
            {"type": "function", "function": _tool(t, schema_key="parameters")}
            for t in content["tools"]
        ]
    if fmt := content["response_format"]:
        schema = {"name": fmt["name"], "schema": copy.deepcopy(fmt["schema"]), "strict": True}
        body["response_format"] = {"type": "json_schema", "json_schema": schema}
    return body


def anthropic_sdk_arguments(body: Mapping[str, Any]) -> dict[str, Any]:
    """`body` as keyword arguments of `messages.create` that make the SDK send exactly it."""
    arguments = {k: v for k, v in body.items() if k not in ANTHROPIC_UNTYPED}
    untyped = {k: v for k, v in body.items() if k in ANTHROPIC_UNTYPED}
    if untyped:
        arguments["extra_body"] = untyped
    arguments["extra_headers"] = {"anthropic-version": ANTHROPIC_VERSION}
    if body["max_tokens"] > ANTHROPIC_NONSTREAMING_MAX_TOKENS:
        arguments["timeout"] = LONG_TIMEOUT_SECONDS
    return arguments
