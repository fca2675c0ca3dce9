"""Export a prompt version as a real API call: curl, Python, TypeScript or the raw JSON body.

Every format is rendered from one intermediate request per API (`export_request`), so the formats
cannot disagree about what is sent. Keys never appear in an export: the code reads them from the
environment, and honours the SDKs' base-URL variables (`ANTHROPIC_BASE_URL`, `OPENAI_BASE_URL`) so
an export can be pointed at a proxy or a test server unchanged.

Template variables (`{{name}}`, `{{ name }}`) live in the system prompt and message contents.
With ``variables="substitute"`` the defaults are put in here. With ``variables="keep"`` the
placeholders stay in the body; the Python and TypeScript exports then start with a `variables`
object and fill the placeholders from it when they run (the same pattern as `template_fill`, one
pass), so an unedited export sends exactly the substituted body. curl always sends the
substituted body: filling JSON-escaped values into a heredoc needs a tool (jq, python) that a
bare shell may not have. Whenever the texts are filled here (``substitute``, and curl), a
declared variable the texts use without a non-empty value is refused (ContentInvalid naming
`variables.<name>`), as a run refuses it: an export never sends an empty variable as "". An
undeclared `{{name}}` is sent literally (a prompt may show template syntax), with a warning.
"""

from __future__ import annotations

import copy
import json
import math
import re
import textwrap
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..text.content import (
    Params,
    Tool,
    VersionContent,
    model_for_provider,
    variables_unfilled_check,
)

Api = Literal["anthropic", "openai"]
ExportFormat = Literal["curl", "python", "typescript", "json"]
VariablesMode = Literal["substitute", "keep"]

# `{{name}}` with optional inner whitespace, as `playground.text.content` finds placeholders.
# Python's `\s` (what content uses) and JavaScript's differ (\x1c-\x1f and \x85 vs \ufeff), so the
# class is spelled out; the generated Python and TypeScript build their pattern from these same
# pieces, so filling at run time matches exactly what `template_fill` matches.
_SPACE = r"[\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*"
_NAME = r"([A-Za-z_][A-Za-z0-9_]*)"
PLACEHOLDER = re.compile(r"\{\{" + _SPACE + _NAME + _SPACE + r"\}\}")

# An explicit request timeout for SDKs that refuse a long non-streaming call without one.
_LONG_TIMEOUT_SECONDS = 3600


@dataclass(frozen=True)
class _ApiSpec:
    """What differs between the two APIs once the body is built."""

    name: str
    title: str
    default_base: str  # the base URL the SDKs use when `base_env` is unset
    path: str  # appended to the base URL
    base_env: str
    key_env: str
    auth_header: str
    headers: tuple[tuple[str, str], ...]  # secrets as `$ENV` references, never values
    pip_package: str
    py_import: str
    py_client: str  # the client class as written after `py_import`
    npm_package: str
    js_client: str
    call: str  # the SDK method, relative to `client`
    result: str  # the variable holding the response
    # Body fields that the current SDK no longer types (sent as extra body fields instead), and
    # why the pinned headers and those fields are there; both go into the SDK exports as comments.
    sdk_untyped: tuple[str, ...] = ()
    headers_note: str = ""
    untyped_note: str = ""
    # Above this max_tokens the SDKs refuse a non-streaming call unless a timeout is given.
    sdk_nonstreaming_max_tokens: int | None = None


_ANTHROPIC_VERSION = "2023-06-01"

