"""A version's long texts, a range at a time (reads; callers authorise the version first).

A version's texts are its `system` prompt and each message's `content`, named by the range API
as `system` and `messages.N.content`. Pages show the first screenful of each (`version_preview`)
and load the rest by range (`version_text_range`), so neither a page nor a request ever holds a
whole multi-megabyte text: ranges come from `textstore.selectors.blob_range`, which reads only
the chunks a range needs. Downloads stream the text a range at a time, or hand out a presigned
URL (`version_text_download`); diffs of long texts read only around the change
(`version_content_diff`).

Nothing here checks access: every caller passes a version it got from a scoped selector
(`version_access_get_for_user`) or from a live share link (`shared_open`), in the same request.
"""

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from textstore.exceptions import BlobNotFound
from textstore.selectors import (
    blob_common_ends,
    blob_count,
    blob_lengths,
    blob_presign_available,
    blob_range,
    blob_read,
    blob_stream,
)
from textstore.services import blob_export_url

from ..exceptions import ContentInvalid
from ..models import PromptVersion
from .content import VersionContent
from .diffing import (
    DEFAULT_ROW_LIMIT,
    DiffBudget,
    TextDiff,
    content_diff,
    diff_cache,
    diff_limit,
    diff_pack,
    diff_unpack,
    text_diff,
)

FIELD_PATTERN = r"^(?:system|messages\.(?:0|[1-9][0-9]{0,5})\.content)$"
_FIELD_RE = re.compile(FIELD_PATTERN)


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
    """Every text of a version as a page first shows it, and how long they are together."""

    texts: list[TextPreview]
    total: int  # characters in all the texts together

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
    if not isinstance(field, str) or not _FIELD_RE.fullmatch(field):
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
        if f.sha not in lengths:
            raise BlobNotFound(f.sha)  # a version never points at a missing text
        total = lengths[f.sha]
        text = blob_range(sha=f.sha, offset=0, length=head).text if total else ""
        texts.append(TextPreview(field=f.name, label=f.label, head=text, total=total))
    return ContentPreview(texts=texts, total=sum(text.total for text in texts))


@dataclass(frozen=True)
class TextDownload:
    """How to hand out one whole text: a presigned object-storage URL, or a byte stream."""

    filename: str
    url: str | None = None
    stream: Iterator[bytes] | None = None


def version_text_download(*, version: PromptVersion, field: str) -> TextDownload:
    """The text named `field` as a file: with S3 configured and a text longer than
    PLAYGROUND_DOWNLOAD_PRESIGN_MIN_CHARS, a presigned GET valid SHARE_PRESIGNED_TTL seconds
    (the documented staleness bound); else streamed from range reads, never held whole.
    The field is checked first, so a bad name is a 400 either way."""
    text_field = version_text_field(version=version, field=field)
    filename = f"prompt-{version.prompt_id}-v{version.number}-{field.replace('.', '-')}.txt"
    if blob_presign_available():
        total = blob_lengths(shas=[text_field.sha]).get(text_field.sha, 0)
        if total > int(settings.PLAYGROUND_DOWNLOAD_PRESIGN_MIN_CHARS):
            url = blob_export_url(
                sha=text_field.sha,
                filename=filename,
                expires_in=int(settings.SHARE_PRESIGNED_TTL),
            )
            return TextDownload(filename=filename, url=url)
    step = int(settings.PLAYGROUND_TEXT_STREAM_CHARS)
    pieces = blob_stream(sha=text_field.sha, step=step)
    return TextDownload(filename=filename, stream=(piece.encode("utf-8") for piece in pieces))


# --- diffs of long texts --------------------------------------------------------------------

# Unchanged lines kept on each side of the changed region of a long texts' diff (the page
# folds them to FOLD_CONTEXT around each change, like any diff).
_DIFF_CONTEXT_LINES = 4
# How far back (and forward) to look for those line breaks.
_DIFF_CONTEXT_CHARS = 16 * 1024


