"""Threads under annotations (replies, edits and their history), the author's view of a
document's reviews, the revision diff and the inbox."""

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.generics import ListAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from common.auth import request_actor
from common.fields import StrictSerializer
from common.selectors import MAX_ID

from ..exceptions import NotFound, ReviewsError
from ..models import AnnotationAnchor, BodyEdit, DocRevision, InboxItem, Reply, Review, Verdict
from ..pages.threads import anchor_pairs
from ..rendering import comment_render
from ..revision_diff import Block, Marker, Row, revision_diff_compute
from ..selectors import (
    DocReviewRow,
    annotation_get_for_user,
    body_edit_list,
    doc_get_for_user,
    doc_review_rows,
    inbox_list_for_user,
    inbox_unread_count,
    reply_get_for_user,
    reply_list,
    revision_diff_anchors,
    revision_get_for_user,
    revision_in_doc,
    revision_text,
)
from ..services import inbox_mark_read, reply_create, reply_update
from ..services.inbox import MARK_READ_MAX_IDS
from ..services.threads import REPLY_MAX_CHARS
from .fields import choice_field


class ReplySerializer(serializers.ModelSerializer[Reply]):
    annotation = serializers.IntegerField(source="annotation_id")
    author = serializers.CharField(source="author.username")
    body_html = serializers.SerializerMethodField(help_text="The body rendered, sanitised.")

    class Meta:
        model = Reply
        fields = ("id", "annotation", "author", "body", "body_html", "created_at", "edited_at")

    def get_body_html(self, reply: Reply) -> str:
        return comment_render(text=reply.body)


class BodyEditSerializer(serializers.ModelSerializer[BodyEdit]):
    class Meta:
        model = BodyEdit
        fields = ("body", "fields", "written_at", "replaced_at")


