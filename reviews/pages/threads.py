"""Read models of the threads, the author's view, the revision diff page and the inbox: small
frozen dataclasses built from rows the selectors load."""

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe

from common.auth import Viewer
from common.textdiff import Fold, fold_unchanged

from ..models import (
    Annotation,
    AnnotationAnchor,
    BodyEdit,
    DesignDoc,
    DocRevision,
    InboxItem,
    Reply,
)
from ..rendering import comment_preview_render, comment_render
from ..revision_diff import AnchorPair, Marker, RevisionDiff, Row, marked_segments
from ..selectors import DocReviewRow, doc_review_rows, open_issue_list


@dataclass(frozen=True)
class EditView:
    """An earlier text of an annotation or a reply."""

    body: str
    fields: dict[str, Any]
    written_at: datetime
    replaced_at: datetime


@dataclass(frozen=True)
class ReplyView:
    id: int
    author: str
    body_html: str
    body: str
    created_at: datetime
    edited_at: datetime | None
    history: tuple[EditView, ...]
    can_edit: bool


@dataclass(frozen=True)
class ThreadView:
    annotation_id: int
    replies: tuple[ReplyView, ...]
    can_reply: bool


def history_of(edits: list[BodyEdit]) -> tuple[EditView, ...]:
    return tuple(
        EditView(
            body=edit.body,
            fields=dict(edit.fields),
            written_at=edit.written_at,
            replaced_at=edit.replaced_at,
        )
        for edit in edits
    )


def thread_of(
    annotation_id: int, replies: list[Reply], *, user_id: Any, submitted: bool
) -> ThreadView:
    """The thread of an annotation from its replies (authors and edits loaded with them)."""
    return ThreadView(
        annotation_id=annotation_id,
        replies=tuple(
            ReplyView(
                id=reply.pk,
                author=reply.author.get_username(),
                body_html=comment_render(text=reply.body),
                body=reply.body,
                created_at=reply.created_at,
                edited_at=reply.edited_at,
                history=history_of(list(reply.edits.all())),
                can_edit=reply.author_id == user_id,
            )
            for reply in replies
        ),
        can_reply=submitted and user_id is not None,
    )


@dataclass(frozen=True)
class OpenIssueView:
    """An open issue in the author's view: the annotation, its review, where it is on the
    latest revision, and its thread."""

    annotation: Annotation
    review_id: int
    reviewer: str
    revision_number: int
    status_latest: str  # exact, moved, fuzzy, orphaned, or pending (not re-anchored yet)
    score_latest: float
    thread: ThreadView
    history: tuple[EditView, ...]
    can_change_status: bool


def open_issue_views(
    annotations: list[Annotation], *, user_id: Any, doc_author_id: int
) -> list[OpenIssueView]:
    views = []
    for annotation in annotations:
        anchors: list[AnnotationAnchor] = list(annotation.anchors.all())
        here = anchors[0] if anchors else None
        views.append(
            OpenIssueView(
                annotation=annotation,
                review_id=annotation.review_id,
                reviewer=annotation.review.reviewer.get_username(),
                revision_number=annotation.revision.number,
                status_latest=here.status if here is not None else "pending",
                score_latest=here.score if here is not None else 0.0,
                thread=thread_of(
                    annotation.pk,
                    list(annotation.replies.all()),
                    user_id=user_id,
                    submitted=True,
                ),
                history=history_of(list(annotation.edits.all())),
                can_change_status=user_id in (annotation.author_id, doc_author_id),
            )
        )
    return views


@dataclass(frozen=True)
class AuthorView:
    """The document page's view of its reviews: every review the user may see, the open
    issues across them (worst first), and the revisions to compare by default."""

    review_rows: list[DocReviewRow]
    open_issues: list[OpenIssueView]
    compare_old: DocRevision | None
    latest: DocRevision

    @property
    def issue_statuses(self) -> list[tuple[str, str]]:
        return list(Annotation.Status.choices)


