"""Exports of versions with long texts, at a cost bounded by what is sent.

A version whose texts total more than PLAYGROUND_EXPORT_INLINE_MAX_CHARS characters is never
rendered whole in a web worker:

- `export_snippet`: the export with each long text cut to its first PLAYGROUND_TEXT_HEAD_CHARS
  characters and a note saying how much was left out (what the Export panel and the JSON answer
  show; it is for reading, not for running);
- `export_stream`: the full export as pieces of text, byte for byte what `export_render` would
  return, built from range reads: each long text is replaced by a unique marker, the export is
  rendered around the markers, and each marker is replaced by the text's literal written a piece
  at a time (template variables filled across piece boundaries, escaped for the format).

Nothing here checks access: callers pass a version they got from a scoped selector.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from textstore.selectors import blob_lengths, blob_range, blob_stream

from ..models import PromptVersion
from ..selectors import version_content
from ..text.content import VersionContent
from .api_calls import (
    _JS_ESCAPES,
    _LINE,
    _SPACE,
    PLACEHOLDER,
    Api,
    ExportFormat,
    VariablesMode,
    export_render,
    export_warnings,
    template_fill,
)


@dataclass(frozen=True)
class _Text:
    """One text of a version: its blob and length, and where it sits in the content."""

    sha: str
    total: int
    message: int | None  # None: the system prompt


def _texts(version: PromptVersion) -> list[_Text]:
    shas = [version.system_sha, *(m["sha"] for m in version.messages)]
    lengths = blob_lengths(shas=shas)
    return [
        _Text(sha=sha, total=lengths.get(sha, 0), message=None if i == 0 else i - 1)
        for i, sha in enumerate(shas)
    ]


def export_is_long(*, version: PromptVersion) -> bool:
    """Whether the version's texts together pass PLAYGROUND_EXPORT_INLINE_MAX_CHARS."""
    total = sum(text.total for text in _texts(version))
    return total > int(settings.PLAYGROUND_EXPORT_INLINE_MAX_CHARS)


def export_total_chars(*, version: PromptVersion) -> int:
    return sum(text.total for text in _texts(version))


def _content_with(version: PromptVersion, replace: Callable[[_Text], str | None]) -> VersionContent:
    """The version's content with each text that `replace` answers for replaced by its answer
    (the others read whole: they are short)."""
    head = int(settings.PLAYGROUND_TEXT_HEAD_CHARS)
    out: VersionContent = {
        "provider": version.provider,
        "model": version.model,
        "system": "",
        "messages": [],
        "params": version.params,
        "tools": version.tools,
        "response_format": version.response_format,
        "variables": version.variables,
    }
    for text in _texts(version):
        value = replace(text)
        if value is None:
            value = blob_range(sha=text.sha, offset=0, length=max(text.total, head)).text
        if text.message is None:
            out["system"] = value
        else:
            role = version.messages[text.message]["role"]
            out["messages"].append({"role": role, "content": value})
    return out


@dataclass(frozen=True)
class ExportSnippet:
    text: str
    warnings: list[str]
    truncated: bool
    total: int  # characters in the version's texts


def export_snippet(
    *, version: PromptVersion, api: Api, format: ExportFormat, variables: VariablesMode
) -> ExportSnippet:
    """The export to show: whole for a short version; for a long one, each text longer than
    PLAYGROUND_TEXT_HEAD_CHARS cut to that head plus a note (warnings judge the heads)."""
    if not export_is_long(version=version):
        content = version_content(version=version)
        return ExportSnippet(
            text=export_render(content=content, api=api, format=format, variables=variables),
            warnings=export_warnings(content=content, api=api),
            truncated=False,
            total=export_total_chars(version=version),
        )
    head = int(settings.PLAYGROUND_TEXT_HEAD_CHARS)

    def cut(text: _Text) -> str | None:
        if text.total <= head:
            return None
        part = blob_range(sha=text.sha, offset=0, length=head).text
        return (
            f"{part}\n[… {text.total - len(part):,} more characters not shown here: use"
            " “Download full export” for the whole call]"
        )

    content = _content_with(version, cut)
    return ExportSnippet(
        text=export_render(content=content, api=api, format=format, variables=variables),
        warnings=export_warnings(content=content, api=api),
        truncated=True,
        total=export_total_chars(version=version),
    )


# --- the full export, streamed ------------------------------------------------------------------


def _json_piece(piece: str) -> str:
    return json.dumps(piece, ensure_ascii=False)[1:-1]