def _line_start(sha: str, offset: int) -> int:
    """Where the `_DIFF_CONTEXT_LINES`-th line before `offset` starts (or a window back)."""
    start = max(0, offset - _DIFF_CONTEXT_CHARS)
    before = blob_range(sha=sha, offset=start, length=offset - start).text
    cut = len(before)
    for _ in range(_DIFF_CONTEXT_LINES + 1):
        cut = before.rfind("\n", 0, cut)
        if cut < 0:
            return start
    return start + cut + 1


def _line_end(sha: str, offset: int) -> int:
    """Where the `_DIFF_CONTEXT_LINES`-th line after `offset` ends (or a window on)."""
    after = blob_range(sha=sha, offset=offset, length=_DIFF_CONTEXT_CHARS).text
    cut = -1
    for _ in range(_DIFF_CONTEXT_LINES):
        found = after.find("\n", cut + 1)
        if found < 0:
            return offset + len(after)
        cut = found
    return offset + cut + 1


def long_text_diff(name: str, old_sha: str, new_sha: str, budget: DiffBudget) -> TextDiff:
    """The diff of two long texts around what changed, never holding either whole.

    The unchanged start and end come from `blob_common_ends` (off the stored delta when one
    text is a delta on the other, else by comparing chunk hashes and ranges); only the region
    between, widened to a few whole lines of context, is read and diffed line by line, and its
    rows are numbered as in the whole text. A region longer than PLAYGROUND_DIFF_LARGE_CHARS is
    diffed up to that length and marked `cut`; the region's lines count against `budget`.
    """
    cap = int(settings.PLAYGROUND_DIFF_LARGE_CHARS)
    lengths = blob_lengths(shas=[old_sha, new_sha])
    old_total, new_total = lengths.get(old_sha, 0), lengths.get(new_sha, 0)
    prefix, suffix = blob_common_ends(a=old_sha, b=new_sha)
    start = _line_start(old_sha, prefix)
    tail = old_total - suffix
    old_end = _line_end(old_sha, tail)
    new_end = new_total - (old_total - old_end)
    cut = max(old_end, new_end) - start > cap
    full_old_end, full_new_end = old_end, new_end
    if cut:
        old_end, new_end = min(old_end, start + cap), min(new_end, start + cap)
    old = blob_range(sha=old_sha, offset=start, length=old_end - start).text
    new = blob_range(sha=new_sha, offset=start, length=new_end - start).text
    old = _whole_lines(old, old_end < full_old_end)
    new = _whole_lines(new, new_end < full_new_end)
    old_end, new_end = start + len(old), start + len(new)
    # The lines past the cut are counted (a scan, no diff), so the header is true.
    rest_old = _lines_between(old_sha, old_end, full_old_end)
    rest_new = _lines_between(new_sha, new_end, full_new_end)
    diff = text_diff(name, old, new, limit=None, budget=budget)
    lines_before = blob_count(sha=old_sha, needle="\n", end=start) if start else 0
    for row in diff.rows:
        if "old_no" in row:
            row["old_no"] += lines_before
        if "new_no" in row:
            row["new_no"] += lines_before
    diff.lines_before += lines_before
    diff.chars_after = 0 if cut else old_total - old_end
    diff.cut = cut
    diff.rest_old_lines, diff.rest_new_lines = rest_old, rest_new
    return diff


def _whole_lines(text: str, cut: bool) -> str:
    """A side cut short ends at its last line break (no line half diffed, half counted)."""
    if not cut:
        return text
    end = text.rfind("\n")
    return text[: end + 1] if end >= 0 else text


def _lines_between(sha: str, start: int, end: int) -> int:
    """Lines in characters `[start, end)`: its line breaks, plus an unended last line."""
    if end <= start:
        return 0
    breaks = blob_count(sha=sha, needle="\n", start=start, end=end)
    last = blob_range(sha=sha, offset=end - 1, length=1).text
    return breaks + (0 if last == "\n" else 1)


