"""Page models: what a review-desk page shows, read once and typed (templates consume these)."""

from dataclasses import dataclass

from django.conf import settings
from django.utils.safestring import SafeString, mark_safe

from ..export import risk_order
from ..models import Annotation, AnnotationAnchor, Area, DocRevision, Review
from ..rendering import markdown_render, source_render
from ..selectors import AnnotationRow, annotation_rows, annotation_threads, revision_text
from .threads import EditView, ThreadView, history_of, thread_of


@dataclass(frozen=True)
class AnnotationView:
    """One annotation as the page shows it on the viewed revision."""

    annotation: Annotation
    here: AnnotationAnchor | None  # its anchor on the viewed revision (None: not computed yet)
    trail: list[AnnotationAnchor]
    can_change_status: bool
    can_reattach: bool
    thread: ThreadView
    history: tuple[EditView, ...]
    can_edit_content: bool  # its author, after submission (drafts edit in place)

    @property
    def status_here(self) -> str:
        return self.here.status if self.here is not None else "pending"

    @property
    def where(self) -> str:
        """The innermost two headings above the passage (the full path is its title)."""
        return " › ".join(self.annotation.heading_path[-2:])


@dataclass(frozen=True)
class AreaGroup:
    """A run of cards of one checklist area; `count` is how many the area has in all, and
    `continued` says the run goes on from the previous batch of cards (no heading again)."""

    area: str
    label: str
    count: int
    annotations: list[AnnotationView]
    continued: bool = False


@dataclass(frozen=True)
class OrphanView:
    row: AnnotationRow
    can_reattach: bool


@dataclass(frozen=True)
class CardBatch:
    """Annotation cards `start`..`start + len(cards)` in card order (by area, then id), grouped
    by area, and how many come after them."""

    groups: list[AreaGroup]
    start: int
    end: int
    remaining: int


_AREA_INDEX = {area: index for index, (area, _) in enumerate(Area.choices)}
_AREA_LABEL = dict(Area.choices)


def _card_order(rows: list[AnnotationRow]) -> list[AnnotationRow]:
    """The order of the cards: by checklist area, then as filed (the page has always listed
    them so)."""
    return sorted(rows, key=lambda r: (_AREA_INDEX.get(r.area, len(_AREA_INDEX)), r.pk))


def card_batch_build(
    *,
    review: Review,
    viewed: DocRevision,
    user_id: int,
    rows: list[AnnotationRow],
    start: int,
    until: int | None = None,
) -> CardBatch:
    """The next REVIEW_CARDS_WINDOW cards from `start` (further, up to and including the
    annotation `until`, when it comes later): only their threads and histories are read, in a
    fixed number of queries."""
    order = _card_order(rows)
    end = min(start + int(settings.REVIEW_CARDS_WINDOW), len(order))
    if until is not None:
        index = next((i for i, r in enumerate(order) if r.pk == until), None)
        if index is not None and index >= end:
            end = index + 1
    wanted = order[start:end]
    views = {v.annotation.pk: v for v in _annotation_views(review, viewed, user_id, wanted)}
    counts: dict[str, int] = {}
    for row in rows:
        counts[row.area] = counts.get(row.area, 0) + 1
    groups: list[AreaGroup] = []
    for row in wanted:
        if not groups or groups[-1].area != row.area:
            continued = not groups and start > 0 and order[start - 1].area == row.area
            groups.append(
                AreaGroup(
                    row.area, _AREA_LABEL.get(row.area, row.area), counts[row.area], [], continued
                )
            )
        groups[-1].annotations.append(views[row.pk])
    return CardBatch(groups=groups, start=start, end=end, remaining=len(order) - end)


def risks_worst_first(rows: list[AnnotationRow]) -> list[AnnotationRow]:
    """The risks among `rows`, worst first (rank 1 first, then unranked by severity)."""
    risks = (r for r in rows if r.kind == Annotation.Kind.RISK)
    # Open risks first in rank order; resolved and dropped ones after (marked on the page).
    return sorted(risks, key=lambda r: (r.status != Annotation.Status.OPEN, risk_order(r)))


