"""Design documents and their revisions."""

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.generics import ListAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from questionbank.models import Question

from ..exceptions import ReviewsError
from ..models import DesignDoc
from ..selectors import (
    doc_get_for_user,
    doc_list_visible,
    revision_get_for_user,
    revision_list,
    revision_text,
)
from ..services import doc_constraints_set, doc_create, doc_revision_create
from .serializers import DesignDocSerializer, DocRevisionSummarySerializer


def question_from_slug(slug: str | None) -> Question | None:
    if not slug:
        return None
    question = Question.objects.filter(slug=slug).first()
    if question is None:
        raise ReviewsError(f"question: unknown question {slug!r}.", field="question")
    return question


def _with_revisions(doc: DesignDoc) -> DesignDoc:
    """Attach the revisions (one query) and the latest revision's id and number."""
    doc.revision_rows = list(revision_list(doc=doc))
    latest = doc.revision_rows[-1] if doc.revision_rows else None
    doc.latest_revision_id = latest.pk if latest else None
    doc.latest_number = latest.number if latest else None
    return doc


class DocDetailSerializer(DesignDocSerializer):
    revisions = DocRevisionSummarySerializer(many=True, source="revision_rows")

    class Meta(DesignDocSerializer.Meta):
        fields = (*DesignDocSerializer.Meta.fields, "revisions")


class DocListCreateApi(ListAPIView):
    """Every design document (any signed-in account may review any of them); create one."""

    serializer_class = DesignDocSerializer

    class InputSerializer(serializers.Serializer):
        title = serializers.CharField(max_length=200)
        body = serializers.CharField(trim_whitespace=False, help_text="Markdown.")
        question = serializers.CharField(required=False, allow_blank=True, allow_null=True)
        constraints = serializers.ListField(
            child=serializers.CharField(max_length=200), required=False
        )
        message = serializers.CharField(required=False, allow_blank=True, max_length=500)

    def get_queryset(self):
        return doc_list_visible(user=self.request.user)

    @extend_schema(request=InputSerializer, responses={201: DocDetailSerializer})
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        doc, _ = doc_create(
            actor=request.user,
            title=data.validated_data["title"],
            body=data.validated_data["body"],
            question=question_from_slug(data.validated_data.get("question")),
            constraints=data.validated_data.get("constraints"),
            message=data.validated_data.get("message", ""),
        )
        return Response(
            DocDetailSerializer(_with_revisions(doc)).data, status=status.HTTP_201_CREATED
        )


class DocDetailApi(APIView):
    """A document with its revisions; its author may replace the pinned constraints."""

    class InputSerializer(serializers.Serializer):
        constraints = serializers.ListField(child=serializers.CharField(max_length=200))

    @extend_schema(responses=DocDetailSerializer)
    def get(self, request: Request, doc_id: int) -> Response:
        doc = doc_get_for_user(user=request.user, doc_id=doc_id)
        return Response(DocDetailSerializer(_with_revisions(doc)).data)

    @extend_schema(request=InputSerializer, responses=DocDetailSerializer)
    def patch(self, request: Request, doc_id: int) -> Response:
        doc = doc_get_for_user(user=request.user, doc_id=doc_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        doc = doc_constraints_set(
            actor=request.user, doc=doc, constraints=data.validated_data["constraints"]
        )
        return Response(DocDetailSerializer(_with_revisions(doc)).data)


class DocRevisionListCreateApi(APIView):
    """A document's revisions; its author saves a new one (re-anchoring follows)."""

    class InputSerializer(serializers.Serializer):
        body = serializers.CharField(trim_whitespace=False, help_text="Markdown.")
        message = serializers.CharField(required=False, allow_blank=True, max_length=500)

    @extend_schema(responses=DocRevisionSummarySerializer(many=True))
    def get(self, request: Request, doc_id: int) -> Response:
        doc = doc_get_for_user(user=request.user, doc_id=doc_id)
        return Response(DocRevisionSummarySerializer(revision_list(doc=doc), many=True).data)

    @extend_schema(
        request=InputSerializer,
        responses={201: DocRevisionSummarySerializer, 200: DocRevisionSummarySerializer},
        description="A body identical to the latest revision's creates nothing and returns "
        "that revision with 200.",
    )
    def post(self, request: Request, doc_id: int) -> Response:
        doc = doc_get_for_user(user=request.user, doc_id=doc_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        revision, created = doc_revision_create(
            actor=request.user,
            doc=doc,
            body=data.validated_data["body"],
            message=data.validated_data.get("message", ""),
        )
        return Response(
            DocRevisionSummarySerializer(revision).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )


class RevisionDetailApi(APIView):
    """One revision with its Markdown `body`. Revisions are immutable: no PUT, PATCH, DELETE."""

    class OutputSerializer(DocRevisionSummarySerializer):
        body = serializers.SerializerMethodField()

        class Meta(DocRevisionSummarySerializer.Meta):
            fields = (*DocRevisionSummarySerializer.Meta.fields, "body")

        def get_body(self, revision: Any) -> str:
            return revision_text(revision=revision)

    @extend_schema(responses=OutputSerializer)
    def get(self, request: Request, revision_id: int) -> Response:
        revision = revision_get_for_user(user=request.user, revision_id=revision_id)
        return Response(self.OutputSerializer(revision).data)