def _one_sided_diff(
    name: str, old_sha: str, new_sha: str, cap: int, budget: DiffBudget
) -> TextDiff:
    """A long message added or removed: its first `cap` characters, marked `cut` if longer."""
    sha = old_sha or new_sha
    part = blob_range(sha=sha, offset=0, length=cap)
    text = _whole_lines(part.text, part.total > len(part.text))
    diff = text_diff(
        name, text if old_sha else "", "" if old_sha else text, limit=None, budget=budget
    )
    diff.cut = part.total > len(text)
    rest = _lines_between(sha, len(text), part.total)
    if old_sha:
        diff.rest_old_lines = rest
    else:
        diff.rest_new_lines = rest
    return diff


def version_content_diff(
    *, before: PromptVersion, after: PromptVersion, limit: int | None = DEFAULT_ROW_LIMIT
) -> dict[str, Any]:
    """`content_diff` of two versions (`texts`, `changes`, and `complete`: False when a text
    was past the diff budget), each text cut to `limit` rows.

    Computed once per pair of contents under a DiffBudget and kept packed in `diff_cache` by
    the two content hashes (versions never change), so the API, the page and every fold of it
    share one computation.
    """
    key = ":".join(
        (
            before.content_hash,
            after.content_hash,
            str(settings.PLAYGROUND_DIFF_BUDGET_LINES),
            str(settings.PLAYGROUND_DIFF_BUDGET_ROWS),
            str(settings.PLAYGROUND_DIFF_LARGE_CHARS),
        )
    )
    packed = diff_cache.get(key)
    if packed is not None:
        diff = diff_unpack(packed)
    else:
        diff, _ = _content_diff_compute(before=before, after=after)
        # Kept even when the engine's time ran out (`complete` is then false): only engine time
        # counts, so only a pair that is expensive to compare gets there, and computing it again
        # for every fold is the cost the budget exists to avoid.
        diff_cache.put(key, diff_pack(diff))
    return {**diff, "texts": [diff_limit(text, limit) for text in diff["texts"]]}


def _content_diff_compute(
    *, before: PromptVersion, after: PromptVersion
) -> tuple[dict[str, Any], DiffBudget]:
    """The whole diff, reading texts from textstore: whole when short, around the change when
    either is longer than PLAYGROUND_DIFF_LARGE_CHARS, so a one-line edit of a 50 MB prompt is a
    small diff built from a few ranges."""
    large = int(settings.PLAYGROUND_DIFF_LARGE_CHARS)
    budget = DiffBudget.from_settings()
    shas = [before.system_sha, after.system_sha]
    shas += [m["sha"] for m in before.messages] + [m["sha"] for m in after.messages]
    lengths = blob_lengths(shas=shas)

    def differ(name: str, old_sha: str, new_sha: str) -> TextDiff:
        # "" stands for a message missing on one side (content_diff's empty message).
        if old_sha == new_sha:
            return TextDiff(field=name)
        if max(lengths.get(old_sha, 0), lengths.get(new_sha, 0)) > large:
            if old_sha and new_sha:
                return long_text_diff(name, old_sha, new_sha, budget)
            return _one_sided_diff(name, old_sha, new_sha, large, budget)
        old = blob_read(sha=old_sha) if old_sha else ""
        new = blob_read(sha=new_sha) if new_sha else ""
        return text_diff(name, old, new, limit=None, budget=budget)

    diff = content_diff(_by_hash(before), _by_hash(after), limit=None, differ=differ, budget=budget)
    diff["complete"] = not budget.out_of_time and not any(text.too_large for text in diff["texts"])
    return diff, budget


def _by_hash(version: PromptVersion) -> VersionContent:
    """The version's content with each text replaced by its blob's hash."""
    return {
        "provider": version.provider,
        "model": version.model,
        "system": version.system_sha,
        "messages": [{"role": m["role"], "content": m["sha"]} for m in version.messages],
        "params": version.params,
        "tools": version.tools,
        "response_format": version.response_format,
        "variables": version.variables,
    }
