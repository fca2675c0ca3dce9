"""Reviews: start, read, edit the checklist and summary, rank risks, submit."""

from collections.abc import Callable
from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.generics import ListAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from common.auth import request_actor
from common.fields import StrictSerializer

from ..exceptions import NotFound, ReviewsError
from ..models import NOTE_MAX_CHARS, Area, ChecklistItem, Review, Verdict
from ..selectors import (
    doc_get_for_user,
    review_detail,
    review_get_for_user,
    review_list_visible,
    revision_get_for_user,
)
from ..services import review_create, review_risks_rank, review_submit, review_update
from ..services.reviews import SUMMARY_MAX_CHARS
from .fields import choice_field
from .serializers import (
    CoverageSerializer,
    ReviewAnnotationWithAnchorsSerializer,
    ReviewChecklistItemSerializer,
)


class ReviewSummarySerializer(serializers.ModelSerializer[Review]):
    doc = serializers.IntegerField(source="revision.doc_id")
    doc_title = serializers.CharField(source="revision.doc.title")
    revision = serializers.IntegerField(source="revision_id")
    revision_number = serializers.IntegerField(source="revision.number")
    reviewer = serializers.CharField(source="reviewer.username")
    status = choice_field(Review.Status.values, read_only=True)
    verdict = choice_field(["", *Verdict.values], read_only=True, help_text="Empty while a draft.")

    class Meta:
        model = Review
        fields: tuple[str, ...] = (
            "id",
            "doc",
            "doc_title",
            "revision",
            "revision_number",
            "reviewer",
            "status",
            "verdict",
            "summary",
            "created_at",
            "updated_at",
            "submitted_at",
        )


class ReviewDetailSerializer(ReviewSummarySerializer):
    """The shape of `review_detail_body` (declared for the schema)."""

    checklist = ReviewChecklistItemSerializer(many=True)
    coverage = CoverageSerializer()
    annotations = ReviewAnnotationWithAnchorsSerializer(many=True)

    class Meta(ReviewSummarySerializer.Meta):
        fields = (*ReviewSummarySerializer.Meta.fields, "checklist", "coverage", "annotations")


def review_detail_body(review: Review) -> dict[str, Any]:
    """The review with its checklist, coverage and annotations (with anchors): three queries."""
    detail = review_detail(review=review)
    return {
        **ReviewSummarySerializer(detail.review).data,
        "checklist": ReviewChecklistItemSerializer(detail.checklist, many=True).data,
        "coverage": CoverageSerializer(detail.coverage).data,
        "annotations": ReviewAnnotationWithAnchorsSerializer(detail.annotations, many=True).data,
    }


class ReviewListCreateApi(ListAPIView[Review]):
    """Reviews the caller can see (their own, and submitted ones); start a review."""

    serializer_class = ReviewSummarySerializer

    class InputSerializer(StrictSerializer):
        revision = serializers.IntegerField(help_text="The revision to review.")

    def get_queryset(self) -> QuerySet[Review]:
        reviews = review_list_visible(user=self.request.user).order_by("-created_at", "-id")
        doc_id = self.request.query_params.get("doc")
        if doc_id:
            reviews = reviews.filter(
                revision__doc=doc_get_for_user(user=self.request.user, doc_id=doc_id)
            )
        return reviews

    @extend_schema(
        parameters=[OpenApiParameter("doc", int, required=False, description="Only this doc.")]
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(
        request=InputSerializer,
        responses={201: ReviewDetailSerializer, 200: ReviewDetailSerializer},
        description="One review per revision and reviewer: asking again returns yours (200).",
    )
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            revision = revision_get_for_user(
                user=request.user, revision_id=data.validated_data["revision"]
            )
        except NotFound:
            raise ReviewsError("revision: no such revision.", field="revision") from None
        review, created = review_create(actor=request_actor(request), revision=revision)
        review = review_get_for_user(user=request.user, review_id=review.pk)
        return Response(
            review_detail_body(review),
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )


class ChecklistEntrySerializer(StrictSerializer):
    area = serializers.ChoiceField(choices=Area.values)
    status = choice_field(ChecklistItem.Status.values, required=False, allow_blank=True)
    note = serializers.CharField(required=False, allow_blank=True, max_length=NOTE_MAX_CHARS)


def _review_changed(
    request: Request,
    review_id: int,
    serializer: type[StrictSerializer],
    change: Callable[..., object],
) -> Response:
    """Validate the body with `serializer`, apply it to the caller's review with the service
    `change` (the body's fields as its keyword arguments), and answer the review as it now is."""
    review = review_get_for_user(user=request.user, review_id=review_id)
    data = serializer(data=request.data)
    data.is_valid(raise_exception=True)
    change(actor=request_actor(request), review=review, **data.validated_data)
    return Response(review_detail_body(review_get_for_user(user=request.user, review_id=review_id)))


class ReviewDetailApi(APIView):
    """A review with its checklist and annotations. Drafts are edited by their reviewer;
    submitted reviews are read-only (400)."""

    class InputSerializer(StrictSerializer):
        summary = serializers.CharField(
            required=False, allow_blank=True, max_length=SUMMARY_MAX_CHARS
        )
        checklist = ChecklistEntrySerializer(many=True, required=False)

    @extend_schema(responses=ReviewDetailSerializer)
    def get(self, request: Request, review_id: int) -> Response:
        review = review_get_for_user(user=request.user, review_id=review_id)
        return Response(review_detail_body(review))

    @extend_schema(request=InputSerializer, responses=ReviewDetailSerializer)
    def patch(self, request: Request, review_id: int) -> Response:
        return _review_changed(request, review_id, self.InputSerializer, review_update)


class ReviewSubmitApi(APIView):
    """draft → submitted, with a verdict (`comment` when left out). Submitting again is a
    no-op (200 with the review; the first verdict stands)."""

    class InputSerializer(StrictSerializer):
        summary = serializers.CharField(
            required=False, allow_blank=True, max_length=SUMMARY_MAX_CHARS
        )
        verdict = choice_field(Verdict.values, required=False)

    @extend_schema(request=InputSerializer, responses=ReviewDetailSerializer)
    def post(self, request: Request, review_id: int) -> Response:
        return _review_changed(request, review_id, self.InputSerializer, review_submit)


class ReviewRankingApi(APIView):
    """Rank the risks of a draft, worst first: every risk's id, once, in order."""

    class InputSerializer(StrictSerializer):
        order = serializers.ListField(child=serializers.IntegerField(), allow_empty=True)

    class OutputSerializer(serializers.Serializer[dict[str, Any]]):
        order = serializers.ListField(
            child=serializers.IntegerField(), help_text="Risk ids; rank 1 first."
        )

    @extend_schema(request=InputSerializer, responses=OutputSerializer)
    def post(self, request: Request, review_id: int) -> Response:
        review = review_get_for_user(user=request.user, review_id=review_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        order = review_risks_rank(
            actor=request_actor(request), review=review, order=data.validated_data["order"]
        )
        return Response(self.OutputSerializer({"order": order}).data)
