"""Version contents for the export matrix, in the shape docs/api.md gives."""

from __future__ import annotations

import copy
from typing import Any

# Strings that break naive quoting in a shell, Python or JavaScript: quotes, backslashes,
# expansions, heredoc-terminator look-alikes, controls, non-ASCII, emoji, line/paragraph
# separators, bidi overrides and zero-width characters.
NASTY = (
    'He said "hi" and \'bye\'; it\'s \\"escaped\\" \\n not a newline, C:\\path\\to\\file\\\n'
    "$HOME ${HOME} ${x} $(whoami) `id` $'\\n' !! \\$ \\` %s %(name)s {0} {} {{}} }}{{\n"
    "JSON\nJSON_1\n'JSON'\nEOF\n  JSON\nJSON  \n\r\nJSON\r\n"
    "tab\there\x00nul\x1besc\x7fdel\x0bvt\x0cff\x85nel\n"
    "Ünïcödé — ça, 日本語, עברית, العربية, Ελληνικά\n"
    "emoji: 😀👩🏽‍💻🇺🇦 \U0001f9ea\n"
    "separators:\u2028line\u2029para\u2028\n"
    "bidi:\u202eevil\u202c zero\u200bwidth\ufeffbom\u00adshy\n"
    "js: `${process.exit(1)}` </script> \\u2028 \\x41\n"
    "python: \"\"\" ''' {x!r} \\N{BULLET} \\U0001F600\n"
    "regex: $& $1 $` $' \\1 \\g<0>"
)


def _content(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "provider": "anthropic",
        "model": "claude-test-1",
        "system": "You are terse.",
        "messages": [{"role": "user", "content": "Name three prime numbers."}],
        "params": {"temperature": 1.0, "max_tokens": 1024, "top_p": None, "stop": []},
        "tools": [],
        "response_format": None,
        "variables": {},
    }
    base.update(overrides)
    return base


def _tools() -> list[dict[str, Any]]:
    return [
        {
            "name": "get_weather",
            "description": "Current weather for a city — °C.",
            "input_schema": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": 'e.g. "Zürich"'},
                    "unit": {"type": "string", "enum": ["c", "f"], "default": "c"},
                    "days": {"type": "integer", "minimum": 1, "maximum": 7},
                    "__proto__": {"type": ["string", "null"], "default": None},
                    "with-dash": {"type": "boolean", "default": False},
                },
                "required": ["city"],
                "additionalProperties": False,
            },
        },
        {
            "name": "lookup",
            "description": "",
            "input_schema": {
                "type": "object",
                "properties": {"ids": {"type": "array", "items": {"type": "number"}}},
            },
        },
    ]


def _response_format() -> dict[str, Any]:
    return {
        "name": "verdict",
        "schema": {
            "type": "object",
            "properties": {
                "ok": {"type": "boolean"},
                "score": {"type": "number"},
                "reasons": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["ok", "score", "reasons"],
            "additionalProperties": False,
        },
    }


def _variables_case() -> dict[str, Any]:
    return _content(
        system="You are {{persona}}. Answer in {{ language }}.",
        messages=[
            {"role": "user", "content": "Hi, I am {{name}}. Tell me about {{\ttopic\n}}."},
            {"role": "assistant", "content": "Happy to help, {{name}}."},
            {"role": "user", "content": "Keep {{unknown}} and {{ }} and {name} as written."},
            # Python's \s, not JavaScript's: \u3000 and \u2028 fill, \ufeff and \x1c-only stay.
            {"role": "user", "content": "{{\u3000language\u2028}} {{\x1cname\x85}} {{\ufeffname}}"},
        ],
        variables={
            "persona": 'a "careful" reviewer with $HOME and `ticks`',
            "language": "Français — 日本語",
            "name": "{{persona}} $& $1 \\1 \\g<0>",  # never re-expanded, never a regex backref
            "topic": "line one\nline two 😀\u2028",
        },
    )


def _nasty_case() -> dict[str, Any]:
    return _content(
        system=NASTY,
        messages=[
            {"role": "user", "content": NASTY + " {{v}}"},
            {"role": "assistant", "content": "JSON"},
            {"role": "user", "content": "{{ v }}"},
        ],
        params={"temperature": 0.25, "max_tokens": 512, "top_p": 0.5, "stop": ["JSON", NASTY]},
        tools=[
            {
                "name": "nasty_tool",
                "description": NASTY,
                "input_schema": {
                    "type": "object",
                    "properties": {"q": {"type": "string", "description": NASTY}},
                },
            }
        ],
        response_format={
            "name": "nasty_format",
            "schema": {"type": "object", "properties": {"a": {"const": NASTY}}},
        },
        variables={"v": NASTY},
    )


def _big_case() -> dict[str, Any]:
    line = "Rule $HOME `x` ${y} \"q\" 'q' \\ é 😀 — keep going.\n"
    system = (line * (1_048_576 // len(line) + 1))[:1_048_576]
    return _content(
        system=system,
        params={"temperature": None, "max_tokens": 64_000, "top_p": None, "stop": []},
    )


CASES: dict[str, dict[str, Any]] = {
    "plain": _content(),
    "conversation": _content(
        system="",
        messages=[
            {"role": "user", "content": "What is 2+2?"},
            {"role": "assistant", "content": "4"},
            {"role": "user", "content": "And 3+3?"},
        ],
        params={"temperature": None, "max_tokens": 256, "top_p": 0.9, "stop": ["\n\nEND", "###"]},
    ),
    "tools": _content(tools=_tools()),
    "response-format": _content(response_format=_response_format()),
    "variables": _variables_case(),
    "nasty": _nasty_case(),
    "big": _big_case(),
}

# (case, variables mode) pairs that run end to end through every runner.
RUN_MATRIX: list[tuple[str, str]] = [
    ("plain", "substitute"),
    ("conversation", "substitute"),
    ("tools", "substitute"),
    ("response-format", "substitute"),
    ("variables", "substitute"),
    ("variables", "keep"),
    ("nasty", "substitute"),
    ("nasty", "keep"),
    ("big", "substitute"),
]


def case(name: str) -> dict[str, Any]:
    """A fresh copy of one case's content."""
    return copy.deepcopy(CASES[name])
