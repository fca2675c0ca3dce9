"""The typed objects the client returns, and how they are read from the server's JSON."""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from . import _export, _template
from ._errors import Error

Api = Literal["anthropic", "openai"]


@dataclass(frozen=True)
class Message:
    role: str  # "user" or "assistant"
    content: str


@dataclass(frozen=True)
class Params:
    temperature: float | None
    max_tokens: int
    top_p: float | None
    stop: tuple[str, ...]


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    input_schema: Mapping[str, Any]  # a JSON schema


@dataclass(frozen=True)
class ResponseFormat:
    name: str
    schema: Mapping[str, Any]  # a JSON schema


@dataclass(frozen=True)
class Content:
    """Everything a version freezes to replay its call (docs/api.md, "Version content")."""

    provider: str
    model: str
    system: str
    messages: tuple[Message, ...]
    params: Params
    tools: tuple[Tool, ...]
    response_format: ResponseFormat | None
    variables: Mapping[str, str]  # name → default

    def placeholders(self) -> list[str]:
        """Variable names used in the system prompt and messages, in order of first use."""
        return _template.placeholders([self.system, *(m.content for m in self.messages)])

    def as_dict(self) -> dict[str, Any]:
        """The content in the server's JSON shape (a fresh copy each call)."""
        return {
            "provider": self.provider,
            "model": self.model,
            "system": self.system,
            "messages": [{"role": m.role, "content": m.content} for m in self.messages],
            "params": {
                "temperature": self.params.temperature,
                "max_tokens": self.params.max_tokens,
                "top_p": self.params.top_p,
                "stop": list(self.params.stop),
            },
            "tools": [
                {
                    "name": t.name,
                    "description": t.description,
                    "input_schema": copy.deepcopy(dict(t.input_schema)),
                }
                for t in self.tools
            ],
            "response_format": None
            if self.response_format is None
            else {
                "name": self.response_format.name,
                "schema": copy.deepcopy(dict(self.response_format.schema)),
            },
            "variables": dict(self.variables),
        }


@dataclass(frozen=True)
class CompiledPrompt:
    """A version's texts with its variables filled in."""

    system: str
    messages: tuple[Message, ...]
    variables: Mapping[str, str]  # the values used: defaults overridden by what was passed


@dataclass(frozen=True)
class PromptVersion:
    """One immutable version of a prompt, exactly as the server stores it."""

    id: int
    prompt_id: int
    number: int  # 1, 2, 3… within the prompt, in save order
    parent: int | None  # the parent version's id (None for the first version)
    author: str
    created_at: datetime
    message: str  # the commit message
    content_hash: str
    content: Content

    def compile(self, /, **variables: str) -> CompiledPrompt:
        """The system prompt and messages with `{{name}}` placeholders filled.

        A value you pass overrides the version's default; an empty one falls back to it. Raises
        `redline.VariableError` naming the variable for a name the version does not declare and
        for a placeholder left with no non-empty value — the rule Redline's runs apply.
        """
        return self._compile(variables, declared_only=False)

    def _compile(self, variables: Mapping[str, str], *, declared_only: bool) -> CompiledPrompt:
        content = self.content
        values = _template.values_resolve(
            declared=content.variables,
            used=content.placeholders(),
            given=variables,
            declared_only=declared_only,
        )
        return CompiledPrompt(
            system=_template.fill(content.system, values),
            messages=tuple(
                Message(role=m.role, content=_template.fill(m.content, values))
                for m in content.messages
            ),
            variables=values,
        )

    def request_body(self, api: Api, /, **variables: str) -> dict[str, Any]:
        """The JSON body of the call to `api` ("anthropic" or "openai"): with no variables
        passed, exactly what `GET /api/v1/versions/{id}/export/?api=…&format=json` answers.

        Variables as in `compile`, except that — as in the export — a `{{name}}` the version
        does not declare is sent as written (call `compile()` first to refuse those too).
        """
        compiled = self._compile(variables, declared_only=True)
        if api == "anthropic":
            return _export.anthropic_body(self.content.as_dict(), compiled)
        if api == "openai":
            return _export.openai_body(self.content.as_dict(), compiled)
        raise ValueError(f"unknown api {api!r}: expected 'anthropic' or 'openai'")

    def to_anthropic(self, /, **variables: str) -> dict[str, Any]:
        """Keyword arguments for `anthropic.Anthropic().messages.create(**...)`.

        The SDK sends exactly `request_body("anthropic")`: fields the current SDK no longer
        declares (`temperature`, `top_p`) travel in `extra_body`, the API version that still
        takes them is pinned in `extra_headers`, and a `timeout` is set when `max_tokens` is
        above the SDK's non-streaming limit — as the export's Python code does.
        """
        return _export.anthropic_sdk_arguments(self.request_body("anthropic", **variables))

    def to_openai(self, /, **variables: str) -> dict[str, Any]:
        """Keyword arguments for `openai.OpenAI().chat.completions.create(**...)`: the request
        body itself (every field is an argument of the SDK)."""
        return self.request_body("openai", **variables)


