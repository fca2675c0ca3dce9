"""Prompts, versions, diff, labels and revert."""

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.generics import ListAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from common.api import StrictPageNumberPagination
from common.auth import request_actor
from common.fields import StrictSerializer
from common.limits import MESSAGE_MAX_CHARS, TITLE_MAX_CHARS
from questionbank.models import Question
from questionbank.selectors import question_by_slug

from ..exceptions import ContentInvalid, NotFound
from ..models import (
    LABEL_NAME_MAX_CHARS,
    OVERRIDE_REASON_MAX_CHARS,
    Label,
    Prompt,
    PromptVersion,
    Role,
)
from ..selectors import (
    label_list,
    label_main,
    prompt_access_get_for_user,
    prompt_get_for_user,
    prompt_list_visible,
    version_get_for_user,
    version_in_prompt,
    version_tree,
)
from ..services import (
    SaveResult,
    access_log_grant_use,
    label_move,
    label_protect_set,
    prompt_create,
    prompt_update,
    prompt_version_create,
    prompt_version_revert,
)
from ..text.diffing import text_diff_as_json
from ..text.ranges import version_content_diff

# The largest id a row can have (BigAutoField): the bound of an id given as a parameter.
ID_MAX = 2**63 - 1


def _parent_in(prompt: Prompt, version_id: Any, field: str = "parent") -> PromptVersion:
    """A version id from the request body: unknown or foreign ids are a 400 on that field."""
    try:
        return version_in_prompt(prompt=prompt, version_id=version_id)
    except NotFound:
        raise ContentInvalid(f"{field}: no such version in this prompt.", field=field) from None


def _saved(result: SaveResult) -> Response:
    """201 with the new version, or 200 with the existing twin when nothing new was saved
    (the shape of `PromptVersionListCreateApi.CreatedSerializer`)."""
    body = {
        **VersionSummarySerializer(result.version).data,
        "created": result.created,
        "main_moved": result.main_moved,
        "unchanged": result.unchanged,
    }
    return Response(body, status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK)


def _question(slug: str | None) -> Question | None:
    if not slug:
        return None
    try:
        return question_by_slug(slug=slug)
    except NotFound:
        raise ContentInvalid(f"question: unknown question {slug!r}.", field="question") from None


class VersionSummarySerializer(serializers.ModelSerializer[PromptVersion]):
    author = serializers.CharField(source="author.username")
    parent = serializers.IntegerField(source="parent_id", allow_null=True)  # type: ignore[assignment]

    class Meta:
        model = PromptVersion
        fields: tuple[str, ...] = (
            "id",
            "parent",
            "number",
            "author",
            "created_at",
            "message",
            "content_hash",
        )


class LabelSerializer(serializers.ModelSerializer[Label]):
    version = serializers.IntegerField(source="version_id")

    class Meta:
        model = Label
        fields: tuple[str, ...] = ("name", "version", "protected", "gated", "updated_at")


class PromptOutputSerializer(serializers.ModelSerializer[Prompt]):
    owner = serializers.CharField(source="owner.username")
    question: "serializers.SlugRelatedField[Question]" = serializers.SlugRelatedField(
        slug_field="slug", read_only=True
    )

    class Meta:
        model = Prompt
        fields: tuple[str, ...] = ("id", "title", "owner", "question", "created_at")


