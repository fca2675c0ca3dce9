"""A version's long texts, a range at a time (reads; callers authorise the version first).

A version's texts are its `system` prompt and each message's `content`, named by the range API
as `system` and `messages.N.content`. Pages show the first screenful of each (`version_preview`)
and load the rest by range (`version_text_range`), so neither a page nor a request ever holds a
whole multi-megabyte text: ranges come from `textstore.selectors.blob_range`, which reads only
the chunks a range needs. Downloads stream the text a range at a time (`version_text_stream`).

Nothing here checks access: every caller passes a version it got from a scoped selector
(`version_access_get_for_user`) or from a live share link (`shared_open`), in the same request.
"""

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from textstore.selectors import blob_lengths, blob_range

from .exceptions import ContentInvalid
from .models import PromptVersion

_FIELD_RE = re.compile(r"^(?:system|messages\.(0|[1-9][0-9]{0,5})\.content)$")


@dataclass(frozen=True)
class TextField:
    """One text of a version: its range-API name, what a page calls it, and its blob."""

    name: str
    label: str
    sha: str


@dataclass(frozen=True)
class TextRange:
    """The body of `GET .../text/`: `length` is what was returned, `total` the whole field's."""

    field: str
    offset: int
    length: int
    total: int
    text: str
    sha: str

    def as_json(self) -> dict[str, Any]:
        return {
            "field": self.field,
            "offset": self.offset,
            "length": self.length,
            "total": self.total,
            "text": self.text,
        }


@dataclass(frozen=True)
class TextPreview:
    """A text as a page first shows it: its first `len(head)` characters of `total`."""

    field: str
    label: str
    head: str
    total: int

    @property
    def lazy(self) -> bool:
        """More than the head exists: the page loads the rest by range."""
        return self.total > len(self.head)


@dataclass(frozen=True)
class ContentPreview:
    """Every text of a version as a page first shows it, and whether any is too long to be
    rendered (or edited) whole."""

    texts: list[TextPreview]
    longest: int

    @property
    def lazy(self) -> bool:
        return any(text.lazy for text in self.texts)


def version_text_fields(*, version: PromptVersion) -> list[TextField]:
    """The version's texts in page order: the system prompt, then each message's content."""
    fields = [TextField(name="system", label="System", sha=version.system_sha)]
    fields += [
        TextField(name=f"messages.{index}.content", label=str(message["role"]), sha=message["sha"])
        for index, message in enumerate(version.messages)
    ]
    return fields


def version_text_field(*, version: PromptVersion, field: str) -> TextField:
    """The text named `field` (`system` or `messages.N.content`); ContentInvalid (400 on
    `field`) for any other name or a message index the version does not have."""
    if not isinstance(field, str) or not _FIELD_RE.match(field):
        raise ContentInvalid(
            "field: must be `system` or `messages.N.content` (N counts from 0).", field="field"
        )
    fields = version_text_fields(version=version)
    found = next((f for f in fields if f.name == field), None)
    if found is None:
        raise ContentInvalid(
            f"field: this version has {len(fields) - 1} message(s); no {field}.", field="field"
        )
    return found


def version_text_range(
    *, version: PromptVersion, field: str, offset: int, length: int
) -> TextRange:
    """Characters `[offset, offset + length)` of one text of the version, clipped to its end.

    ContentInvalid (400 on `offset`) for an offset past the end of the text.
    """
    text_field = version_text_field(version=version, field=field)
    part = blob_range(sha=text_field.sha, offset=offset, length=length)
    if offset > part.total:
        raise ContentInvalid(
            f"offset: past the end of the text ({part.total} characters).", field="offset"
        )
    return TextRange(
        field=field,
        offset=offset,
        length=len(part.text),
        total=part.total,
        text=part.text,
        sha=text_field.sha,
    )


def version_preview(*, version: PromptVersion) -> ContentPreview:
    """The first `PLAYGROUND_TEXT_HEAD_CHARS` characters of each text and its length."""
    head = int(settings.PLAYGROUND_TEXT_HEAD_CHARS)
    fields = version_text_fields(version=version)
    lengths = blob_lengths(shas=[f.sha for f in fields])
    texts = []
    for f in fields:
        total = lengths.get(f.sha, 0)
        text = blob_range(sha=f.sha, offset=0, length=head).text if total else ""
        texts.append(TextPreview(field=f.name, label=f.label, head=text, total=total))
    return ContentPreview(texts=texts, longest=max(lengths.values(), default=0))


def version_text_stream(*, version: PromptVersion, field: str) -> Iterator[bytes]:
    """The whole text as UTF-8, one `PLAYGROUND_TEXT_STREAM_CHARS` range at a time (the field
    is checked before the first byte, so a bad name is still a 400)."""
    text_field = version_text_field(version=version, field=field)
    step = int(settings.PLAYGROUND_TEXT_STREAM_CHARS)

    def chunks() -> Iterator[bytes]:
        offset = 0
        while True:
            part = blob_range(sha=text_field.sha, offset=offset, length=step)
            if part.text:
                yield part.text.encode("utf-8")
            offset += len(part.text)
            if not part.text or offset >= part.total:
                return

    return chunks()