_SPECS: dict[str, _ApiSpec] = {
    "anthropic": _ApiSpec(
        name="anthropic",
        title="Anthropic Messages API",
        default_base="https://api.anthropic.com",
        path="/v1/messages",
        base_env="ANTHROPIC_BASE_URL",
        key_env="ANTHROPIC_API_KEY",
        auth_header="x-api-key",
        headers=(
            ("x-api-key", "$ANTHROPIC_API_KEY"),
            ("anthropic-version", _ANTHROPIC_VERSION),
            ("content-type", "application/json"),
        ),
        pip_package="anthropic",
        py_import="import anthropic",
        py_client="anthropic.Anthropic",
        npm_package="@anthropic-ai/sdk",
        js_client="Anthropic",
        call="messages.create",
        result="message",
        # anthropic (Python) >= 1.0 and @anthropic-ai/sdk >= 1.0 dropped these arguments, and
        # their default API version, 2026-10-21, answers 400 to them. Versions freeze them, so
        # every format pins 2023-06-01, which still takes them.
        sdk_untyped=("temperature", "top_p"),
        headers_note=(
            f"API version {_ANTHROPIC_VERSION}, as in the curl export: the SDK's default"
            " (2026-10-21) rejects temperature and top_p."
        ),
        untyped_note=(
            f"Not arguments of this SDK any more; API version {_ANTHROPIC_VERSION} takes them."
        ),
        # Their rule: refuse when max_tokens could run past 10 minutes (about 21k tokens,
        # 8,192 for some models); an explicit timeout is their documented way out.
        sdk_nonstreaming_max_tokens=8192,
    ),
    "openai": _ApiSpec(
        name="openai",
        title="OpenAI Chat Completions API",
        default_base="https://api.openai.com/v1",
        path="/chat/completions",
        base_env="OPENAI_BASE_URL",
        key_env="OPENAI_API_KEY",
        auth_header="Authorization",
        headers=(
            ("Authorization", "Bearer $OPENAI_API_KEY"),
            ("content-type", "application/json"),
        ),
        pip_package="openai",
        py_import="from openai import OpenAI",
        py_client="OpenAI",
        npm_package="openai",
        js_client="OpenAI",
        call="chat.completions.create",
        result="completion",
    ),
}