class PromptListCreateApi(ListAPIView[Prompt]):
    serializer_class = PromptOutputSerializer

    class InputSerializer(StrictSerializer):
        title = serializers.CharField(max_length=TITLE_MAX_CHARS)
        question = serializers.CharField(required=False, allow_blank=True, allow_null=True)
        content = serializers.JSONField()
        message = serializers.CharField(
            required=False, allow_blank=True, max_length=MESSAGE_MAX_CHARS
        )

    class CreatedSerializer(PromptOutputSerializer):
        root_version = serializers.IntegerField()

        class Meta(PromptOutputSerializer.Meta):
            fields = (*PromptOutputSerializer.Meta.fields, "root_version")

    def get_queryset(self) -> QuerySet[Prompt]:
        return prompt_list_visible(
            user=self.request.user, search=self.request.query_params.get("q", "")[:TITLE_MAX_CHARS]
        )

    @extend_schema(
        parameters=[OpenApiParameter("q", OpenApiTypes.STR, description="Title contains.")]
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(request=InputSerializer, responses={201: CreatedSerializer})
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        actor = request_actor(request)
        prompt, root = prompt_create(
            actor=actor,
            title=data.validated_data["title"],
            content=data.validated_data["content"],
            question=_question(data.validated_data.get("question")),
            message=data.validated_data.get("message", ""),
        )
        body = {**PromptOutputSerializer(prompt).data, "root_version": root.pk}
        return Response(body, status=status.HTTP_201_CREATED)


def _prompt_body(prompt: Prompt) -> dict[str, Any]:
    """A prompt with its labels: the body of GET and PATCH `/prompts/{id}/`."""
    labels = LabelSerializer(label_list(prompt=prompt), many=True).data
    return {**PromptOutputSerializer(prompt).data, "labels": labels}


class PromptDetailApi(APIView):
    class OutputSerializer(PromptOutputSerializer):
        labels = LabelSerializer(many=True)

        class Meta(PromptOutputSerializer.Meta):
            fields = (*PromptOutputSerializer.Meta.fields, "labels")

    @extend_schema(responses=OutputSerializer)
    def get(self, request: Request, prompt_id: int) -> Response:
        access = prompt_access_get_for_user(user=request.user, prompt_id=prompt_id)
        access_log_grant_use(
            prompt_id=access.prompt.pk,
            grant_id=access.grant_id,
            user=request_actor(request),
            path="api",
        )
        return Response(_prompt_body(access.prompt))

    class UpdateSerializer(StrictSerializer):
        title = serializers.CharField(required=False, max_length=TITLE_MAX_CHARS)
        archived = serializers.BooleanField(
            required=False, help_text="Archived prompts are hidden from lists, never deleted."
        )

    @extend_schema(request=UpdateSerializer, responses=OutputSerializer)
    def patch(self, request: Request, prompt_id: int) -> Response:
        """Rename or archive/unarchive (owner only)."""
        prompt = prompt_get_for_user(user=request.user, prompt_id=prompt_id, min_role=Role.OWNER)
        data = self.UpdateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        prompt_update(
            actor=request_actor(request),
            prompt=prompt,
            title=data.validated_data.get("title"),
            archived=data.validated_data.get("archived"),
        )
        return Response(_prompt_body(prompt))


class TreePagination(StrictPageNumberPagination):
    page_size = 500
    page_size_query_param = "page_size"
    max_page_size = 1000


class PromptVersionListCreateApi(ListAPIView[PromptVersion]):
    """The version tree (GET, in save order) and saving a new version (POST)."""

    serializer_class = VersionSummarySerializer
    pagination_class = TreePagination

    class InputSerializer(StrictSerializer):
        parent = serializers.IntegerField()  # type: ignore[assignment]
        content = serializers.JSONField()
        message = serializers.CharField(
            required=False, allow_blank=True, max_length=MESSAGE_MAX_CHARS
        )

    class CreatedSerializer(VersionSummarySerializer):
        created = serializers.BooleanField()
        main_moved = serializers.BooleanField()
        unchanged = serializers.BooleanField(
            help_text="The content equals the parent's: nothing was saved; this is the parent."
        )

        class Meta(VersionSummarySerializer.Meta):
            fields = (*VersionSummarySerializer.Meta.fields, "created", "main_moved", "unchanged")

    def get_queryset(self) -> QuerySet[PromptVersion]:
        prompt = prompt_get_for_user(user=self.request.user, prompt_id=self.kwargs["prompt_id"])
        return version_tree(prompt=prompt)

    @extend_schema(
        request=InputSerializer,
        responses={201: CreatedSerializer, 200: CreatedSerializer},
        description="Always a child of `parent`. Identical content under the same parent "
        "returns the existing version with 200; content identical to the parent's creates "
        "nothing and returns the parent with 200 (`unchanged`: true).",
    )
    def post(self, request: Request, prompt_id: int) -> Response:
        prompt = prompt_get_for_user(user=request.user, prompt_id=prompt_id, min_role=Role.EDITOR)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        actor = request_actor(request)
        parent = _parent_in(prompt, data.validated_data["parent"])
        result = prompt_version_create(
            actor=actor,
            prompt=prompt,
            parent=parent,
            content=data.validated_data["content"],
            message=data.validated_data.get("message", ""),
        )
        return _saved(result)


class TextDiffSerializer(serializers.Serializer[dict[str, Any]]):
    """One text's changes (`playground.text.diffing.text_diff_as_json`)."""

    field = serializers.CharField(help_text="`system` or `messages.N.content`.")
    role_before = serializers.CharField(allow_null=True)
    role_after = serializers.CharField(allow_null=True)
    added = serializers.IntegerField()
    removed = serializers.IntegerField()
    truncated = serializers.BooleanField()
    more = serializers.IntegerField()
    lines_before = serializers.IntegerField(help_text="Unchanged lines before `rows`.")
    chars_after = serializers.IntegerField(help_text="Unchanged characters after `rows`.")
    cut = serializers.BooleanField(help_text="The changed region was longer than is diffed.")
    rest_old_lines = serializers.IntegerField(
        help_text="A cut diff: lines of the older text's changed region past the cut (counted)."
    )
    rest_new_lines = serializers.IntegerField(
        help_text="A cut diff: lines of the newer text's changed region past the cut (counted)."
    )
    rows = serializers.ListField(child=serializers.DictField())


# `from` is a Python keyword, so the class is built from a dict of its fields.
VersionDiffSerializer = type(
    "VersionDiffSerializer",
    (serializers.Serializer,),
    {
        "__doc__": "Two versions of one prompt compared: text diffs and field changes.",
        "from": serializers.IntegerField(help_text="The `against` version."),
        "to": serializers.IntegerField(),
        "texts": TextDiffSerializer(many=True, help_text="Only the texts that changed."),
        "changes": serializers.ListField(
            child=serializers.DictField(), help_text="Changed fields other than texts."
        ),
    },
)


class VersionDiffApi(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter(
                "against",
                {"type": "integer", "minimum": 1, "maximum": ID_MAX},
                required=True,
                description="The other version of this prompt (404 when there is none).",
            ),
            OpenApiParameter("limit", OpenApiTypes.INT, required=False),
        ],
        responses=VersionDiffSerializer,
    )
    def get(self, request: Request, version_id: int) -> Response:
        version = version_get_for_user(user=request.user, version_id=version_id)
        against_raw = request.query_params.get("against")
        if not against_raw:
            raise ContentInvalid(
                "against: required (the id of the other version).", field="against"
            )
        if (
            not against_raw.isascii()
            or not against_raw.isdigit()
            or not 1 <= int(against_raw) <= ID_MAX
        ):
            raise ContentInvalid(f"against: must be a version id (1 to {ID_MAX}).", field="against")
        # Like every id: a version that is not there, or not of this prompt, is a 404.
        other = version_in_prompt(prompt=version.prompt, version_id=against_raw)
        try:
            limit = max(1, min(int(request.query_params.get("limit", 400)), 100_000))
        except ValueError:
            raise ContentInvalid("limit: must be a whole number.", field="limit") from None
        diff = version_content_diff(before=other, after=version, limit=limit)
        return Response(
            {
                "from": other.pk,
                "to": version.pk,
                "texts": [text_diff_as_json(t) for t in diff["texts"] if t.changed],
                "changes": diff["changes"],
                "complete": diff["complete"],
            }
        )


