"""Page models of change requests: frozen dataclasses the templates read (docs/architecture.md,
Layers inside an app)."""

from dataclasses import dataclass
from typing import Any

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from common.auth import Viewer
from evals.selectors import version_pass_rates
from playground.pages import version_diff_context
from reviews.models import Annotation, AnnotationAnchor, Review
from reviews.selectors import revision_text

from .gate import GateResult, gate_evaluate
from .models import ChangeRequest, RequestedReviewer, RequestRevision
from .selectors import (
    AnnotationView,
    RequestAccess,
    annotation_views,
    request_reviewers,
    request_reviews,
    request_revisions,
)

ANCHOR_WORDS: dict[str, str] = {
    AnnotationAnchor.Status.EXACT.value: "exact",
    AnnotationAnchor.Status.MOVED.value: "moved",
    AnnotationAnchor.Status.FUZZY.value: "fuzzy",
    AnnotationAnchor.Status.ORPHANED.value: "orphaned",
    AnnotationAnchor.Status.REATTACHED.value: "re-attached",
}


@dataclass(frozen=True)
class EvalLine:
    number: int
    rate: str  # "67% (2 of 3)" or "not evaluated"


@dataclass(frozen=True)
class RequestPage:
    request: ChangeRequest
    target: RequestAccess
    reviewers: list[RequestedReviewer]
    revisions: list[RequestRevision]
    current: RequestRevision
    text_html: SafeString
    annotations: list[AnnotationView]
    reviews: list[Review]
    my_draft: Review | None
    my_draft_count: int
    gate: GateResult
    evals: list[EvalLine]
    diff: dict[str, Any]
    pending_suggestions: int

    @property
    def is_open(self) -> bool:
        return self.request.status == ChangeRequest.Status.OPEN

    @property
    def can_accept(self) -> bool:
        return self.is_open and self.target.is_author


def _highlighted(text: str, views: list[AnnotationView]) -> SafeString:
    """The text, escaped, with each anchored annotation's passage in a <mark> (overlaps: the
    earlier one wins)."""
    spans = sorted(
        (v.anchor.start, v.anchor.end, v.annotation.pk)
        for v in views
        if v.anchor is not None and v.anchor.start is not None and v.anchor.end is not None
    )
    parts: list[str] = []
    cursor = 0
    for start, end, pk in spans:
        if start < cursor:
            continue
        parts.append(escape(text[cursor:start]))
        parts.append(
            f'<mark class="change-mark" id="mark-{pk}" data-annotation="{pk}">'
            f"{escape(text[start:end])}</mark>"
        )
        cursor = end
    parts.append(escape(text[cursor:]))
    return mark_safe("".join(parts))  # noqa: S308 (every piece is escaped above)


def anchor_word(view: AnnotationView) -> str:
    if view.anchor is None:
        return "re-anchoring…"
    status = str(view.anchor.status)
    return ANCHOR_WORDS.get(status, status)


def request_page(*, user: Viewer, target: RequestAccess) -> RequestPage:
    request = target.request
    revisions = request_revisions(request=request)
    current = revisions[-1]
    views = annotation_views(user=user, request=request, viewed=current)
    reviews = list(request_reviews(user=user, request=request))
    draft = next(
        (
            r
            for r in reviews
            if r.reviewer_id == user.pk
            and r.status == Review.Status.DRAFT
            and r.revision_id == current.revision_id
        ),
        None,
    )
    rates = version_pass_rates(
        prompt_id=request.prompt_id,
        version_ids=[request.from_version_id, request.to_version_id],
    )
    evals = []
    for version in (request.from_version, request.to_version):
        rate = rates.get(version.pk)
        evals.append(
            EvalLine(
                number=version.number,
                rate=f"{rate.rate:.0%} ({rate.passed} of {rate.graded})"
                if rate
                else "not evaluated",
            )
        )
    return RequestPage(
        request=request,
        target=target,
        reviewers=request_reviewers(request=request),
        revisions=revisions,
        current=current,
        text_html=_highlighted(revision_text(revision=current.revision), views),
        annotations=views,
        reviews=[r for r in reviews if r.status == Review.Status.SUBMITTED],
        my_draft=draft,
        my_draft_count=sum(1 for v in views if draft and v.annotation.review_id == draft.pk),
        gate=gate_evaluate(request=request),
        evals=evals,
        diff=version_diff_context(
            prompt=request.prompt, a=request.from_version, b=request.to_version
        ),
        pending_suggestions=sum(
            1
            for v in views
            if v.suggestion_status == "pending"
            and v.annotation.review.status == Review.Status.SUBMITTED
        ),
    )


KINDS = Annotation.Kind.choices
SEVERITIES = Annotation.Severity.choices