def author_view_build(*, user: Viewer, doc: DesignDoc, revisions: list[DocRevision]) -> AuthorView:
    """Reviews with verdicts and open counts (one query), open issues with their threads and
    anchors on the latest revision (five queries), whatever their number."""
    latest = revisions[-1]
    return AuthorView(
        review_rows=doc_review_rows(user=user, doc=doc),
        open_issues=open_issue_views(
            open_issue_list(user=user, doc=doc, latest=latest),
            user_id=user.pk,
            doc_author_id=doc.author_id,
        ),
        compare_old=revisions[-2] if len(revisions) > 1 else None,
        latest=latest,
    )


# --- the revision diff page ------------------------------------------------------------------


@dataclass(frozen=True)
class MarkView:
    """An annotation marked on the diff, with what the badge says."""

    annotation_id: int
    review_id: int
    status: str
    score: float
    side: str
    kind: str
    severity: str
    excerpt: str
    reviewer: str
    url: str


@dataclass(frozen=True)
class Segment:
    text: str
    op: int  # -1 deleted, 0 kept, 1 inserted (changed paragraphs); 0 elsewhere
    marked: bool


@dataclass(frozen=True)
class RowView:
    op: str
    old_segments: tuple[Segment, ...]
    new_segments: tuple[Segment, ...]
    marks: tuple[MarkView, ...]


@dataclass(frozen=True)
class FoldView:
    rows: tuple[RowView, ...]
    marks: int  # annotations marked inside the fold


def anchor_pairs(
    anchors: list[AnnotationAnchor], old: DocRevision, new: DocRevision
) -> list[AnchorPair]:
    """Each annotation's anchors on the two revisions, paired; annotations made after `old`
    (no anchor there) are placed only by where they are on `new`."""
    by_annotation: dict[int, dict[int, AnnotationAnchor]] = {}
    for anchor in anchors:
        by_annotation.setdefault(anchor.annotation_id, {})[anchor.revision_id] = anchor
    pairs = []
    for annotation_id, found in by_annotation.items():
        before, after = found.get(old.pk), found.get(new.pk)
        if after is None:
            continue  # not re-anchored onto the newer revision yet
        if before is None and after.annotation.revision_id != new.pk:
            continue
        old_span = (
            (before.start, before.end)
            if before is not None and before.start is not None and before.end is not None
            else None
        )
        new_span = (
            (after.start, after.end) if after.start is not None and after.end is not None else None
        )
        if old_span is None and new_span is None:
            continue  # about the whole document, or orphaned on both sides
        pairs.append(
            AnchorPair(
                annotation_id=annotation_id,
                review_id=after.annotation.review_id,
                old_span=old_span,
                new_span=new_span,
                new_status=after.status,
                new_score=after.score,
            )
        )
    return pairs


def _segments(row: Row, side: str, markers: tuple[Marker, ...]) -> tuple[Segment, ...]:
    block = row.old if side == "old" else row.new
    if block is None:
        return ()
    if row.op == "change":
        keep = -1 if side == "old" else 1
        return tuple(
            Segment(text=text, op=op, marked=False) for op, text in row.words if op in (0, keep)
        )
    own = tuple(m for m in markers if m.side == side)
    return tuple(
        Segment(text=text, op=0, marked=bool(ids)) for text, ids in marked_segments(block, own)
    )


# What the page marks: annotations whose place changed. `exact` (the passage the diff keeps) is
# left plain.
MARKED_STATUSES = ("moved", "fuzzy", "orphaned", "reattached")