class VersionRevertApi(APIView):
    class InputSerializer(StrictSerializer):
        parent = serializers.IntegerField(  # type: ignore[assignment]
            required=False, help_text="Child of this version; default: where `main` points."
        )

    @extend_schema(
        request=InputSerializer,
        responses={
            201: PromptVersionListCreateApi.CreatedSerializer,
            200: PromptVersionListCreateApi.CreatedSerializer,
        },
        description="201 with the new version on top of `parent`. 200 when nothing was saved: "
        "the content equals `parent`'s (`unchanged`: true, the body is `parent`) or an "
        "identical child of `parent` exists (`created`: false, the body is that child).",
    )
    def post(self, request: Request, version_id: int) -> Response:
        target = version_get_for_user(
            user=request.user, version_id=version_id, min_role=Role.EDITOR
        )
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        prompt = target.prompt
        if "parent" in data.validated_data:
            parent = _parent_in(prompt, data.validated_data["parent"])
        else:
            main = label_main(prompt=prompt)
            if main is None:
                raise ContentInvalid(
                    "parent: required (this prompt has no main label).", field="parent"
                )
            parent = main.version
        result = prompt_version_revert(
            actor=request_actor(request), prompt=prompt, target=target, parent=parent
        )
        return _saved(result)


class LabelListCreateApi(APIView):
    class InputSerializer(StrictSerializer):
        name = serializers.SlugField(max_length=LABEL_NAME_MAX_CHARS)
        version = serializers.IntegerField()
        expected = serializers.IntegerField(required=False, allow_null=True)
        override = serializers.CharField(
            required=False,
            allow_blank=True,
            max_length=OVERRIDE_REASON_MAX_CHARS,
            help_text="Owner only: move a gated label directly, for this stated reason (kept "
            "in the move log). Without it a gated label answers 409.",
        )

    @extend_schema(responses=LabelSerializer(many=True))
    def get(self, request: Request, prompt_id: int) -> Response:
        prompt = prompt_get_for_user(user=request.user, prompt_id=prompt_id)
        return Response(LabelSerializer(label_list(prompt=prompt), many=True).data)

    @extend_schema(request=InputSerializer, responses={200: LabelSerializer})
    def post(self, request: Request, prompt_id: int) -> Response:
        prompt = prompt_get_for_user(user=request.user, prompt_id=prompt_id, min_role=Role.EDITOR)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        return Response(
            _label_move(request, prompt, data.validated_data["name"], data.validated_data)
        )


