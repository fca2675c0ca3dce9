"""Output shapes shared by several review-desk endpoints (field names fixed by docs/api.md)."""

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from common.fields import StrictSerializer
from questionbank.models import Question

from ..models import Annotation, AnnotationAnchor, Area, ChecklistItem, DesignDoc, DocRevision
from .fields import choice_field


class DocRevisionSummarySerializer(serializers.ModelSerializer[DocRevision]):
    author = serializers.CharField(source="author.username")
    doc = serializers.IntegerField(source="doc_id")

    class Meta:
        model = DocRevision
        fields: tuple[str, ...] = (
            "id",
            "doc",
            "number",
            "author",
            "created_at",
            "message",
            "body_sha",
        )


class DesignDocFieldsSerializer(serializers.ModelSerializer[DesignDoc]):
    """A document's own fields (the detail adds its revisions from a `DocDetail`)."""

    author = serializers.CharField(source="author.username")
    question: "serializers.SlugRelatedField[Question]" = serializers.SlugRelatedField(
        slug_field="slug", read_only=True
    )
    constraints = serializers.ListField(child=serializers.CharField())

    class Meta:
        model = DesignDoc
        fields: tuple[str, ...] = (
            "id",
            "title",
            "author",
            "question",
            "constraints",
            "practice",
            "created_at",
        )


class DesignDocSerializer(DesignDocFieldsSerializer):
    """A document in the list: the queryset annotates the latest revision's id and number."""

    latest_revision = serializers.IntegerField(
        source="latest_revision_id", allow_null=True, help_text="Id of the newest revision."
    )
    latest_revision_number = serializers.IntegerField(source="latest_number", allow_null=True)

    class Meta(DesignDocFieldsSerializer.Meta):
        fields = (
            *DesignDocFieldsSerializer.Meta.fields,
            "latest_revision",
            "latest_revision_number",
        )


class AnnotationAnchorSerializer(serializers.ModelSerializer[AnnotationAnchor]):
    revision = serializers.IntegerField(source="revision_id")
    revision_number = serializers.IntegerField(source="revision.number")
    status = choice_field(AnnotationAnchor.Status.values, read_only=True)

    class Meta:
        model = AnnotationAnchor
        fields: tuple[str, ...] = (
            "revision",
            "revision_number",
            "status",
            "start",
            "end",
            "score",
            "manual",
        )


class QuoteSerializer(StrictSerializer):
    exact = serializers.CharField(trim_whitespace=False)
    prefix = serializers.CharField(trim_whitespace=False, required=False, allow_blank=True)
    suffix = serializers.CharField(trim_whitespace=False, required=False, allow_blank=True)


class PositionSerializer(StrictSerializer):
    start = serializers.IntegerField(min_value=0)
    end = serializers.IntegerField(min_value=0)


class ReviewAnnotationSerializer(serializers.ModelSerializer[Annotation]):
    """An annotation with its selectors; `anchors` only where the endpoint says so."""

    review = serializers.IntegerField(source="review_id")
    revision = serializers.IntegerField(source="revision_id")
    author = serializers.CharField(source="author.username")
    quote = serializers.SerializerMethodField()
    position = serializers.SerializerMethodField()
    area = serializers.ChoiceField(choices=Area.values, read_only=True)
    kind = choice_field(Annotation.Kind.values, read_only=True)
    severity = serializers.ChoiceField(choices=Annotation.Severity.values, read_only=True)
    status = choice_field(Annotation.Status.values, read_only=True)
    status_changed_by = serializers.CharField(
        source="status_changed_by.username", allow_null=True, default=None
    )

    class Meta:
        model = Annotation
        fields: tuple[str, ...] = (
            "id",
            "review",
            "revision",
            "author",
            "whole_document",
            "quote",
            "position",
            "heading_path",
            "area",
            "kind",
            "severity",
            "body",
            "tradeoff",
            "constraint",
            "rank",
            "status",
            "status_changed_by",
            "status_changed_at",
            "created_at",
            "updated_at",
            "edited_at",
        )

    @extend_schema_field(QuoteSerializer(allow_null=True))
    def get_quote(self, annotation: Annotation) -> dict[str, Any] | None:
        if annotation.whole_document:
            return None
        return {"exact": annotation.exact, "prefix": annotation.prefix, "suffix": annotation.suffix}

    @extend_schema_field(PositionSerializer(allow_null=True))
    def get_position(self, annotation: Annotation) -> dict[str, Any] | None:
        if annotation.whole_document:
            return None
        return {"start": annotation.start, "end": annotation.end}


class ReviewAnnotationWithAnchorsSerializer(ReviewAnnotationSerializer):
    anchors = AnnotationAnchorSerializer(many=True, read_only=True)

    class Meta(ReviewAnnotationSerializer.Meta):
        fields = (*ReviewAnnotationSerializer.Meta.fields, "anchors")


class ReviewChecklistItemSerializer(serializers.ModelSerializer[ChecklistItem]):
    area = serializers.ChoiceField(choices=Area.values, read_only=True)
    status = choice_field(ChecklistItem.Status.values, read_only=True)

    class Meta:
        model = ChecklistItem
        fields: tuple[str, ...] = ("area", "status", "note")


class CoverageSerializer(serializers.Serializer[dict[str, int]]):
    covered = serializers.IntegerField()
    gap = serializers.IntegerField()
    na = serializers.IntegerField()
    unset = serializers.IntegerField()
