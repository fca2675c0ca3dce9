"""Annotations: create on a review, change status/rank/content, where they landed, re-attach."""

from typing import Any, cast

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from common.auth import request_actor
from common.fields import StrictSerializer, StringOrIntegerField

from ..exceptions import NotFound, ReviewsError
from ..models import CONSTRAINT_MAX_CHARS, Annotation, Area
from ..selectors import (
    anchor_list,
    annotation_get_for_user,
    annotation_list,
    doc_get_for_user,
    review_get_for_user,
    revision_in_doc,
)
from ..services import (
    AnnotationChanges,
    annotation_create,
    annotation_delete,
    annotation_reattach,
    annotation_update,
)
from ..services.annotations import TEXT_MAX_CHARS
from .fields import choice_field
from .serializers import (
    AnnotationAnchorSerializer,
    PositionSerializer,
    QuoteSerializer,
    ReviewAnnotationSerializer,
    ReviewAnnotationWithAnchorsSerializer,
)


class AnnotationListCreateApi(APIView):
    """A review's annotations with their anchors; the reviewer adds one to a draft.

    With `quote` and/or `position` the annotation is about that passage of the reviewed
    revision (offsets into its Markdown); with neither, about the whole document.
    """

    class InputSerializer(StrictSerializer):
        quote = QuoteSerializer(required=False, allow_null=True)
        position = PositionSerializer(required=False, allow_null=True)
        area = serializers.ChoiceField(choices=Area.values)
        kind = choice_field(Annotation.Kind.values)
        severity = serializers.ChoiceField(choices=Annotation.Severity.values)
        body = serializers.CharField(max_length=TEXT_MAX_CHARS)
        tradeoff = serializers.CharField(
            required=False, allow_blank=True, max_length=TEXT_MAX_CHARS
        )
        constraint = StringOrIntegerField(
            required=False,
            allow_null=True,
            max_length=CONSTRAINT_MAX_CHARS,
            help_text="One of the document's pinned constraints: its text or its index.",
        )
        rank = serializers.IntegerField(required=False, allow_null=True, min_value=1)

    @extend_schema(responses=ReviewAnnotationWithAnchorsSerializer(many=True))
    def get(self, request: Request, review_id: int) -> Response:
        review = review_get_for_user(user=request.user, review_id=review_id)
        return Response(
            ReviewAnnotationWithAnchorsSerializer(annotation_list(review=review), many=True).data
        )

    @extend_schema(request=InputSerializer, responses={201: ReviewAnnotationWithAnchorsSerializer})
    def post(self, request: Request, review_id: int) -> Response:
        review = review_get_for_user(user=request.user, review_id=review_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values: dict[str, Any] = dict(data.validated_data)
        quote = values.pop("quote", None) or {}
        position = values.pop("position", None) or {}
        annotation = annotation_create(
            actor=request_actor(request),
            review=review,
            exact=quote.get("exact"),
            prefix=quote.get("prefix", ""),
            suffix=quote.get("suffix", ""),
            start=position.get("start"),
            end=position.get("end"),
            **values,
        )
        created = annotation_list(review=review).get(pk=annotation.pk)
        return Response(
            ReviewAnnotationWithAnchorsSerializer(created).data, status=status.HTTP_201_CREATED
        )


class AnnotationDetailApi(APIView):
    """One annotation. PATCH `status` (the doc's author or the annotation's author, also after
    submission); on a draft its reviewer may also change `rank` and the content. After
    submission the annotation's author (nobody else: 403) may still edit the content; the
    result shows `edited_at` and the earlier content is kept (GET .../history/). A rank held
    by another risk is refused with 400: reorder with POST /reviews/{id}/ranking/."""

    class InputSerializer(StrictSerializer):
        status = choice_field(Annotation.Status.values, required=False)
        rank = serializers.IntegerField(required=False, allow_null=True, min_value=1)
        area = serializers.ChoiceField(choices=Area.values, required=False)
        kind = choice_field(Annotation.Kind.values, required=False)
        severity = serializers.ChoiceField(choices=Annotation.Severity.values, required=False)
        body = serializers.CharField(required=False, max_length=TEXT_MAX_CHARS)
        tradeoff = serializers.CharField(
            required=False, allow_blank=True, max_length=TEXT_MAX_CHARS
        )
        constraint = StringOrIntegerField(
            required=False, allow_null=True, max_length=CONSTRAINT_MAX_CHARS
        )

    @extend_schema(responses=ReviewAnnotationSerializer)
    def get(self, request: Request, annotation_id: int) -> Response:
        annotation = annotation_get_for_user(user=request.user, annotation_id=annotation_id)
        return Response(ReviewAnnotationSerializer(annotation).data)

    @extend_schema(request=InputSerializer, responses=ReviewAnnotationSerializer)
    def patch(self, request: Request, annotation_id: int) -> Response:
        annotation = annotation_get_for_user(user=request.user, annotation_id=annotation_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        if not data.validated_data:
            raise ReviewsError("Nothing to change.")
        # The serializer's fields are AnnotationChanges' keys, with its types.
        changes = cast(AnnotationChanges, data.validated_data)
        annotation_update(actor=request_actor(request), annotation=annotation, changes=changes)
        annotation = annotation_get_for_user(user=request.user, annotation_id=annotation_id)
        return Response(ReviewAnnotationSerializer(annotation).data)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, annotation_id: int) -> Response:
        annotation = annotation_get_for_user(user=request.user, annotation_id=annotation_id)
        annotation_delete(actor=request_actor(request), annotation=annotation)
        return Response(status=status.HTTP_204_NO_CONTENT)


class AnnotationAnchorsApi(APIView):
    """Where the annotation landed in each revision since its own, in revision order."""

    @extend_schema(responses=AnnotationAnchorSerializer(many=True))
    def get(self, request: Request, annotation_id: int) -> Response:
        annotation = annotation_get_for_user(user=request.user, annotation_id=annotation_id)
        return Response(
            AnnotationAnchorSerializer(anchor_list(annotation=annotation), many=True).data
        )


class AnnotationReattachApi(APIView):
    """Attach an annotation (typically an orphan) by hand to a passage of a later revision."""

    class InputSerializer(StrictSerializer):
        revision = serializers.IntegerField()
        position = PositionSerializer()

    @extend_schema(request=InputSerializer, responses=AnnotationAnchorSerializer)
    def post(self, request: Request, annotation_id: int) -> Response:
        annotation = annotation_get_for_user(user=request.user, annotation_id=annotation_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        doc = doc_get_for_user(user=request.user, doc_id=annotation.revision.doc_id)
        try:
            revision = revision_in_doc(doc=doc, revision_id=data.validated_data["revision"])
        except NotFound:
            raise ReviewsError(
                "revision: no such revision of this document.", field="revision"
            ) from None
        anchor = annotation_reattach(
            actor=request_actor(request),
            annotation=annotation,
            revision=revision,
            start=data.validated_data["position"]["start"],
            end=data.validated_data["position"]["end"],
        )
        return Response(AnnotationAnchorSerializer(anchor).data)
