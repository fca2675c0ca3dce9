"""Page models: what a review-desk page shows, read once and typed (templates consume these)."""

from dataclasses import dataclass

from django.utils.safestring import SafeString, mark_safe

from .export import risk_order
from .models import Annotation, AnnotationAnchor, Area, DocRevision, Review
from .rendering import markdown_render, source_render
from .selectors import annotation_list, revision_text


@dataclass(frozen=True)
class AnnotationView:
    """One annotation as the page shows it on the viewed revision."""

    annotation: Annotation
    here: AnnotationAnchor | None  # its anchor on the viewed revision (None: not computed yet)
    trail: list[AnnotationAnchor]
    can_change_status: bool
    can_reattach: bool

    @property
    def status_here(self) -> str:
        return self.here.status if self.here is not None else "pending"

    @property
    def where(self) -> str:
        """The innermost two headings above the passage (the full path is its title)."""
        return " › ".join(self.annotation.heading_path[-2:])


@dataclass(frozen=True)
class AreaGroup:
    area: str
    label: str
    annotations: list[AnnotationView]


@dataclass(frozen=True)
class ReviewPage:
    """A review shown on one revision of its document (the reviewed one, or a later one)."""

    review: Review
    revisions: list[DocRevision]
    viewed: DocRevision
    doc_html: SafeString
    source_html: SafeString
    annotations: list[AnnotationView]
    is_doc_author: bool

    @property
    def on_reviewed(self) -> bool:
        return self.viewed.pk == self.review.revision_id

    @property
    def risks(self) -> list[AnnotationView]:
        """Risks, worst first (rank 1 first, then unranked by severity)."""
        risks = (v for v in self.annotations if v.annotation.kind == Annotation.Kind.RISK)
        return sorted(risks, key=lambda v: risk_order(v.annotation))

    @property
    def by_area(self) -> list[AreaGroup]:
        """Annotations per checklist area, areas without any left out."""
        groups = [
            AreaGroup(area, label, [v for v in self.annotations if v.annotation.area == area])
            for area, label in Area.choices
        ]
        return [group for group in groups if group.annotations]

    @property
    def orphans(self) -> list[AnnotationView]:
        return [v for v in self.annotations if v.status_here == AnnotationAnchor.Status.ORPHANED]

    @property
    def here_counts(self) -> list[tuple[str, int]]:
        """How many annotations landed how on the viewed revision, by status."""
        counts: dict[str, int] = {}
        for view in self.annotations:
            counts[view.status_here] = counts.get(view.status_here, 0) + 1
        return sorted(counts.items())


def _annotation_views(review: Review, viewed: DocRevision, user_id: int) -> list[AnnotationView]:
    doc_author_id = review.revision.doc.author_id
    views = []
    for annotation in annotation_list(review=review):
        trail = list(annotation.anchors.all())
        may_status = user_id in (annotation.author_id, doc_author_id)
        views.append(
            AnnotationView(
                annotation=annotation,
                here=next((a for a in trail if a.revision_id == viewed.pk), None),
                trail=trail,
                can_change_status=may_status,
                can_reattach=may_status and viewed.number > review.revision.number,
            )
        )
    return views


def review_page_build(
    *, review: Review, user_id: int, revisions: list[DocRevision], viewed: DocRevision
) -> ReviewPage:
    """The review's page on `viewed`: the document with its annotated passages marked."""
    text = revision_text(revision=viewed)
    views = _annotation_views(review, viewed, user_id)
    highlights = [
        (v.here.start, v.here.end, v.annotation.pk)
        for v in views
        if v.here is not None and v.here.start is not None and v.here.end is not None
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
        annotations=views,
        is_doc_author=review.revision.doc.author_id == user_id,
    )