def template_fill(text: str, values: Mapping[str, Any]) -> str:
    """Replace `{{name}}` / `{{ name }}` with `values[name]` in one pass; unknown names stay."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        return str(values[name]) if name in values else match.group(0)

    return PLACEHOLDER.sub(value, text)


def _has_placeholder(text: str, values: Mapping[str, Any]) -> bool:
    return any(m.group(1) in values for m in PLACEHOLDER.finditer(text))


# --- warnings: calls that will fail or not do what the page shows ------------------------------

# Model-name families each API serves; a name from another family is refused by that API.
_MODEL_FAMILIES: dict[str, tuple[str, ...]] = {
    "anthropic": ("claude",),
    "openai": ("gpt-", "o1", "o3", "o4", "chatgpt-", "text-", "davinci", "babbage"),
}
_OFFLINE_PROVIDERS = {
    "echo": "Redline's offline echo provider",
    "fixture": "Redline's offline fixture provider (recorded replies)",
}


def export_content(*, content: VersionContent, api: Api) -> VersionContent:
    """The version as the call to `api` sends it. A version of the other API's provider gets
    the model a run of it on `api`'s provider names (`model_for_provider`), so a compare run
    and the export agree; anything else (its own API, the offline echo provider) is unchanged."""
    provider = content.get("provider")
    if provider == api or provider not in _SPECS:
        return content
    return {**content, "provider": api, "model": model_for_provider(content=content, provider=api)}


def export_warnings(*, content: VersionContent, api: Api) -> list[str]:
    """What will make this export fail or misbehave, or where it differs from the version: the
    texts are exactly the version's, the model too except on the other provider's API."""
    warnings: list[str] = []
    spec = _spec(api)
    declared = content.get("variables") or {}
    texts = [content.get("system") or "", *(m["content"] for m in content.get("messages") or [])]
    undeclared: dict[str, None] = {}
    for text in texts:
        for match in PLACEHOLDER.finditer(text):
            if match.group(1) not in declared:
                undeclared.setdefault(match.group(1), None)
    for name in undeclared:
        warnings.append(
            f"{{{{{name}}}}} is used but not declared as a variable: it is sent literally, "
            "braces and all. Declare it with a default or remove it."
        )
    params = content.get("params") or {}
    if (
        api == "anthropic"
        and params.get("temperature") is not None
        and params.get("top_p") is not None
    ):
        warnings.append(
            "Both temperature and top_p are set: recent Claude models (Sonnet 4.5, Haiku 4.5, "
            "Opus 4.1 and later) refuse a call that sets both. Unset one of them (Top p empty) "
            "unless your model accepts both."
        )
    model = str(content.get("model") or "")
    provider = str(content.get("provider") or "")
    if provider in _OFFLINE_PROVIDERS:
        warnings.append(
            f"This version uses {_OFFLINE_PROVIDERS[provider]} (model {model!r}); the "
            f"{spec.title} has no such model and will refuse the call. Pick a real model first."
        )
    elif provider != api:
        sent = export_content(content=content, api=api)["model"]
        warnings.append(
            f"This version runs on {provider} (model {model!r}), which the {spec.title} does "
            f"not serve: this export names {sent!r}, the model a run of it on {api} uses. "
            "Change the model if you want another."
        )
    elif not model.lower().startswith(_MODEL_FAMILIES[api]):
        warnings.append(
            f"Model {model!r} is not a model of the {spec.title}; the call will be refused "
            f"unless your endpoint ({spec.base_env}) serves it. Change the model first."
        )
    return warnings


# --- the intermediate request ---------------------------------------------------------------


def _messages(content: VersionContent, text: Callable[[str], str]) -> list[dict[str, Any]]:
    return [{"role": m["role"], "content": text(m["content"])} for m in content["messages"]]


def _sampling(params: Params, *, stop_key: str) -> dict[str, Any]:
    """temperature and top_p when set, stop sequences when there are any."""
    out: dict[str, Any] = {
        key: params[key] for key in ("temperature", "top_p") if params.get(key) is not None
    }
    if params.get("stop"):
        out[stop_key] = list(params["stop"])
    return out


def _anthropic_body(content: VersionContent, text: Callable[[str], str]) -> dict[str, Any]:
    params = content["params"]
    body: dict[str, Any] = {"model": content["model"], "max_tokens": params["max_tokens"]}
    if content.get("system"):
        body["system"] = text(content["system"])
    body["messages"] = _messages(content, text)
    body.update(_sampling(params, stop_key="stop_sequences"))
    if content.get("tools"):
        body["tools"] = [_tool(t, schema_key="input_schema") for t in content["tools"]]
    if fmt := content.get("response_format"):
        # JSON-schema structured output is `output_config.format` (type "json_schema"): the
        # installed SDKs type it (OutputConfigParam / JSONOutputFormatParam) and the older
        # `output_format` field is only accepted for a transition, so no forced-tool fallback.
        # The format has no `name` field; the frozen name has nowhere to go.
        body["output_config"] = {
            "format": {"type": "json_schema", "schema": copy.deepcopy(fmt["schema"])}
        }
    return body


def _openai_body(content: VersionContent, text: Callable[[str], str]) -> dict[str, Any]:
    params = content["params"]
    system = (
        [{"role": "system", "content": text(content["system"])}] if content.get("system") else []
    )
    body: dict[str, Any] = {
        "model": content["model"],
        "messages": system + _messages(content, text),
        # The current field: max_tokens is deprecated, and reasoning models reject it.
        "max_completion_tokens": params["max_tokens"],
    }
    body.update(_sampling(params, stop_key="stop"))
    if content.get("tools"):
        body["tools"] = [
            {"type": "function", "function": _tool(t, schema_key="parameters")}
            for t in content["tools"]
        ]
    if fmt := content.get("response_format"):
        schema = {"name": fmt["name"], "schema": copy.deepcopy(fmt["schema"]), "strict": True}
        body["response_format"] = {"type": "json_schema", "json_schema": schema}
    return body


def _tool(tool: Tool, *, schema_key: str) -> dict[str, Any]:
    out: dict[str, Any] = {"name": tool["name"]}
    if tool.get("description"):
        out["description"] = tool["description"]
    out[schema_key] = copy.deepcopy(tool["input_schema"])
    return out


def _spec(api: str) -> _ApiSpec:
    if api not in _SPECS:
        raise ValueError(f"unknown api {api!r}: expected one of {sorted(_SPECS)}")
    return _SPECS[api]


def _check_mode(variables: str) -> None:
    if variables not in ("substitute", "keep"):
        raise ValueError(f"unknown variables mode {variables!r}: expected 'substitute' or 'keep'")


def export_request(
    *,
    content: VersionContent,
    api: Api,
    variables: VariablesMode = "substitute",
    stream: bool = False,
) -> dict[str, Any]:
    """The HTTP call a version makes: `{method, url, headers, body}`; headers name env vars only.

    `url` is the provider's default; every rendered format lets `<API>_BASE_URL` replace its base.
    `stream=True` is the call a run makes: the same body plus the API's streaming flags
    (`"stream": true`; OpenAI also `stream_options.include_usage`, or a stream carries no usage).
    """
    spec = _spec(api)
    _check_mode(variables)
    content = export_content(content=content, api=api)
    values = content.get("variables") or {}

    def text(value: str) -> str:
        return template_fill(value, values) if variables == "substitute" else value

    build = _anthropic_body if api == "anthropic" else _openai_body
    body = build(content, text)
    if stream:
        body["stream"] = True
        if api == "openai":
            body["stream_options"] = {"include_usage": True}
    return {
        "method": "POST",
        "url": spec.default_base + spec.path,
        "headers": dict(spec.headers),
        "body": body,
    }


@dataclass(frozen=True)
class SdkArguments:
    """An `export_request` as the official Python SDK takes it (what a run calls)."""

    typed: dict[str, Any]  # keyword arguments of `client.<call>(...)`
    extra_body: dict[str, Any]  # body fields the SDK no longer declares
    default_headers: dict[str, str]  # non-secret headers pinned over the SDK's defaults
    path: str  # the API path after the base URL, e.g. "/v1/messages"


def export_sdk_arguments(*, request: Mapping[str, Any], api: Api) -> SdkArguments:
    """Split `request` the way the exported Python code passes it to the SDK, so a run's SDK
    call sends exactly `request["body"]`."""
    spec = _spec(api)
    call = _sdk_call(request, spec, None)
    return SdkArguments(
        typed=call.typed,
        extra_body=call.untyped,
        default_headers=call.client_headers,
        path=spec.path,
    )


# --- literals -------------------------------------------------------------------------------


class _Filled(str):
    """A text that the generated code passes through `fill()` at run time."""

    __slots__ = ()


@dataclass(frozen=True)
class _Dialect:
    """How one language writes JSON-like data."""

    string: Callable[[str], str]
    key: Callable[[str], str]
    true: str
    false: str
    null: str
    brace_pad: str  # inside `{ }` when written on one line
    indent: str


def _py_string(text: str) -> str:
    # repr() is exact Python (escapes non-printables, U+2028, lone surrogates). Prefer "...":
    # a repr in '...' of a text without '"' has no quote of either kind inside.
    literal = repr(text)
    if literal[0] == "'" and '"' not in text:
        return '"' + literal[1:-1] + '"'
    return literal


# Legal raw in a JS string, but line terminators to older parsers (U+2028/9), invisible or
# direction-changing (Trojan Source), or lone surrogates: written as \uXXXX.
_JS_ESCAPES = re.compile(
    "[\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f"
    "\ufeff\ufff9-\ufffb\ud800-\udfff]"
)
_JS_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")


def _js_string(text: str) -> str:
    # A JSON string is a JS string (quotes, backslashes and controls escaped; `${` and
    # backticks mean nothing inside "..."); non-ASCII and emoji stay readable.
    return _JS_ESCAPES.sub(
        lambda m: f"\\u{ord(m.group()):04x}", json.dumps(text, ensure_ascii=False)
    )


def _js_key(key: str) -> str:
    if key == "__proto__":  # `__proto__: v` in a literal sets the prototype, not a property
        return '["__proto__"]'
    return key if _JS_IDENTIFIER.fullmatch(key) else _js_string(key)


_PY = _Dialect(_py_string, _py_string, "True", "False", "None", "", "    ")
_JS = _Dialect(_js_string, _js_key, "true", "false", "null", " ", "  ")
_LINE = 96


def _literal(value: Any, dialect: _Dialect, level: int = 0) -> str:
    """`value` as source; short containers on one line, long ones one item per line."""
    if isinstance(value, _Filled):
        return f"fill({dialect.string(value)})"
    if isinstance(value, str):
        return dialect.string(value)
    if value is True:
        return dialect.true
    if value is False:
        return dialect.false
    if value is None:
        return dialect.null
    if isinstance(value, int | float):
        if not math.isfinite(value):
            raise ValueError(f"{value!r} has no JSON form")
        return repr(value)
    if isinstance(value, Mapping):
        items = [f"{dialect.key(k)}: {_literal(v, dialect, level + 1)}" for k, v in value.items()]
        open_, close, pad = "{", "}", dialect.brace_pad
    elif isinstance(value, list | tuple):
        items = [_literal(v, dialect, level + 1) for v in value]
        open_, close, pad = "[", "]", ""
    else:
        raise TypeError(f"cannot export a {type(value).__name__}")
    if not items:
        return open_ + close
    one_line = open_ + pad + ", ".join(items) + pad + close
    if "\n" not in one_line and len(one_line) + len(dialect.indent) * level <= _LINE:
        return one_line
    inner = dialect.indent * (level + 1)
    lines = "".join(f"{inner}{item},\n" for item in items)
    return f"{open_}\n{lines}{dialect.indent * level}{close}"


# --- what the SDK exports share ---------------------------------------------------------------


@dataclass(frozen=True)
class _SdkCall:
    """The SDK call an export makes, split the way both SDK renderers need it."""

    typed: dict[str, Any]  # arguments the SDK declares
    untyped: dict[str, Any]  # body fields it no longer declares (sent as extra body fields)
    client_headers: dict[str, str]  # non-secret headers pinned over the SDK's defaults
    variables: dict[str, str] | None  # set when the code fills placeholders at run time
    long_timeout: bool


def _sdk_call(
    request: Mapping[str, Any], spec: _ApiSpec, keep: Mapping[str, str] | None
) -> _SdkCall:
    body = request["body"]
    if keep:
        body = _mark_texts(body, keep)
    managed = {spec.auth_header.lower(), "content-type"}  # the SDK sets these itself
    return _SdkCall(
        typed={k: v for k, v in body.items() if k not in spec.sdk_untyped},
        untyped={k: v for k, v in body.items() if k in spec.sdk_untyped},
        client_headers={k: v for k, v in request["headers"].items() if k.lower() not in managed},
        variables=dict(keep) if keep and _any_filled(body) else None,
        long_timeout=spec.sdk_nonstreaming_max_tokens is not None
        and body["max_tokens"] > spec.sdk_nonstreaming_max_tokens,
    )


def _mark_texts(body: Mapping[str, Any], values: Mapping[str, str]) -> dict[str, Any]:
    """A copy of `body` whose texts with known placeholders are `_Filled`."""

    def mark(text: str) -> str:
        return _Filled(text) if _has_placeholder(text, values) else text

    out = dict(body)
    if "system" in out:  # Anthropic's top-level system prompt
        out["system"] = mark(out["system"])
    out["messages"] = [{**m, "content": mark(m["content"])} for m in out["messages"]]
    return out


def _any_filled(body: Mapping[str, Any]) -> bool:
    texts = [body.get("system")] + [m["content"] for m in body["messages"]]
    return any(isinstance(t, _Filled) for t in texts)


def _comment(text: str, marker: str, indent: str = "") -> str:
    """`text` as comment lines of at most 96 characters."""
    width = 96 - len(indent) - len(marker) - 1
    return "".join(f"{indent}{marker} {line}\n" for line in textwrap.wrap(text, width))


# --- renderers ------------------------------------------------------------------------------


def _heredoc_delimiter(text: str) -> str:
    """A heredoc terminator that no line of `text` equals."""
    lines = set(text.split("\n"))
    delimiter, n = "JSON", 0
    while delimiter in lines:
        n += 1
        delimiter = f"JSON_{n}"
    return delimiter


def _render_curl(request: Mapping[str, Any], spec: _ApiSpec) -> str:
    """curl with the body on stdin from a quoted heredoc: nothing in it is expanded, no argv limit.

    No comment lines: zsh (the macOS shell) runs a pasted `# ...` line as a command.
    """
    body = json.dumps(request["body"], indent=2, ensure_ascii=False)
    delimiter = _heredoc_delimiter(body)
    # Header values are ours (constants and $ENV references), never user data.
    headers = "".join(f'  -H "{name}: {value}" \\\n' for name, value in request["headers"].items())
    return (
        f'curl -sS "${{{spec.base_env}:-{spec.default_base}}}{spec.path}" \\\n'
        f"{headers}"
        f"  --data-binary @- <<'{delimiter}'\n"
        f"{body}\n"
        f"{delimiter}\n"
    )


def _render_python(
    request: Mapping[str, Any], spec: _ApiSpec, keep: Mapping[str, str] | None
) -> str:
    """The official SDK with the arguments written out; `keep` adds VARIABLES and fill()."""
    call = _sdk_call(request, spec, keep)
    parts = [
        f'"""{spec.title} call exported from Redline.\n\n'
        f"Needs `pip install {spec.pip_package}` and {spec.key_env} in the environment;\n"
        f'{spec.base_env} optionally points it at another server.\n"""\n\n'
    ]
    parts.append(
        f"import re\n\n{spec.py_import}\n\n" if call.variables else f"{spec.py_import}\n\n"
    )
    if call.variables:
        parts.append(
            "# Template variables: edit them here; fill() puts them into the texts below.\n"
            f"VARIABLES = {_literal(call.variables, _PY)}\n\n\n"
            "# A placeholder: {{name}}, with optional whitespace inside the braces.\n"
            f'SPACE = r"{_SPACE}"\n'
            f'PLACEHOLDER = re.compile(r"\\{{\\{{" + SPACE + r"{_NAME}" + SPACE'
            ' + r"\\}\\}")\n\n\n'
            "def fill(text: str) -> str:\n"
            '    """Replace {{name}} placeholders with VARIABLES; unknown names stay."""\n'
            "    return PLACEHOLDER.sub(lambda m: VARIABLES.get(m.group(1), m.group(0)),"
            " text)\n\n\n"
        )
    reads = f"Reads {spec.key_env} and {spec.base_env} from the environment."
    client_args = ""
    if call.client_headers:
        reads += f" {spec.headers_note}"
        client_args = f"default_headers={_literal(call.client_headers, _PY)}"
    parts.append(f"{_comment(reads, '#')}client = {spec.py_client}({client_args})\n\n")
    args = [f"    {key}={_literal(value, _PY, 1)},\n" for key, value in call.typed.items()]
    if call.untyped:
        args.append(_comment(spec.untyped_note, "#", "    "))
        args.append(f"    extra_body={_literal(call.untyped, _PY, 1)},\n")
    if call.long_timeout:
        args.append(
            "    # max_tokens is above the SDK's non-streaming limit; a set timeout lifts it.\n"
        )
        args.append(f"    timeout={float(_LONG_TIMEOUT_SECONDS)!r},\n")
    parts.append(f"{spec.result} = client.{spec.call}(\n{''.join(args)})\n")
    parts.append(f"print({spec.result}.to_json())\n")
    return "".join(parts)


