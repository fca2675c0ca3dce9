"""The diff of two revisions of a document, paragraph by paragraph, with the annotations that
moved or were orphaned placed on the paragraphs they concern.

Paragraphs are Markdown blocks separated by blank lines (a fenced code block is one block,
blank lines and all); they are aligned whole (so a moved paragraph is a deletion plus an
insertion), and a deleted paragraph followed by an inserted one that shares enough words is
shown as one changed paragraph with a word-level diff inside.
"""

import re
from dataclasses import dataclass, field
from typing import Literal

from common.textdiff import DIFF_DELETE, DIFF_EQUAL, DIFF_INSERT, sequence_diff, words_diff

Op = Literal["equal", "insert", "delete", "change"]
PAIR_MIN_SIMILARITY = 0.3
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


@dataclass(frozen=True)
class Block:
    """One paragraph: `text` is `source[start:end]` (no surrounding blank lines)."""

    start: int
    end: int
    text: str

    @property
    def key(self) -> str:
        """What counts as the same paragraph: the words, whatever the line breaks."""
        return " ".join(self.text.split())


@dataclass(frozen=True)
class Marker:
    """An annotation shown on a paragraph of the diff."""

    annotation_id: int
    review_id: int
    side: Literal["old", "new"]
    status: str  # the anchor's status on the newer revision: exact, moved, fuzzy, orphaned
    score: float
    start: int  # the passage's span on that side's text
    end: int


@dataclass(frozen=True)
class Row:
    op: Op
    old: Block | None
    new: Block | None
    words: tuple[tuple[int, str], ...] = ()
    markers: tuple[Marker, ...] = ()

    @property
    def unchanged(self) -> bool:
        return self.op == "equal"


@dataclass(frozen=True)
class AnchorPair:
    """Where one annotation is on the older and the newer revision (None: not anchored)."""

    annotation_id: int
    review_id: int
    old_span: tuple[int, int] | None
    new_span: tuple[int, int] | None
    new_status: str
    new_score: float


@dataclass(frozen=True)
class RevisionDiff:
    rows: tuple[Row, ...]
    added: int = 0
    removed: int = 0
    changed: int = 0
    unchanged: int = 0
    markers: tuple[Marker, ...] = field(default=())


def blocks_split(text: str) -> list[Block]:
    """The Markdown `text` cut into paragraphs at blank lines, fences kept whole."""
    blocks: list[Block] = []
    start: int | None = None
    end = 0
    fence: str | None = None
    pos = 0
    for line in text.splitlines(keepends=True):
        line_start, pos = pos, pos + len(line)
        marker = _FENCE.match(line)
        if fence is not None:
            end = pos
            if marker and marker.group(1).startswith(fence):
                fence = None
            continue
        if marker:
            fence = marker.group(1)[0] * 3
        if not line.strip() and fence is None:
            if start is not None:
                blocks.append(Block(start, end, text[start:end].rstrip()))
                start = None
            continue
        if start is None:
            start = line_start
        end = pos
    if start is not None:
        blocks.append(Block(start, end, text[start:end].rstrip()))
    return [b for b in blocks if b.text]


def _similarity(words: list[tuple[int, str]]) -> float:
    same = sum(len(t) for op, t in words if op == DIFF_EQUAL and t.strip())
    total = sum(len(t) for op, t in words if t.strip())
    return 2.0 * same / (total + same) if total else 1.0


def _pair(deleted: list[Block], inserted: list[Block]) -> list[Row]:
    """Rows for a run of deleted paragraphs followed by inserted ones: positional pairs that
    share enough words become changed paragraphs; the rest stay deletions and insertions."""
    rows: list[Row] = []
    for index in range(max(len(deleted), len(inserted))):
        old = deleted[index] if index < len(deleted) else None
        new = inserted[index] if index < len(inserted) else None
        if old is not None and new is not None:
            words = words_diff(old.text, new.text)
            if _similarity(words) >= PAIR_MIN_SIMILARITY:
                rows.append(Row("change", old, new, tuple(words)))
                continue
        if old is not None:
            rows.append(Row("delete", old, None))
        if new is not None:
            rows.append(Row("insert", None, new))
    # Deletions first, then insertions, as a unified diff reads.
    return sorted(rows, key=lambda row: {"change": 0, "delete": 0, "insert": 1}[row.op])


