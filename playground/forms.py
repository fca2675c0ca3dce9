"""The browser editor posts flat form fields; this turns them into a content dict.

Only shape parsing lives here (numbers, JSON text); the rules are `content_validate`'s.
"""

import json
from typing import Any

from django.http import QueryDict

from common.jsonlimits import JSON_ENVELOPE_DEPTH, JSON_MAX_DEPTH, JsonRefused, json_loads_limited

from .exceptions import ContentInvalid
from .text.content import VersionContent


def _optional_number(raw: str, field: str, kind: type) -> Any:
    raw = (raw or "").strip()
    if not raw:
        return None
    try:
        return kind(raw)
    except ValueError:
        noun = "a whole number" if kind is int else "a number"
        raise ContentInvalid(f"{field}: must be {noun}.", field=field) from None


def _json_text(raw: str, field: str, empty: Any) -> Any:
    raw = (raw or "").strip()
    if not raw:
        return empty
    try:
        return json_loads_limited(raw, limit=JSON_MAX_DEPTH + JSON_ENVELOPE_DEPTH)
    except JsonRefused as error:
        raise ContentInvalid(f"{field}: {error}", field=field) from None
    except json.JSONDecodeError as exc:
        raise ContentInvalid(
            f"{field}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}.",
            field=field,
        ) from None


def _ref(raw: str, field: str) -> dict[str, Any] | None:
    """A text reference the large-text editor posts beside a text field (`system_ref`,
    `message_ref`): empty for none, else a JSON object checked by content_prepare."""
    raw = (raw or "").strip()
    if not raw:
        return None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = None
    if not isinstance(value, dict):
        raise ContentInvalid(f"{field}: the text reference is not a JSON object.", field=field)
    return value


def content_from_form(data: QueryDict) -> dict[str, Any]:
    roles = data.getlist("message_role")
    contents: list[Any] = data.getlist("message_content")
    refs = data.getlist("message_ref")
    if len(refs) == len(contents):
        contents = [
            _ref(ref, f"messages.{index}.content") or content
            for index, (ref, content) in enumerate(zip(refs, contents, strict=True))
        ]
    system: Any = _ref(data.get("system_ref", ""), "system") or data.get("system", "")
    names = data.getlist("variable_name")
    defaults = data.getlist("variable_default")
    variables = {
        name.strip(): default
        for name, default in zip(names, defaults, strict=False)
        if name.strip()
    }
    max_tokens = _optional_number(data.get("max_tokens", ""), "params.max_tokens", int)
    params: dict[str, Any] = {
        "temperature": _optional_number(data.get("temperature", ""), "params.temperature", float),
        "top_p": _optional_number(data.get("top_p", ""), "params.top_p", float),
        "stop": [line for line in data.get("stop", "").splitlines() if line],
    }
    if max_tokens is not None:
        params["max_tokens"] = max_tokens
    return {
        "provider": data.get("provider", ""),
        "model": data.get("model", ""),
        "system": system.replace("\r\n", "\n") if isinstance(system, str) else system,
        "messages": [
            {
                "role": role,
                "content": content.replace("\r\n", "\n") if isinstance(content, str) else content,
            }
            for role, content in zip(roles, contents, strict=False)
        ],
        "params": params,
        "tools": _json_text(data.get("tools", ""), "tools", []),
        "response_format": _json_text(data.get("response_format", ""), "response_format", None),
        "variables": variables,
    }


def content_as_form_values(content: VersionContent) -> dict[str, Any]:
    """The editor's initial values for a content dict."""
    params = content["params"]
    return {
        **content,
        "temperature": "" if params.get("temperature") is None else params["temperature"],
        "top_p": "" if params.get("top_p") is None else params["top_p"],
        "max_tokens": params.get("max_tokens", ""),
        "stop": "\n".join(params.get("stop", [])),
        "tools_json": json.dumps(content["tools"], indent=2, ensure_ascii=False)
        if content["tools"]
        else "",
        "response_format_json": json.dumps(content["response_format"], indent=2, ensure_ascii=False)
        if content["response_format"]
        else "",
        "variable_rows": list(content["variables"].items()),
    }


def form_values_from_post(data: QueryDict) -> dict[str, Any]:
    """Echo back what the user typed after an error, so nothing is lost."""
    return {
        "provider": data.get("provider", ""),
        "model": data.get("model", ""),
        "system": data.get("system", ""),
        "messages": [
            {"role": r, "content": c}
            for r, c in zip(
                data.getlist("message_role"), data.getlist("message_content"), strict=False
            )
        ],
        "temperature": data.get("temperature", ""),
        "top_p": data.get("top_p", ""),
        "max_tokens": data.get("max_tokens", ""),
        "stop": data.get("stop", ""),
        "tools_json": data.get("tools", ""),
        "response_format_json": data.get("response_format", ""),
        "variable_rows": list(
            zip(data.getlist("variable_name"), data.getlist("variable_default"), strict=False)
        ),
    }
