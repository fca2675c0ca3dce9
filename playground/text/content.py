"""The frozen content of a prompt version: validation, canonical form and content hash.

A version freezes everything needed to replay the call (docs/design.md; shape in docs/api.md):

    {"provider": "anthropic", "model": "...", "system": "...",
     "messages": [{"role": "user", "content": "..."}],
     "params": {"temperature": 1.0, "max_tokens": 1024, "top_p": null, "stop": []},
     "tools": [], "response_format": null, "variables": {"name": "default"}}

`content_validate` is the one gate every writer (API, editor, services) goes through: it returns
the canonical dict (defaults filled, keys fixed) or raises `ContentInvalid` naming the field.
That dict is a `VersionContent`: input stays `Any` until it has passed the gate, and every reader
after it (services, diffing, export, runs) takes the typed shape.
"""

import hashlib
import json
import re
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypedDict

from common.jsonlimits import JSON_MAX_DEPTH, json_depth_exceeds, json_text_problem

from ..exceptions import ContentInvalid
from ..models import MODEL_MAX_CHARS

PROVIDERS = ("anthropic", "openai", "echo", "fixture")
ROLES = ("user", "assistant")
DEFAULT_MODELS = {
    "anthropic": "claude-sonnet-4-6",
    "openai": "gpt-4.1-mini",
    "echo": "echo-1",
    "fixture": "fixture-1",
}

MAX_TOKENS_LIMIT = 1_000_000
MAX_STOP_SEQUENCES = 16
MAX_MESSAGES = 500
MAX_TOOLS = 128
TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
VARIABLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
TOP_LEVEL_KEYS = {
    "provider",
    "model",
    "system",
    "messages",
    "params",
    "tools",
    "response_format",
    "variables",
}
PARAM_KEYS = {"temperature", "max_tokens", "top_p", "stop"}


class Message(TypedDict):
    role: str  # one of ROLES
    content: str


class Params(TypedDict):
    temperature: float | None
    max_tokens: int
    top_p: float | None
    stop: list[str]


class Tool(TypedDict):
    name: str
    description: str
    input_schema: dict[str, Any]  # a JSON schema, free-form by nature


class ResponseFormat(TypedDict):
    name: str
    schema: dict[str, Any]  # a JSON schema


class VersionContent(TypedDict):
    """A version's content once validated: every key present, every text a `str`."""

    provider: str  # one of PROVIDERS
    model: str
    system: str
    messages: list[Message]
    params: Params
    tools: list[Tool]
    response_format: ResponseFormat | None
    variables: dict[str, str]


def model_for_provider(*, content: VersionContent, provider: str) -> str:
    """The model a call of this version on `provider` names: the version's own model on its own
    provider, that provider's default model on any other. A run on another provider (compare)
    and the export for the other API both ask here, so the run sends what the export shows."""
    return content["model"] if provider == content["provider"] else DEFAULT_MODELS[provider]


# Checks one long text (system, a message's content) of raw input; returns the text to store.
TextCheck = Callable[[Any, str], str]


@dataclass(frozen=True)
class StoredText:
    """A text already stored in textstore, standing in for its characters in a canonical
    content dict (the upload flow: the text is never loaded whole)."""

    sha256: str


class StoredMessage(TypedDict):
    role: str
    content: str | StoredText


class PreparedVersionContent(TypedDict):
    """A `VersionContent` whose texts may be `StoredText`s (stored before the save)."""

    provider: str
    model: str
    system: str | StoredText
    messages: list[StoredMessage]
    params: Params
    tools: list[Tool]
    response_format: ResponseFormat | None
    variables: dict[str, str]


@dataclass(frozen=True)
class PreparedContent:
    """Validated content whose long texts may be `StoredText`s, with its content hash computed
    over the texts themselves (so it equals the hash of the same content sent inline). Built by
    `playground.text.uploads.content_prepare` (and by services from a stored version's row)."""

    canonical: PreparedVersionContent
    digest: str
    # (field, upload id) of each upload whose text this content stored: the save marks them
    # used in its own transaction (playground.services, issue #31).
    uploads: tuple[tuple[str, str], ...] = ()


def _fail(field: str, message: str) -> ContentInvalid:
    return ContentInvalid(f"{field}: {message}", field=field)


def _text(value: Any, field: str) -> str:
    if not isinstance(value, str):
        raise _fail(field, "must be a string.")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise _fail(field, "is not valid UTF-8 text.") from None
    if "\x00" in value:
        raise _fail(field, "must not contain NUL characters.")
    return value