@dataclass(frozen=True)
class ReviewPage:
    """A review shown on one revision of its document (the reviewed one, or a later one).

    Every annotation is on the page as a highlight, in the counts and in the risks and orphans
    lists (`rows`, one light query); only the first REVIEW_CARDS_WINDOW full cards are (`cards`),
    the others load on demand, so the page's work does not grow with their number.
    """

    review: Review
    revisions: list[DocRevision]
    viewed: DocRevision
    doc_html: SafeString
    source_html: SafeString
    rows: list[AnnotationRow]
    cards: CardBatch
    is_doc_author: bool
    user_id: int

    @property
    def on_reviewed(self) -> bool:
        return self.viewed.pk == self.review.revision_id

    @property
    def risks(self) -> list[AnnotationRow]:
        return risks_worst_first(self.rows)

    @property
    def by_area(self) -> list[AreaGroup]:
        """The first cards per checklist area, areas without any left out."""
        return self.cards.groups

    @property
    def orphans(self) -> list[OrphanView]:
        doc_author_id = self.review.revision.doc.author_id
        later = self.viewed.number > self.review.revision.number
        return [
            OrphanView(
                row=r,
                can_reattach=later and self.user_id in (r.author_id, doc_author_id),
            )
            for r in self.rows
            if r.status_here == AnnotationAnchor.Status.ORPHANED
        ]

    @property
    def here_counts(self) -> list[tuple[str, int]]:
        """How many annotations landed how on the viewed revision, by status."""
        counts: dict[str, int] = {}
        for row in self.rows:
            counts[row.status_here] = counts.get(row.status_here, 0) + 1
        return sorted(counts.items())


def _annotation_views(
    review: Review, viewed: DocRevision, user_id: int, rows: list[AnnotationRow]
) -> list[AnnotationView]:
    doc_author_id = review.revision.doc.author_id
    submitted = review.status == Review.Status.SUBMITTED
    views = []
    for annotation in annotation_threads(review=review, ids=[r.pk for r in rows]):
        trail = list(annotation.anchors.all())
        may_status = user_id in (annotation.author_id, doc_author_id)
        views.append(
            AnnotationView(
                annotation=annotation,
                here=next((a for a in trail if a.revision_id == viewed.pk), None),
                trail=trail,
                can_change_status=may_status,
                can_reattach=may_status and viewed.number > review.revision.number,
                thread=thread_of(
                    annotation.pk,
                    list(annotation.replies.all()),
                    user_id=user_id,
                    submitted=submitted,
                ),
                history=history_of(list(annotation.edits.all())),
                can_edit_content=submitted and annotation.author_id == user_id,
            )
        )
    return views


def review_page_build(
    *, review: Review, user_id: int, revisions: list[DocRevision], viewed: DocRevision
) -> ReviewPage:
    """The review's page on `viewed`: the document with its annotated passages marked."""
    text = revision_text(revision=viewed)
    rows = annotation_rows(review=review, viewed=viewed)
    highlights = [
        (r.here_start, r.here_end, r.pk)
        for r in rows
        if r.here_status is not None and r.here_start is not None and r.here_end is not None
    ]
    return ReviewPage(
        review=review,
        revisions=revisions,
        viewed=viewed,
        doc_html=mark_safe(  # noqa: S308 (sanitised by nh3)
            markdown_render(text=text, highlights=highlights)
        ),
        source_html=mark_safe(  # noqa: S308 (escaped by source_render)
            source_render(text=text, highlights=highlights)
        ),
        rows=rows,
        cards=card_batch_build(review=review, viewed=viewed, user_id=user_id, rows=rows, start=0),
        is_doc_author=review.revision.doc.author_id == user_id,
        user_id=user_id,
    )