def _render_typescript(
    request: Mapping[str, Any], spec: _ApiSpec, keep: Mapping[str, str] | None
) -> str:
    """An ES module for the official npm SDK; no type annotations, so it also runs as .mjs."""
    call = _sdk_call(request, spec, keep)
    parts = [
        f"// {spec.title} call exported from Redline.\n"
        f"// Needs `npm install {spec.npm_package}` and {spec.key_env} in the environment;\n"
        f"// {spec.base_env} optionally points it at another server. An ES module: run it\n"
        '// as .mjs/.mts, or as .ts/.js in a package with "type": "module".\n'
        f'import {spec.js_client} from "{spec.npm_package}";\n\n'
    ]
    if call.variables:
        parts.append(
            "// Template variables: edit them here; fill() puts them into the texts below.\n"
            f"const variables = {_literal(call.variables, _JS)};\n"
            "const values = new Map(Object.entries(variables));\n"
            "// A placeholder: {{name}}, with optional whitespace inside the braces.\n"
            f"const space = String.raw`{_SPACE}`;\n"
            "const placeholder = new RegExp(\n"
            f'  String.raw`\\{{\\{{` + space + "{_NAME}" + space + String.raw`\\}}\\}}`,\n'
            '  "g",\n'
            ");\n"
            "// Replaces {{name}} placeholders with `variables`; unknown names stay.\n"
            'const fill = (text = "") =>\n'
            "  text.replace(placeholder, (match, name) => values.get(name) ?? match);\n\n"
        )
    reads = f"Reads {spec.key_env} and {spec.base_env} from the environment."
    client_args = ""
    if call.client_headers:
        reads += f" {spec.headers_note}"
        client_args = _literal({"defaultHeaders": call.client_headers}, _JS)
    parts.append(f"{_comment(reads, '//')}const client = new {spec.js_client}({client_args});\n\n")
    args = [f"  {_js_key(key)}: {_literal(value, _JS, 1)},\n" for key, value in call.typed.items()]
    if call.untyped:
        # A spread is not checked for excess properties, so this type-checks without a directive.
        args.append(_comment(spec.untyped_note, "//", "  "))
        args.append(f"  ...{_literal(call.untyped, _JS, 1)},\n")
    options = ""
    if call.long_timeout:
        parts.append(
            "// max_tokens is above the SDK's non-streaming limit; a set timeout lifts it.\n"
        )
        options = f", {{ timeout: {_LONG_TIMEOUT_SECONDS * 1000} }}"
    parts.append(
        f"const {spec.result} = await client.{spec.call}({{\n{''.join(args)}}}{options});\n"
    )
    parts.append(f"console.log(JSON.stringify({spec.result}, null, 2));\n")
    return "".join(parts)