# --- reading the server's JSON ----------------------------------------------------------------


def _bad(what: str) -> Error:
    return Error(f"unexpected answer from the server: {what}")


def _field(data: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    value = data.get(key)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise _bad(f"{where}{key} is {type(value).__name__}")
    return value


def _number(value: Any, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _bad(f"{where} is {type(value).__name__}")
    return value


def _content(data: Any) -> Content:
    if not isinstance(data, dict):
        raise _bad("content is not an object")
    params = _field(data, "params", dict, "content.")
    messages = _field(data, "messages", list, "content.")
    tools = data.get("tools") or []
    fmt = data.get("response_format")
    variables = data.get("variables") or {}
    if not isinstance(tools, list) or not isinstance(variables, dict):
        raise _bad("content.tools or content.variables has the wrong type")
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in variables.items()):
        raise _bad("content.variables is not an object of texts")
    stop = params.get("stop") or []
    if not isinstance(stop, list) or not all(isinstance(s, str) for s in stop):
        raise _bad("content.params.stop is not a list of texts")
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            raise _bad(f"content.messages.{i} is not an object")
        _field(m, "role", str, f"content.messages.{i}.")
        _field(m, "content", str, f"content.messages.{i}.")
    for i, t in enumerate(tools):
        if not isinstance(t, dict):
            raise _bad(f"content.tools.{i} is not an object")
        _field(t, "name", str, f"content.tools.{i}.")
        _field(t, "input_schema", dict, f"content.tools.{i}.")
    if fmt is not None and not (isinstance(fmt, dict) and isinstance(fmt.get("schema"), dict)):
        raise _bad("content.response_format is not an object with a schema")
    return Content(
        provider=_field(data, "provider", str, "content."),
        model=_field(data, "model", str, "content."),
        system=_field(data, "system", str, "content."),
        messages=tuple(Message(role=m["role"], content=m["content"]) for m in messages),
        params=Params(
            temperature=_number(params.get("temperature"), "content.params.temperature"),
            max_tokens=_field(params, "max_tokens", int, "content.params."),
            top_p=_number(params.get("top_p"), "content.params.top_p"),
            stop=tuple(stop),
        ),
        tools=tuple(
            Tool(
                name=t["name"],
                description=str(t.get("description") or ""),
                input_schema=t["input_schema"],
            )
            for t in tools
        ),
        response_format=None
        if fmt is None
        else ResponseFormat(name=str(fmt.get("name") or "response"), schema=fmt["schema"]),
        variables=dict(variables),
    )


def content_digest(content: Mapping[str, Any]) -> str:
    """The content hash Redline gives a version: SHA-256 of the canonical JSON (sorted keys,
    no spaces, UTF-8)."""
    canonical = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def version_parse(data: Any) -> PromptVersion:
    """A `PromptVersion` from the body of a version answer whose texts are all whole.

    The content is checked against its `content_hash`, so a text put together from ranges (or
    anything else the client got wrong) is an error, never a silently different prompt.
    """
    if not isinstance(data, dict):
        raise _bad("the body is not a JSON object")
    parent = data.get("parent")
    if parent is not None and (isinstance(parent, bool) or not isinstance(parent, int)):
        raise _bad(f"parent is {type(parent).__name__}")
    created_raw = _field(data, "created_at", str, "")
    try:
        created_at = datetime.fromisoformat(created_raw)
    except ValueError:
        raise _bad(f"created_at {created_raw!r} is not an ISO 8601 time") from None
    content_hash = _field(data, "content_hash", str, "")
    raw_content = data.get("content")
    if not isinstance(raw_content, dict):
        raise _bad("content is not an object")
    content = _content(raw_content)
    if content_digest(raw_content) != content_hash:
        raise _bad(f"the content of version {data.get('id')} does not match its content_hash")
    return PromptVersion(
        id=_field(data, "id", int, ""),
        prompt_id=_field(data, "prompt", int, ""),
        number=_field(data, "number", int, ""),
        parent=parent,
        author=str(data.get("author") or ""),
        created_at=created_at,
        message=str(data.get("message") or ""),
        content_hash=content_hash,
        content=content,
    )