class AnnotationReplyListCreateApi(APIView):
    """The thread under an annotation, oldest first. Anyone who can see a submitted review may
    reply; a draft's annotations are private (404 for anyone but the reviewer, and replies open
    once it is submitted)."""

    class InputSerializer(StrictSerializer):
        body = serializers.CharField(max_length=REPLY_MAX_CHARS, help_text="Markdown.")

    @extend_schema(responses=ReplySerializer(many=True))
    def get(self, request: Request, annotation_id: int) -> Response:
        annotation = annotation_get_for_user(user=request.user, annotation_id=annotation_id)
        return Response(ReplySerializer(reply_list(annotation=annotation), many=True).data)

    @extend_schema(request=InputSerializer, responses={201: ReplySerializer})
    def post(self, request: Request, annotation_id: int) -> Response:
        annotation = annotation_get_for_user(user=request.user, annotation_id=annotation_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        reply = reply_create(
            actor=request_actor(request), annotation=annotation, body=data.validated_data["body"]
        )
        return Response(ReplySerializer(reply).data, status=status.HTTP_201_CREATED)


class ReplyDetailApi(APIView):
    """One reply; its author may edit the body (the earlier text is kept: see history/)."""

    class InputSerializer(StrictSerializer):
        body = serializers.CharField(max_length=REPLY_MAX_CHARS, help_text="Markdown.")

    @extend_schema(responses=ReplySerializer)
    def get(self, request: Request, reply_id: int) -> Response:
        reply = reply_get_for_user(user=request.user, reply_id=reply_id)
        return Response(ReplySerializer(reply).data)

    @extend_schema(request=InputSerializer, responses=ReplySerializer)
    def patch(self, request: Request, reply_id: int) -> Response:
        reply = reply_get_for_user(user=request.user, reply_id=reply_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        reply, _ = reply_update(
            actor=request_actor(request), reply=reply, body=data.validated_data["body"]
        )
        return Response(ReplySerializer(reply).data)


class ReplyHistoryApi(APIView):
    """Earlier texts of a reply, oldest first."""

    @extend_schema(responses=BodyEditSerializer(many=True))
    def get(self, request: Request, reply_id: int) -> Response:
        reply = reply_get_for_user(user=request.user, reply_id=reply_id)
        return Response(BodyEditSerializer(body_edit_list(reply=reply), many=True).data)


class AnnotationHistoryApi(APIView):
    """Earlier contents of an annotation (edited after its review was submitted), oldest
    first: the body and, in `fields`, severity, area, kind, tradeoff and constraint."""

    @extend_schema(responses=BodyEditSerializer(many=True))
    def get(self, request: Request, annotation_id: int) -> Response:
        annotation = annotation_get_for_user(user=request.user, annotation_id=annotation_id)
        return Response(BodyEditSerializer(body_edit_list(annotation=annotation), many=True).data)


class OpenCountsSerializer(serializers.Serializer[dict[str, int]]):
    blocker = serializers.IntegerField()
    major = serializers.IntegerField()
    minor = serializers.IntegerField()
    nit = serializers.IntegerField()


class DocReviewListApi(APIView):
    """Every submitted review of every revision of the document, plus the caller's own
    drafts, newest first, with the verdict and open issues by severity."""

    # A row, or the rows with many=True (DRF's stubs take a sequence for ModelSerializer only).
    class OutputSerializer(serializers.Serializer[DocReviewRow | list[DocReviewRow]]):
        id = serializers.IntegerField()
        revision = serializers.IntegerField(source="revision_id")
        revision_number = serializers.IntegerField()
        reviewer = serializers.CharField()
        status = choice_field(Review.Status.values, read_only=True)
        verdict = choice_field(["", *Verdict.values], read_only=True)
        created_at = serializers.DateTimeField()
        submitted_at = serializers.DateTimeField(allow_null=True)
        annotation_count = serializers.IntegerField()
        reply_count = serializers.IntegerField()
        open_counts = OpenCountsSerializer()
        open_total = serializers.IntegerField()

    @extend_schema(responses=OutputSerializer(many=True))
    def get(self, request: Request, doc_id: int) -> Response:
        doc = doc_get_for_user(user=request.user, doc_id=doc_id)
        return Response(
            self.OutputSerializer(doc_review_rows(user=request.user, doc=doc), many=True).data
        )


class RevisionRefSerializer(serializers.Serializer[DocRevision]):
    id = serializers.IntegerField(source="pk")
    number = serializers.IntegerField()


class BlockSerializer(serializers.Serializer[Block]):
    start = serializers.IntegerField()
    end = serializers.IntegerField()
    text = serializers.CharField()


class MarkerSerializer(serializers.Serializer[Marker]):
    annotation = serializers.IntegerField(source="annotation_id")
    review = serializers.IntegerField(source="review_id")
    side = serializers.ChoiceField(choices=["old", "new"])
    status = choice_field(AnnotationAnchor.Status.values, read_only=True)
    score = serializers.FloatField()
    start = serializers.IntegerField()
    end = serializers.IntegerField()


@extend_schema_field(
    {
        "type": "array",
        "items": {"type": "array", "items": {}, "minItems": 2, "maxItems": 2},
        "description": "Word-level diff of a changed paragraph: [op, text] with op -1, 0, 1.",
    }
)
class WordsField(serializers.ListField):
    pass


class DiffRowSerializer(serializers.Serializer[Row]):
    op = serializers.ChoiceField(choices=["equal", "insert", "delete", "change"])
    old = BlockSerializer(allow_null=True)
    new = BlockSerializer(allow_null=True)
    words = WordsField()
    annotations = MarkerSerializer(many=True, source="markers")


class RevisionDiffApi(APIView):
    """The diff of two revisions of one document, paragraph by paragraph (from `against` to
    this revision), with the annotations the caller can see placed on it: on the newer side
    where they land (`exact`, `moved`, `fuzzy`), on the older side where they were
    `orphaned`."""

    class OutputSerializer(serializers.Serializer[dict[str, Any]]):
        revision = RevisionRefSerializer(source="new_revision")
        against = RevisionRefSerializer(source="old_revision")
        added = serializers.IntegerField()
        removed = serializers.IntegerField()
        changed = serializers.IntegerField()
        unchanged = serializers.IntegerField()
        rows = DiffRowSerializer(many=True)
        annotations = MarkerSerializer(many=True, source="markers")

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "against",
                OpenApiTypes.INT,
                required=True,
                description="The other revision (of the same document): the older side.",
            )
        ],
        responses=OutputSerializer,
    )
    def get(self, request: Request, revision_id: int) -> Response:
        new = revision_get_for_user(user=request.user, revision_id=revision_id)
        old = revision_against(request, new)
        diff = revision_diff_compute(
            old_text=revision_text(revision=old),
            new_text=revision_text(revision=new),
            anchors=anchor_pairs(
                revision_diff_anchors(user=request.user, old=old, new=new), old, new
            ),
        )
        payload: dict[str, Any] = {
            "new_revision": new,
            "old_revision": old,
            "added": diff.added,
            "removed": diff.removed,
            "changed": diff.changed,
            "unchanged": diff.unchanged,
            "rows": diff.rows,
            "markers": diff.markers,
        }
        return Response(self.OutputSerializer(payload).data)


