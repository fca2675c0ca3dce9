"""Design documents and their revisions."""

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.generics import ListAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from common.auth import request_actor
from common.fields import StrictSerializer
from common.limits import MESSAGE_MAX_CHARS, TITLE_MAX_CHARS

from ..models import CONSTRAINT_MAX_CHARS, DesignDoc
from ..selectors import (
    DocDetail,
    doc_detail,
    doc_get_for_user,
    doc_list_visible,
    question_from_slug,
    revision_get_for_user,
    revision_list,
    revision_text,
)
from ..services import doc_constraints_set, doc_create, doc_revision_create
from .serializers import (
    DesignDocFieldsSerializer,
    DesignDocSerializer,
    DocRevisionSummarySerializer,
)


class DocDetailSerializer(DesignDocSerializer):
    """The shape of `doc_detail_body` (declared for the schema)."""

    revisions = DocRevisionSummarySerializer(many=True)

    class Meta(DesignDocSerializer.Meta):
        fields = (*DesignDocSerializer.Meta.fields, "revisions")


def doc_detail_body(detail: DocDetail) -> dict[str, Any]:
    """A document with its revisions and the latest one's id and number."""
    latest = detail.latest
    return {
        **DesignDocFieldsSerializer(detail.doc).data,
        "latest_revision": latest.pk if latest else None,
        "latest_revision_number": latest.number if latest else None,
        "revisions": DocRevisionSummarySerializer(detail.revisions, many=True).data,
    }


class DocListCreateApi(ListAPIView[DesignDoc]):
    """Every design document (any signed-in account may review any of them); create one."""

    serializer_class = DesignDocSerializer

    class InputSerializer(StrictSerializer):
        title = serializers.CharField(max_length=TITLE_MAX_CHARS)
        body = serializers.CharField(trim_whitespace=False, help_text="Markdown.")
        question = serializers.CharField(required=False, allow_blank=True, allow_null=True)
        constraints = serializers.ListField(
            child=serializers.CharField(max_length=CONSTRAINT_MAX_CHARS), required=False
        )
        message = serializers.CharField(
            required=False, allow_blank=True, max_length=MESSAGE_MAX_CHARS
        )

    def get_queryset(self) -> QuerySet[DesignDoc]:
        return doc_list_visible(user=self.request.user)

    @extend_schema(request=InputSerializer, responses={201: DocDetailSerializer})
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        doc, _ = doc_create(
            actor=request_actor(request),
            title=data.validated_data["title"],
            body=data.validated_data["body"],
            question=question_from_slug(data.validated_data.get("question")),
            constraints=data.validated_data.get("constraints"),
            message=data.validated_data.get("message", ""),
        )
        return Response(doc_detail_body(doc_detail(doc=doc)), status=status.HTTP_201_CREATED)


class DocDetailApi(APIView):
    """A document with its revisions; its author may replace the pinned constraints."""

    class InputSerializer(StrictSerializer):
        constraints = serializers.ListField(
            child=serializers.CharField(max_length=CONSTRAINT_MAX_CHARS)
        )

    @extend_schema(responses=DocDetailSerializer)
    def get(self, request: Request, doc_id: int) -> Response:
        doc = doc_get_for_user(user=request.user, doc_id=doc_id)
        return Response(doc_detail_body(doc_detail(doc=doc)))

    @extend_schema(request=InputSerializer, responses=DocDetailSerializer)
    def patch(self, request: Request, doc_id: int) -> Response:
        doc = doc_get_for_user(user=request.user, doc_id=doc_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        doc = doc_constraints_set(
            actor=request_actor(request), doc=doc, constraints=data.validated_data["constraints"]
        )
        return Response(doc_detail_body(doc_detail(doc=doc)))


class DocRevisionListCreateApi(APIView):
    """A document's revisions; its author saves a new one (re-anchoring follows)."""

    class InputSerializer(StrictSerializer):
        body = serializers.CharField(trim_whitespace=False, help_text="Markdown.")
        message = serializers.CharField(
            required=False, allow_blank=True, max_length=MESSAGE_MAX_CHARS
        )

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
            actor=request_actor(request),
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
