"""What the browser editor starts from, without putting huge texts into the page.

Texts are edited in place (textareas) while together they fit in `EDITOR_INPLACE_MAX_BYTES`,
in field order; any other is not loaded at all: the editor shows its size and posts
`{"parent_text": "<sha256>"}` for it (the parent's text, unchanged) unless the user replaces it
with a file, which is uploaded first
(static/js/upload.js). The upload threshold itself is the browser's business: texts over
`EDITOR_UPLOAD_THRESHOLD_BYTES` are uploaded instead of posted.
"""

import json
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.http import QueryDict

from textstore.selectors import blob_read, blob_sizes

from ..forms import content_as_form_values, form_values_from_post
from ..models import PromptVersion
from ..text.content import Message


@dataclass(frozen=True)
class LargeText:
    """A text too long to edit in place: kept by reference, replaceable by a file."""

    sha256: str
    chars: int
    size: int

    @property
    def chars_display(self) -> str:
        return f"{self.chars:,}"

    @property
    def ref(self) -> str:
        return json.dumps({"parent_text": self.sha256})


def _inplace_max() -> int:
    return int(settings.EDITOR_INPLACE_MAX_BYTES)


def editor_settings() -> dict[str, int]:
    return {
        "upload_threshold": int(settings.EDITOR_UPLOAD_THRESHOLD_BYTES),
        "inplace_max": _inplace_max(),
    }


def editor_values_for_version(*, version: PromptVersion) -> dict[str, Any]:
    """The editor's initial values for `version`: texts whole while they fit the in-place budget
    together, the others as LargeText (so the page never carries more than the budget)."""
    shas = [version.system_sha, *(m["sha"] for m in version.messages)]
    sizes = blob_sizes(shas=shas)

    budget = [_inplace_max()]  # bytes of text the page may still carry in textareas

    def text(sha: str) -> tuple[str, LargeText | None]:
        chars, size = sizes.get(sha, (0, 0))
        if size > budget[0]:
            return "", LargeText(sha256=sha, chars=chars, size=size)
        budget[0] -= size
        return blob_read(sha=sha), None

    system, system_large = text(version.system_sha)
    messages: list[Message] = []
    larges: list[LargeText | None] = []
    for message in version.messages:
        content, large = text(message["sha"])
        messages.append({"role": message["role"], "content": content})
        larges.append(large)
    values = content_as_form_values(
        {
            "provider": version.provider,
            "model": version.model,
            "system": system,
            "messages": messages,
            "params": version.params,
            "tools": version.tools,
            "response_format": version.response_format,
            "variables": version.variables,
        }
    )
    values["system_large"] = system_large
    for row, large in zip(values["messages"], larges, strict=True):
        row["large"] = large
    return values


def _parent_text_sha(raw: str) -> str | None:
    try:
        value = json.loads(raw) if raw else None
    except json.JSONDecodeError:
        return None
    parent_text = value.get("parent_text") if isinstance(value, dict) else None
    return parent_text if isinstance(parent_text, str) else None


def editor_values_from_post(data: QueryDict) -> dict[str, Any]:
    """What the user posted, to show again after an error; kept long texts stay kept
    (an upload is used up by the failed save: its field comes back empty)."""
    values = form_values_from_post(data)
    system_ref = data.get("system_ref", "")
    refs = data.getlist("message_ref")
    shas = [sha for sha in map(_parent_text_sha, [system_ref, *refs]) if sha]
    sizes = blob_sizes(shas=shas)

    def large(raw: str) -> LargeText | None:
        sha = _parent_text_sha(raw)
        if sha is None or sha not in sizes:
            return None
        return LargeText(sha256=sha, chars=sizes[sha][0], size=sizes[sha][1])

    values["system_large"] = large(system_ref)
    if len(refs) == len(values["messages"]):
        for message, ref in zip(values["messages"], refs, strict=True):
            message["large"] = large(ref)
    return values