def _render_json(request: Mapping[str, Any]) -> str:
    """The request body exactly, pretty-printed, non-ASCII kept."""
    return json.dumps(request["body"], indent=2, ensure_ascii=False) + "\n"


def export_render(
    *,
    content: VersionContent,
    api: Api,
    format: ExportFormat,  # the HTTP API's parameter name, though it shadows the builtin
    variables: VariablesMode = "substitute",
) -> str:
    """A version as runnable text in `format`; every format renders the same `export_request`."""
    spec = _spec(api)
    _check_mode(variables)
    if variables == "substitute" or format == "curl":
        # The texts are filled here: every placeholder needs a non-empty value (as for a run).
        variables_unfilled_check(
            content=content, values=dict(content.get("variables") or {}), declared_only=True
        )
    if format == "curl":
        # curl always sends the defaults (see the module docstring).
        return _render_curl(export_request(content=content, api=api), spec)
    request = export_request(content=content, api=api, variables=variables)
    values = {str(k): str(v) for k, v in (content.get("variables") or {}).items()}
    keep = values if variables == "keep" else None
    if format == "python":
        return _render_python(request, spec, keep)
    if format == "typescript":
        return _render_typescript(request, spec, keep)
    if format == "json":
        return _render_json(request)
    raise ValueError(f"unknown format {format!r}: expected curl, python, typescript or json")