def _rows(old_text: str, new_text: str) -> list[Row]:
    old_blocks, new_blocks = blocks_split(old_text), blocks_split(new_text)
    i = j = 0
    rows: list[Row] = []
    deleted: list[Block] = []
    inserted: list[Block] = []
    for op, keys in sequence_diff([b.key for b in old_blocks], [b.key for b in new_blocks]):
        if op == DIFF_DELETE:
            deleted.extend(old_blocks[i : i + len(keys)])
            i += len(keys)
        elif op == DIFF_INSERT:
            inserted.extend(new_blocks[j : j + len(keys)])
            j += len(keys)
        else:
            rows.extend(_pair(deleted, inserted))
            deleted, inserted = [], []
            for k in range(len(keys)):
                rows.append(Row("equal", old_blocks[i + k], new_blocks[j + k]))
            i += len(keys)
            j += len(keys)
    rows.extend(_pair(deleted, inserted))
    return rows


def _place(rows: list[Row], anchors: list[AnchorPair]) -> list[Row]:
    """Put each annotation on the paragraph that holds its passage: on the newer side where it
    still lands, on the older side where it was orphaned."""
    by_row: dict[int, list[Marker]] = {}
    for pair in anchors:
        side: Literal["old", "new"]
        if pair.new_span is not None:
            side, span, attr = "new", pair.new_span, "new"
        elif pair.old_span is not None and pair.new_status == "orphaned":
            side, span, attr = "old", pair.old_span, "old"
        else:
            continue
        for index, row in enumerate(rows):
            block = getattr(row, attr)
            if block is not None and block.start <= span[0] < max(block.end, block.start + 1):
                by_row.setdefault(index, []).append(
                    Marker(
                        annotation_id=pair.annotation_id,
                        review_id=pair.review_id,
                        side=side,
                        status=pair.new_status,
                        score=pair.new_score,
                        start=span[0],
                        end=span[1],
                    )
                )
                break
    return [
        Row(row.op, row.old, row.new, row.words, tuple(by_row.get(index, ())))
        for index, row in enumerate(rows)
    ]


def revision_diff_compute(
    *, old_text: str, new_text: str, anchors: list[AnchorPair] | None = None
) -> RevisionDiff:
    """Paragraph rows old → new, with markers for `anchors` (see `_place`)."""
    rows = _place(_rows(old_text, new_text), anchors or [])
    count = {op: sum(1 for row in rows if row.op == op) for op in ("equal", "insert", "delete")}
    return RevisionDiff(
        rows=tuple(rows),
        added=count["insert"],
        removed=count["delete"],
        changed=sum(1 for row in rows if row.op == "change"),
        unchanged=count["equal"],
        markers=tuple(marker for row in rows for marker in row.markers),
    )


def marked_segments(block: Block, markers: tuple[Marker, ...]) -> list[tuple[str, tuple[int, ...]]]:
    """`block.text` cut where annotations begin and end: (text, ids of annotations covering
    it). Markers' spans are offsets into the same side's source."""
    points = {0, len(block.text)}
    for marker in markers:
        for offset in (marker.start - block.start, marker.end - block.start):
            if 0 < offset < len(block.text):
                points.add(offset)
    cuts = sorted(points)
    segments: list[tuple[str, tuple[int, ...]]] = []
    for lo, hi in zip(cuts, cuts[1:], strict=False):
        ids = tuple(
            m.annotation_id
            for m in markers
            if m.start - block.start < hi and m.end - block.start > lo
        )
        segments.append((block.text[lo:hi], ids))
    return segments