class LabelMoveApi(APIView):
    class InputSerializer(StrictSerializer):
        version = serializers.IntegerField()
        expected = serializers.IntegerField(
            required=False,
            allow_null=True,
            help_text="Compare-and-set: the version the label must point at now (null: new).",
        )
        override = serializers.CharField(
            required=False,
            allow_blank=True,
            max_length=OVERRIDE_REASON_MAX_CHARS,
            help_text="Owner only: move a gated label directly, for this stated reason (kept "
            "in the move log). Without it a gated label answers 409.",
        )

    @extend_schema(request=InputSerializer, responses={200: LabelSerializer})
    def put(self, request: Request, prompt_id: int, name: str) -> Response:
        prompt = prompt_get_for_user(user=request.user, prompt_id=prompt_id, min_role=Role.EDITOR)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        return Response(_label_move(request, prompt, name, data.validated_data))

    class ProtectSerializer(StrictSerializer):
        protected = serializers.BooleanField(help_text="Only the owner may move a protected label.")

    @extend_schema(request=ProtectSerializer, responses={200: LabelSerializer})
    def patch(self, request: Request, prompt_id: int, name: str) -> Response:
        """Protect or unprotect a label (owner only)."""
        prompt = prompt_get_for_user(user=request.user, prompt_id=prompt_id, min_role=Role.OWNER)
        data = self.ProtectSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        label = label_protect_set(
            actor=request_actor(request),
            prompt=prompt,
            name=name,
            protected=data.validated_data["protected"],
        )
        return Response(LabelSerializer(label).data)


def _label_move(
    request: Request, prompt: Prompt, name: str, data: dict[str, Any]
) -> dict[str, Any]:
    expected_given = "expected" in data
    expected = None
    if expected_given and data["expected"] is not None:
        expected = _parent_in(prompt, data["expected"], field="expected")
    label = label_move(
        actor=request_actor(request),
        prompt=prompt,
        name=name,
        version=_parent_in(prompt, data["version"], field="version"),
        expected=expected,
        expected_given=expected_given,
        override=data.get("override", ""),
    )
    return LabelSerializer(label).data