def revision_against(request: Request, new: Any) -> Any:
    """The `?against=` revision: required, and of the same document (else 400)."""
    raw = request.query_params.get("against")
    if not raw:
        raise ReviewsError("against: required (the id of the other revision).", field="against")
    try:
        return revision_in_doc(doc=new.doc, revision_id=raw)
    except NotFound:
        raise ReviewsError("against: not a revision of this document.", field="against") from None


class InboxItemSerializer(serializers.ModelSerializer[InboxItem]):
    kind = choice_field(InboxItem.Kind.values, read_only=True)
    actor = serializers.CharField(source="actor.username", allow_null=True, default=None)
    doc = serializers.IntegerField(source="review.revision.doc_id")
    doc_title = serializers.CharField(source="review.revision.doc.title")
    review = serializers.IntegerField(source="review_id")
    annotation = serializers.IntegerField(source="annotation_id", allow_null=True)
    reply = serializers.IntegerField(source="reply_id", allow_null=True)
    revision = serializers.IntegerField(source="revision_id", allow_null=True)
    unread = serializers.SerializerMethodField()

    class Meta:
        model = InboxItem
        fields = (
            "id",
            "kind",
            "actor",
            "doc",
            "doc_title",
            "review",
            "annotation",
            "reply",
            "revision",
            "created_at",
            "read_at",
            "unread",
        )

    def get_unread(self, item: InboxItem) -> bool:
        return item.read_at is None


class InboxListApi(ListAPIView[InboxItem]):
    """The caller's inbox, newest first: reviews submitted on their documents, replies to
    their annotations (and in threads they joined), their annotations orphaned by a new
    revision. `?unread=1` lists only unread items."""

    serializer_class = InboxItemSerializer

    def get_queryset(self) -> QuerySet[InboxItem]:
        items = inbox_list_for_user(user=self.request.user)
        values = self.request.query_params.getlist("unread")
        if len(values) > 1 or any(v not in ("true", "false", "1", "0") for v in values):
            raise ReviewsError("unread: must be true or false.", field="unread")
        if values and values[0] in ("1", "true"):
            items = items.filter(read_at__isnull=True)
        return items

    @extend_schema(
        parameters=[OpenApiParameter("unread", OpenApiTypes.BOOL, required=False)],
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)


class InboxReadApi(APIView):
    """Mark inbox items read: `ids`, or every unread item when `ids` is left out."""

    class InputSerializer(StrictSerializer):
        ids = serializers.ListField(
            child=serializers.IntegerField(min_value=1, max_value=MAX_ID),
            required=False,
            max_length=MARK_READ_MAX_IDS,
        )

    class OutputSerializer(serializers.Serializer[dict[str, Any]]):
        changed = serializers.IntegerField()
        unread = serializers.IntegerField()

    @extend_schema(request=InputSerializer, responses=OutputSerializer)
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        changed = inbox_mark_read(actor=request_actor(request), ids=data.validated_data.get("ids"))
        return Response(
            self.OutputSerializer(
                {"changed": changed, "unread": inbox_unread_count(user=request.user)}
            ).data
        )