def content_text_check(value: Any, field: str) -> str:
    """The check every long text passes (a string, valid UTF-8, no NUL)."""
    return _text(value, field)


def _number(value: Any, field: str, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _fail(field, "must be a number.")
    if not low <= value <= high:
        raise _fail(field, f"must be between {low:g} and {high:g}.")
    return float(value)


def _json_schema(value: Any, field: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(field, "must be a JSON object (a JSON schema).")
    schema_type = value.get("type")
    if schema_type is not None and not isinstance(schema_type, (str, list)):
        raise _fail(field, "has an invalid 'type'.")
    if json_depth_exceeds(value, JSON_MAX_DEPTH):
        raise _fail(field, f"is nested deeper than {JSON_MAX_DEPTH} levels.")
    problem = json_text_problem(value)
    if problem:
        raise _fail(field, f"{problem}.")
    return value


def _params(raw: Any) -> Params:
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise _fail("params", "must be an object.")
    unknown = set(raw) - PARAM_KEYS
    if unknown:
        raise _fail("params", f"unknown parameter {sorted(unknown)[0]!r}.")
    temperature = raw.get("temperature", 1.0)
    max_tokens = raw.get("max_tokens", 1024)
    top_p = raw.get("top_p")
    stop = raw.get("stop") or []
    if temperature is not None:
        temperature = _number(temperature, "params.temperature", 0.0, 2.0)
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int):
        raise _fail("params.max_tokens", "must be a whole number.")
    if not 1 <= max_tokens <= MAX_TOKENS_LIMIT:
        raise _fail("params.max_tokens", f"must be between 1 and {MAX_TOKENS_LIMIT}.")
    if top_p is not None:
        top_p = _number(top_p, "params.top_p", 0.0, 1.0)
    if not isinstance(stop, list) or len(stop) > MAX_STOP_SEQUENCES:
        raise _fail("params.stop", f"must be a list of at most {MAX_STOP_SEQUENCES} strings.")
    stop = [_text(item, f"params.stop.{i}") for i, item in enumerate(stop)]
    if any(not item for item in stop):
        raise _fail("params.stop", "must not contain empty strings.")
    return {"temperature": temperature, "max_tokens": max_tokens, "top_p": top_p, "stop": stop}


def _tools(raw: Any) -> list[Tool]:
    if raw is None:
        return []
    if not isinstance(raw, list) or len(raw) > MAX_TOOLS:
        raise _fail("tools", f"must be a list of at most {MAX_TOOLS} tools.")
    tools: list[Tool] = []
    names: set[str] = set()
    for index, tool in enumerate(raw):
        field = f"tools.{index}"
        if not isinstance(tool, dict):
            raise _fail(field, "must be an object with name, description and input_schema.")
        name = _text(tool.get("name"), f"{field}.name")
        if not TOOL_NAME.match(name):
            raise _fail(f"{field}.name", "must be 1-64 letters, digits, '_' or '-'.")
        if name in names:
            raise _fail(f"{field}.name", f"duplicate tool name {name!r}.")
        names.add(name)
        description = _text(tool.get("description", ""), f"{field}.description")
        schema = _json_schema(tool.get("input_schema", {"type": "object"}), f"{field}.input_schema")
        tools.append({"name": name, "description": description, "input_schema": schema})
    return tools


def _response_format(raw: Any) -> ResponseFormat | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise _fail("response_format", "must be null or an object with name and schema.")
    name = _text(raw.get("name", "response"), "response_format.name")
    if not TOOL_NAME.match(name):
        raise _fail("response_format.name", "must be 1-64 letters, digits, '_' or '-'.")
    if "schema" not in raw:
        raise _fail("response_format.schema", "is required (a JSON schema).")
    return {"name": name, "schema": _json_schema(raw["schema"], "response_format.schema")}


def _variables(raw: Any) -> dict[str, str]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise _fail("variables", "must be an object of name → default text.")
    out = {}
    for name, default in raw.items():
        if not VARIABLE_NAME.match(name):
            raise _fail(f"variables.{name}", "names are letters, digits and '_' (not first).")
        out[name] = _text(default, f"variables.{name}")
    return dict(sorted(out.items()))


def content_validate(raw: Any, *, text_field: TextCheck = _text) -> VersionContent:
    """Validate `raw` and return its canonical form; raise ContentInvalid naming the field.

    `text_field` checks each long text (system, message contents); the upload flow passes one
    that also accepts `{"upload": id}` references.
    """
    if not isinstance(raw, dict):
        raise _fail("content", "must be a JSON object.")
    unknown = set(raw) - TOP_LEVEL_KEYS
    if unknown:
        raise _fail("content", f"unknown field {sorted(unknown)[0]!r}.")
    provider = raw.get("provider", "echo")
    if provider not in PROVIDERS:
        raise _fail("provider", f"must be one of {', '.join(PROVIDERS)}.")
    model = _text(raw.get("model") or DEFAULT_MODELS[provider], "model").strip()
    if not model or len(model) > MODEL_MAX_CHARS:
        raise _fail("model", f"must be 1-{MODEL_MAX_CHARS} characters.")
    system = text_field(raw.get("system", ""), "system")
    messages_raw = raw.get("messages", [])
    if not isinstance(messages_raw, list):
        raise _fail("messages", "must be a list of {role, content}.")
    if len(messages_raw) > MAX_MESSAGES:
        raise _fail("messages", f"at most {MAX_MESSAGES} messages.")
    messages: list[Message] = []
    for index, message in enumerate(messages_raw):
        field = f"messages.{index}"
        if not isinstance(message, dict):
            raise _fail(field, "must be an object with role and content.")
        role = message.get("role")
        if role not in ROLES:
            raise _fail(f"{field}.role", f"must be one of {', '.join(ROLES)}.")
        messages.append(
            {"role": role, "content": text_field(message.get("content"), f"{field}.content")}
        )
    # A reference (an upload, the parent's text) counts as a system prompt here.
    if not messages and isinstance(system, str) and not system.strip():
        raise _fail("messages", "an empty messages list needs a system prompt.")
    return {
        "provider": provider,
        "model": model,
        "system": system,
        "messages": messages,
        "params": _params(raw.get("params")),
        "tools": _tools(raw.get("tools")),
        "response_format": _response_format(raw.get("response_format")),
        "variables": _variables(raw.get("variables")),
    }


def content_hash(content: VersionContent) -> str:
    """SHA-256 of the canonical JSON of the frozen fields (sorted keys, no spaces, UTF-8)."""
    canonical = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def prepared_content_hash(
    prepared: PreparedVersionContent, *, text_pieces: Callable[[str], Iterable[str]]
) -> str:
    """`content_hash` of the same content with every `StoredText` replaced by its text, which
    is streamed piece by piece from `text_pieces(sha)` and never held whole (JSON escapes
    character by character, so pieces escape like the whole text)."""
    markers: dict[str, str] = {}
    nonce = uuid.uuid4().hex

    def marker(value: Any) -> str:
        if not isinstance(value, StoredText):
            raise TypeError(f"cannot hash {type(value).__name__}")
        key = f"\x00{nonce}:{len(markers)}\x00"
        markers[json.dumps(key)] = value.sha256
        return key

    canonical = json.dumps(
        prepared, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=marker
    )
    if not markers:
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    digest = hashlib.sha256()
    pattern = re.compile("|".join(re.escape(m) for m in markers))
    position = 0
    for match in pattern.finditer(canonical):
        digest.update(canonical[position : match.start()].encode("utf-8"))
        digest.update(b'"')
        for piece in text_pieces(markers[match.group(0)]):
            digest.update(json.dumps(piece, ensure_ascii=False)[1:-1].encode("utf-8"))
        digest.update(b'"')
        position = match.end()
    digest.update(canonical[position:].encode("utf-8"))
    return digest.hexdigest()


def content_placeholders(content: VersionContent) -> list[str]:
    """Template variable names used in the texts, in order of first use."""
    texts = [content["system"], *(m["content"] for m in content["messages"])]
    seen: dict[str, None] = {}
    for text in texts:
        for match in PLACEHOLDER.finditer(text):
            seen.setdefault(match.group(1), None)
    return list(seen)


def variables_unfilled_check(
    *, content: VersionContent, values: dict[str, str], declared_only: bool = False
) -> None:
    """Every placeholder the texts use needs a non-empty value in `values`; the first that has
    none is a ContentInvalid naming it. Runs (API and page) and exports (API and panel) check
    with this one rule, so an empty variable is never sent as "". `declared_only` (exports)
    checks only the names the version declares: an export sends an undeclared `{{name}}`
    literally, braces and all (a prompt may show template syntax), with a warning."""
    for name in content_placeholders(content):
        if declared_only and name not in values:
            continue
        if not values.get(name):
            state = "is empty" if name in values else "has no value"
            raise ContentInvalid(
                f"variables.{name}: {{{{{name}}}}} is used in the prompt but {state}; fill it in"
                " or declare a non-empty default.",
                field=f"variables.{name}",
            )