def _js_piece(piece: str) -> str:
    return _JS_ESCAPES.sub(lambda m: f"\\u{ord(m.group()):04x}", _json_piece(piece))


def _py_piece(quote: str) -> Callable[[str], str]:
    """A piece of a Python literal as `export._py_string` writes the whole text: in "..." when
    the text has no '"', else in '...' (repr's choice). Appending the other quote mark forces
    repr to the same choice for a piece; it is cut off again."""
    force = "'" if quote == '"' else '"'
    return lambda piece: repr(piece + force)[1:-2]


# The start of a placeholder that the next piece may complete.
_PARTIAL = re.compile(r"\{(?:\{" + _SPACE + r"(?:[A-Za-z_][A-Za-z0-9_]*" + _SPACE + r"\}?)?)?$")


def _held_back(text: str) -> int:
    """Where the placeholder that `text` may end in begins (len(text) if none)."""
    partial = _PARTIAL.search(text)
    return partial.start() if partial else len(text)


def _filled(pieces: Iterator[str], values: Mapping[str, Any] | None) -> Iterator[str]:
    """`template_fill` over a text given in pieces (None: no filling): a placeholder cut
    between two pieces is held back until the next one completes it."""
    if values is None:
        yield from pieces
        return
    carry = ""
    for piece in pieces:
        text = carry + piece
        cut = _held_back(text)
        carry = text[cut:]
        if cut:
            yield template_fill(text[:cut], values)
    if carry:
        yield template_fill(carry, values)


def _pieces(sha: str) -> Iterator[str]:
    return blob_stream(sha=sha, step=int(settings.PLAYGROUND_TEXT_STREAM_CHARS))


def _has_placeholder(sha: str, values: Mapping[str, Any]) -> bool:
    """`export._has_placeholder` over a text read in pieces."""
    carry = ""
    for piece in _pieces(sha):
        text = carry + piece
        if any(m.group(1) in values for m in PLACEHOLDER.finditer(text)):
            return True
        carry = text[_held_back(text) :]
    return False


def export_stream(
    *, version: PromptVersion, api: Api, format: ExportFormat, variables: VariablesMode
) -> Iterator[str]:
    """The full export of `version` in pieces; joined, exactly `export_render`'s text. Holds at
    most a few pieces of PLAYGROUND_TEXT_STREAM_CHARS characters of any long text at a time."""
    head = int(settings.PLAYGROUND_TEXT_HEAD_CHARS)
    values = {str(k): str(v) for k, v in (version.variables or {}).items()}
    substitute = format == "curl" or variables == "substitute"
    token = secrets.token_hex(32)  # ASCII letters and digits: no format escapes them
    # marker name -> (the text, characters written after the name that stand for nothing)
    markers: dict[str, tuple[_Text, str]] = {}

    def marker(text: _Text) -> str | None:
        # A text past _LINE characters makes every literal holding it span lines, as a marker
        # does: shorter ones are read whole, so the layout is the one `export_render` picks.
        if text.total <= max(head, _LINE):
            return None
        name = f"RLTEXT{token}N{len(markers)}X"
        suffix = ""
        # Python writes a text holding '"' in '...': so must the marker's literal.
        if format == "python" and any('"' in piece for piece in _pieces(text.sha)):
            suffix += '"'
        # Kept placeholders decide whether the code fills a text at run time (export._Filled).
        if not substitute and values and _has_placeholder(text.sha, values):
            suffix += "{{" + min(values) + "}}"
        markers[name] = (text, suffix)
        return name + suffix

    content = _content_with(version, marker)
    rendered = export_render(content=content, api=api, format=format, variables=variables)
    if not markers:
        yield rendered
        return
    pattern = re.compile("|".join(re.escape(name) for name in markers))
    pos = 0
    for match in pattern.finditer(rendered):
        yield rendered[pos : match.start()]
        text, suffix = markers[match.group()]
        if format == "python":
            escape = _py_piece("'" if '"' in suffix else '"')
        elif format == "typescript":
            escape = _js_piece
        else:  # json, curl: the body as JSON
            escape = _json_piece
        for piece in _filled(_pieces(text.sha), values if substitute else None):
            if piece:
                yield escape(piece)
        # The suffix is written as it is in every format's literal (no character of it is
        # escaped where it is used), so it is skipped by its length.
        pos = match.end() + len(suffix)
    yield rendered[pos:]