def diff_rows_view(
    diff: RevisionDiff, annotations: dict[int, Annotation], *, new_revision_number: int
) -> list[RowView | FoldView]:
    """The diff's rows for the page: unchanged runs folded (one paragraph of context), each
    marked annotation with its badge."""

    def mark(marker: Marker) -> MarkView:
        annotation = annotations[marker.annotation_id]
        url = reverse("reviews:review", args=[marker.review_id])
        return MarkView(
            annotation_id=marker.annotation_id,
            review_id=marker.review_id,
            status=marker.status,
            score=marker.score,
            side=marker.side,
            kind=annotation.get_kind_display(),
            severity=annotation.severity,
            excerpt=annotation.body[:120],
            reviewer=annotation.review.reviewer.get_username(),
            url=f"{url}?r={new_revision_number}#ann-{marker.annotation_id}",
        )

    def view(row: Row) -> RowView:
        shown = tuple(m for m in row.markers if m.status in MARKED_STATUSES)
        return RowView(
            op=row.op,
            old_segments=_segments(row, "old", shown),
            new_segments=_segments(row, "new", shown),
            marks=tuple(mark(m) for m in shown),
        )

    # Unchanged paragraphs fold even when an annotation merely moved with them (the fold says
    # how many); one whose annotation landed only fuzzily, or lost it, stays in sight.
    folded = fold_unchanged(
        list(diff.rows),
        unchanged=lambda row: (
            row.unchanged and not any(m.status in ("fuzzy", "orphaned") for m in row.markers)
        ),
    )
    out: list[RowView | FoldView] = []
    for item in folded:
        if isinstance(item, Fold):
            rows = tuple(view(row) for row in item.rows if isinstance(row, Row))
            out.append(FoldView(rows=rows, marks=sum(len(r.marks) for r in rows)))
        else:
            out.append(view(item))
    return out


# --- the inbox ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class InboxItemView:
    id: int
    kind: str
    text: str
    doc_title: str
    excerpt: str  # the Markdown source, cut to INBOX_EXCERPT_CHARS
    created_at: datetime
    unread: bool

    @property
    def excerpt_html(self) -> SafeString:
        """The excerpt rendered and sanitised like a reply (markdown-it-py + nh3)."""
        return mark_safe(comment_preview_render(text=self.excerpt))  # noqa: S308 (nh3)


INBOX_EXCERPT_CHARS = 240


def _excerpt(text: str) -> str:
    """The start of a comment, cut at a word boundary with an ellipsis when it is longer."""
    if len(text) <= INBOX_EXCERPT_CHARS:
        return text
    cut = text[:INBOX_EXCERPT_CHARS]
    space = cut.rfind(" ")
    return (cut[:space] if space > INBOX_EXCERPT_CHARS // 2 else cut).rstrip() + "…"


def inbox_item_view(item: InboxItem) -> InboxItemView:
    actor = item.actor.get_username() if item.actor is not None else "Someone"
    if item.kind == InboxItem.Kind.REVIEW_SUBMITTED:
        text = f"{actor} submitted a review"
        excerpt = ""
    elif item.kind == InboxItem.Kind.REPLY:
        yours = item.annotation is not None and item.annotation.author_id == item.recipient_id
        text = f"{actor} replied to {'your annotation' if yours else 'a thread you are in'}"
        excerpt = _excerpt(item.reply.body) if item.reply is not None else ""
    else:
        number = f"r{item.revision.number}" if item.revision is not None else "a new revision"
        text = f"Your annotation was orphaned by {number}"
        excerpt = _excerpt(item.annotation.body) if item.annotation is not None else ""
    return InboxItemView(
        id=item.pk,
        kind=item.kind,
        text=text,
        doc_title=item.review.revision.doc.title,
        excerpt=excerpt,
        created_at=item.created_at,
        unread=item.read_at is None,
    )


def inbox_target_url(item: InboxItem) -> str:
    """Where an inbox item leads: the review, at the annotation or reply it is about."""
    url = reverse("reviews:review", args=[item.review_id])
    if item.kind == InboxItem.Kind.ORPHANED and item.revision is not None:
        return f"{url}?r={item.revision.number}#ann-{item.annotation_id}"
    if item.kind == InboxItem.Kind.REPLY and item.reply_id:
        return f"{url}#reply-{item.reply_id}"
    return url
