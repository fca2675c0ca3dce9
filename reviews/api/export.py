"""Export a submitted review: `GET /api/v1/reviews/{id}/export/?format=markdown|json`.

`format=markdown` answers `text/markdown; charset=utf-8` (with a file name), `format=json` the
same content as JSON. Errors are always JSON with `detail`.
"""

from collections.abc import Iterable
from typing import Any

from django.utils.text import slugify
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from common.api import JsonErrorsMixin, NoUrlFormatNegotiation, TextFileRenderer

from ..exceptions import ReviewsError
from ..export import review_export_data, review_export_markdown
from ..models import Review
from ..selectors import (
    annotation_list,
    checklist_list,
    reply_list_for_review,
    review_get_for_user,
    revision_list,
    revision_text,
)

FORMATS = ("markdown", "json")


class MarkdownRenderer(TextFileRenderer):
    media_type = "text/markdown"
    format = "markdown"

    def text(self, data: Any) -> str:
        return review_export_markdown(data)


class ExportNegotiation(NoUrlFormatNegotiation):
    """`?format=` picks the representation; anything else gets JSON (errors included)."""

    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        renderers = list(renderers)
        wanted = request.query_params.get("format")
        for renderer in renderers:
            if renderer.format == wanted:
                return renderer, renderer.media_type
        json = next(r for r in renderers if isinstance(r, JSONRenderer))
        return json, json.media_type


class ReviewExportApi(JsonErrorsMixin):
    renderer_classes = [MarkdownRenderer, JSONRenderer]
    content_negotiation_class = ExportNegotiation

    @extend_schema(
        summary="Export a submitted review",
        description=(
            "Ranked risks first (rank 1 first, unranked risks after by severity), then missing "
            "items, alternatives with their tradeoffs, already-considered, constraint notes, "
            "questions, checklist coverage, and orphans (orphaned in the latest revision) last. "
            "Only submitted reviews can be exported (a draft answers 400)."
        ),
        parameters=[OpenApiParameter("format", str, required=True, enum=FORMATS)],
        responses={
            (200, "text/markdown"): OpenApiResponse(OpenApiTypes.STR, description="Markdown."),
            (200, "application/json"): OpenApiResponse(OpenApiTypes.OBJECT, description="JSON."),
        },
    )
    def get(self, request: Request, review_id: int) -> Response:
        review = review_get_for_user(user=request.user, review_id=review_id)
        wanted = request.query_params.get("format")
        if wanted not in FORMATS:
            raise ReviewsError("format: must be one of markdown, json.", field="format")
        if review.status != Review.Status.SUBMITTED:
            raise ReviewsError("Only submitted reviews can be exported.")
        revisions = list(revision_list(doc=review.revision.doc))
        data = review_export_data(
            review=review,
            annotations=list(annotation_list(review=review)),
            checklist=checklist_list(review=review),
            latest=revisions[-1],
            latest_text=revision_text(revision=revisions[-1]),
            replies=list(reply_list_for_review(review=review)),
        )
        stem = slugify(review.revision.doc.title)[:60].strip("-") or "review"
        extension = "md" if wanted == "markdown" else "json"
        filename = f"{stem}-r{review.revision.number}-review-{review.pk}.{extension}"
        response = Response(data)
        response["Content-Disposition"] = f'inline; filename="{filename}"'
        return response
