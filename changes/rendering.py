"""The reviewable text of a prompt version, and the map back from it (docs/design.md, Prompt
change review).

A version renders deterministically as Markdown: the system text, each message with its role,
the tools, the response format and the model and parameters, each under its own heading, each
field's text verbatim between them. `Segment`s say where each field's text sits, so a passage
selected in the text (an annotation, a suggested edit) maps back to one field of the version.
Pure functions, no database.
"""

import json
from dataclasses import dataclass

from playground.text.content import VersionContent


@dataclass(frozen=True)
class Segment:
    field: str  # "system", "messages.0", "tools", "response_format"
    start: int  # offsets of the field's text in the rendered text
    end: int

    def as_json(self) -> list[object]:
        return [self.field, self.start, self.end]


@dataclass(frozen=True)
class Rendered:
    text: str
    segments: tuple[Segment, ...]


def _lf(text: str) -> str:
    # The review desk stores LF line endings; rendering them here keeps offsets exact.
    return text.replace("\r\n", "\n").replace("\r", "\n")


def json_text(value: object) -> str:
    """A JSON field as its rendered text (what an edit of it must parse back from)."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)


def field_texts(content: VersionContent) -> list[tuple[str, str, str]]:
    """(field, heading, text) of each rendered section, in order. The last, `settings`, is the
    provider, model, parameters and variable defaults as JSON: shown for review, not editable by
    a suggestion."""
    sections = [("system", "System", _lf(content["system"]))]
    for index, message in enumerate(content["messages"]):
        sections.append(
            (
                f"messages.{index}",
                f"Message {index + 1} ({message['role']})",
                _lf(message["content"]),
            )
        )
    if content["tools"]:
        sections.append(("tools", "Tools", json_text(content["tools"])))
    if content["response_format"] is not None:
        sections.append(
            ("response_format", "Response format", json_text(content["response_format"]))
        )
    settings = {
        "provider": content["provider"],
        "model": content["model"],
        "params": content["params"],
        "variables": content["variables"],
    }
    sections.append(("settings", "Model and parameters", json_text(settings)))
    return sections


def version_render(content: VersionContent) -> Rendered:
    parts: list[str] = []
    segments: list[Segment] = []
    offset = 0
    for field, heading, text in field_texts(content):
        head = f"## {heading}\n\n"
        parts.append(head)
        offset += len(head)
        segments.append(Segment(field=field, start=offset, end=offset + len(text)))
        parts.append(text)
        offset += len(text)
        tail = "\n\n"
        parts.append(tail)
        offset += len(tail)
    return Rendered(text="".join(parts), segments=tuple(segments))


def segments_load(raw: object) -> tuple[Segment, ...]:
    """Stored segments (`RequestRevision.segments`) back as `Segment`s."""
    assert isinstance(raw, list)
    return tuple(Segment(field=str(f), start=int(s), end=int(e)) for f, s, e in raw)


def segment_of(segments: tuple[Segment, ...], start: int, end: int) -> Segment | None:
    """The one field whose text holds the whole span `[start, end)`, or None."""
    for segment in segments:
        if segment.start <= start and end <= segment.end:
            return segment
    return None
