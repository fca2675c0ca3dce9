"""The critique API: draft a review with a prompt, read the suggestions, accept or reject them
(docs/api.md, Critique drafts)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from common.auth import request_actor
from common.fields import StrictSerializer, StringOrIntegerField
from playground.models import MODEL_MAX_CHARS
from playground.text.content import PROVIDERS
from reviews.api.fields import choice_field
from reviews.api.serializers import (
    PositionSerializer,
    QuoteSerializer,
    ReviewAnnotationWithAnchorsSerializer,
)
from reviews.models import CONSTRAINT_MAX_CHARS, Annotation, Area
from reviews.selectors import annotation_list, review_get_for_user

from .models import ReviewDraft, Suggestion
from .selectors import (
    draft_get_for_user,
    draft_version_for_user,
    suggestion_get_for_user,
    suggestion_list,
)
from .services import (
    draft_create,
    draft_sync,
    starter_version_ensure,
    suggestion_accept,
    suggestion_reject,
)

TEXT_MAX_CHARS = 10_000


class _QuoteOut(serializers.Serializer[dict[str, str]]):
    exact = serializers.CharField()
    prefix = serializers.CharField(allow_blank=True)
    suffix = serializers.CharField(allow_blank=True)


class _PositionOut(serializers.Serializer[dict[str, int]]):
    start = serializers.IntegerField()
    end = serializers.IntegerField()


class SuggestionSerializer(serializers.ModelSerializer[Suggestion]):
    """One drafted annotation: its quote (null: about the whole document), whether it was
    anchored and where, its content, and what the reviewer did with it."""

    quote = serializers.SerializerMethodField()
    position = serializers.SerializerMethodField()
    area = serializers.ChoiceField(choices=Area.values, read_only=True)
    kind = choice_field(Annotation.Kind.values, read_only=True)
    severity = serializers.ChoiceField(choices=Annotation.Severity.values, read_only=True)
    state = choice_field(Suggestion.State.values, read_only=True)
    rank = serializers.IntegerField(allow_null=True, read_only=True)
    annotation = serializers.IntegerField(source="annotation_id", allow_null=True, read_only=True)

    class Meta:
        model = Suggestion
        fields = [
            "id",
            "quote",
            "anchored",
            "position",
            "area",
            "kind",
            "severity",
            "body",
            "tradeoff",
            "constraint",
            "rank",
            "state",
            "annotation",
        ]

    @extend_schema_field(_QuoteOut(allow_null=True))
    def get_quote(self, suggestion: Suggestion) -> dict[str, str] | None:
        if not suggestion.exact:
            return None
        return {"exact": suggestion.exact, "prefix": suggestion.prefix, "suffix": suggestion.suffix}

    @extend_schema_field(_PositionOut(allow_null=True))
    def get_position(self, suggestion: Suggestion) -> dict[str, int] | None:
        if not suggestion.anchored:
            return None
        return {"start": suggestion.start or 0, "end": suggestion.end or 0}


class DraftSerializer(serializers.Serializer[dict[str, Any]]):
    id = serializers.IntegerField()
    review = serializers.IntegerField(source="review_id")
    status = choice_field(ReviewDraft.Status.values)
    error = serializers.CharField(allow_blank=True)
    suggestions = SuggestionSerializer(many=True)


class _DraftCreated(serializers.Serializer[dict[str, Any]]):
    id = serializers.IntegerField()
    status = choice_field(ReviewDraft.Status.values)


class ReviewDraftCreateApi(APIView):
    """Draft the review with a critique prompt version (none: the built-in starter), on its
    own provider and model or the ones given. Reviewer only; a submitted review takes none."""

    class InputSerializer(StrictSerializer):
        version = serializers.IntegerField(required=False, allow_null=True, min_value=1)
        provider = serializers.ChoiceField(
            choices=PROVIDERS, required=False, allow_blank=True, help_text="Default: the version's."
        )
        model = serializers.CharField(
            required=False,
            allow_blank=True,
            max_length=MODEL_MAX_CHARS,
            help_text="Default: the version's own model on its provider, else the provider's.",
        )

    @extend_schema(request=InputSerializer, responses={201: _DraftCreated})
    def post(self, request: Request, review_id: int) -> Response:
        review = review_get_for_user(user=request.user, review_id=review_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values: dict[str, Any] = dict(data.validated_data)
        version_id = values.get("version")
        version = (
            starter_version_ensure()
            if version_id in (None, "")
            else draft_version_for_user(user=request.user, version_id=version_id)
        )
        draft = draft_create(
            actor=request_actor(request),
            review=review,
            version=version,
            provider=values.get("provider"),
            model=values.get("model"),
        )
        return Response({"id": draft.pk, "status": draft.status}, status=status.HTTP_201_CREATED)


class ReviewDraftDetailApi(APIView):
    """A draft with the suggestions made so far; it follows its run, so reading it again while
    it runs shows the suggestions as they arrive. Only the reviewer sees it."""

    @extend_schema(responses=DraftSerializer)
    def get(self, request: Request, draft_id: int) -> Response:
        draft = draft_sync(draft=draft_get_for_user(user=request.user, draft_id=draft_id))
        body = {
            "id": draft.pk,
            "review_id": draft.review_id,
            "status": draft.status,
            "error": draft.error,
            "suggestions": suggestion_list(draft=draft),
        }
        return Response(DraftSerializer(body).data)


class SuggestionAcceptApi(APIView):
    """Accept a suggestion, with edits: it becomes the reviewer's draft annotation (the same
    answer as `POST /reviews/{id}/annotations/`). An unanchored one becomes a comment on the
    whole document unless a `quote` or `position` is given."""

    class InputSerializer(StrictSerializer):
        quote = QuoteSerializer(required=False, allow_null=True)
        position = PositionSerializer(required=False, allow_null=True)
        area = serializers.ChoiceField(choices=Area.values, required=False)
        kind = choice_field(Annotation.Kind.values, required=False)
        severity = serializers.ChoiceField(choices=Annotation.Severity.values, required=False)
        body = serializers.CharField(max_length=TEXT_MAX_CHARS, required=False)
        tradeoff = serializers.CharField(
            required=False, allow_blank=True, max_length=TEXT_MAX_CHARS
        )
        constraint = StringOrIntegerField(
            required=False, allow_null=True, max_length=CONSTRAINT_MAX_CHARS
        )
        rank = serializers.IntegerField(required=False, allow_null=True, min_value=1)

    @extend_schema(request=InputSerializer, responses={201: ReviewAnnotationWithAnchorsSerializer})
    def post(self, request: Request, suggestion_id: int) -> Response:
        suggestion = suggestion_get_for_user(user=request.user, suggestion_id=suggestion_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        edits = {
            k: v
            for k, v in data.validated_data.items()
            if not (k in ("quote", "position") and v is None)
        }
        annotation = suggestion_accept(
            actor=request_actor(request), suggestion=suggestion, edits=edits
        )
        created = annotation_list(review=suggestion.draft.review).get(pk=annotation.pk)
        return Response(
            ReviewAnnotationWithAnchorsSerializer(created).data, status=status.HTTP_201_CREATED
        )


class SuggestionRejectApi(APIView):
    """Reject a suggestion (again: no change). An accepted one is a 409."""

    @extend_schema(request=None, responses=SuggestionSerializer)
    def post(self, request: Request, suggestion_id: int) -> Response:
        suggestion = suggestion_get_for_user(user=request.user, suggestion_id=suggestion_id)
        rejected = suggestion_reject(actor=request_actor(request), suggestion=suggestion)
        return Response(SuggestionSerializer(rejected).data)
