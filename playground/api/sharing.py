"""Share links, per-account grants, the shared-version endpoint and the access log."""

from typing import Any

from django.http import StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.urls import reverse
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotAuthenticated
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.models import USERNAME_MAX_CHARS
from common.auth import request_actor
from common.fields import StrictSerializer
from common.jsonstream import json_stream

from ..exceptions import ContentInvalid, NotFound
from ..models import (
    LABEL_NAME_MAX_CHARS,
    AccessGrant,
    AccessLogEntry,
    Role,
    ShareLink,
)
from ..selectors import (
    access_log,
    grant_list,
    prompt_get_for_user,
    share_link_get_for_user,
    share_link_list,
    version_in_prompt,
)
from ..services import grant_revoke, grant_set, share_link_create, share_link_revoke
from ..sharing.fetch import fetch_content
from ..sharing.links import LoginRequired, shared_open
from .fetch import FULL_PARAMETER, ContentOutputSerializer, full_requested


class LinkSerializer(serializers.ModelSerializer[ShareLink]):
    """A link as listed: never its token (only the short hint)."""

    version = serializers.IntegerField(source="version_id", allow_null=True)
    label = serializers.CharField(source="label_name")  # type: ignore[assignment]
    created_by = serializers.CharField(source="created_by.username")
    status = serializers.SerializerMethodField()

    class Meta:
        model = ShareLink
        fields: tuple[str, ...] = (
            "id",
            "token_hint",
            "access",
            "version",
            "label",
            "created_by",
            "created_at",
            "expires_at",
            "revoked_at",
            "status",
        )

    def get_status(self, link: ShareLink) -> str:
        if link.revoked_at:
            return "revoked"
        if link.expires_at and link.expires_at <= timezone.now():
            return "expired"
        return "active"


class LinkListCreateApi(APIView):
    class InputSerializer(StrictSerializer):
        access = serializers.ChoiceField(choices=ShareLink.Access.values)
        version = serializers.IntegerField(required=False, allow_null=True)
        label = serializers.SlugField(  # type: ignore[assignment]
            required=False, allow_blank=True, max_length=LABEL_NAME_MAX_CHARS
        )
        expires_at = serializers.DateTimeField(required=False, allow_null=True)

    class CreatedSerializer(LinkSerializer):
        url = serializers.CharField()

        class Meta(LinkSerializer.Meta):
            fields = (*LinkSerializer.Meta.fields, "url")

    @extend_schema(responses=LinkSerializer(many=True))
    def get(self, request: Request, prompt_id: int) -> Response:
        prompt = prompt_get_for_user(user=request.user, prompt_id=prompt_id, min_role=Role.OWNER)
        return Response(LinkSerializer(share_link_list(prompt=prompt), many=True).data)

    @extend_schema(
        request=InputSerializer,
        responses={201: CreatedSerializer},
        description="The `url` (with the token) is returned only here, once.",
    )
    def post(self, request: Request, prompt_id: int) -> Response:
        prompt = prompt_get_for_user(user=request.user, prompt_id=prompt_id, min_role=Role.OWNER)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        version = None
        if data.validated_data.get("version") is not None:
            try:
                version = version_in_prompt(
                    prompt=prompt, version_id=data.validated_data["version"]
                )
            except NotFound:
                raise ContentInvalid(
                    "version: no such version in this prompt.", field="version"
                ) from None
        link, token = share_link_create(
            actor=request_actor(request),
            prompt=prompt,
            access=data.validated_data["access"],
            version=version,
            label_name=data.validated_data.get("label") or "",
            expires_at=data.validated_data.get("expires_at"),
        )
        url = request.build_absolute_uri(reverse("shared-page", args=[token]))
        return Response({**LinkSerializer(link).data, "url": url}, status=status.HTTP_201_CREATED)


class LinkRevokeApi(APIView):
    @extend_schema(responses={204: None})
    def delete(self, request: Request, link_id: int) -> Response:
        link = share_link_get_for_user(user=request.user, link_id=link_id)
        share_link_revoke(actor=request_actor(request), link=link)
        return Response(status=status.HTTP_204_NO_CONTENT)


class GrantSerializer(serializers.ModelSerializer[AccessGrant]):
    username = serializers.CharField(source="user.username")
    granted_by = serializers.CharField(source="granted_by.username")

    class Meta:
        model = AccessGrant
        fields: tuple[str, ...] = ("username", "role", "granted_by", "created_at")


class GrantListCreateApi(APIView):
    class InputSerializer(StrictSerializer):
        username = serializers.CharField(max_length=USERNAME_MAX_CHARS)
        role = serializers.ChoiceField(choices=[Role.VIEWER, Role.EDITOR])

    @extend_schema(responses=GrantSerializer(many=True))
    def get(self, request: Request, prompt_id: int) -> Response:
        prompt = prompt_get_for_user(user=request.user, prompt_id=prompt_id, min_role=Role.OWNER)
        return Response(GrantSerializer(grant_list(prompt=prompt), many=True).data)

    @extend_schema(request=InputSerializer, responses={201: GrantSerializer})
    def post(self, request: Request, prompt_id: int) -> Response:
        prompt = prompt_get_for_user(user=request.user, prompt_id=prompt_id, min_role=Role.OWNER)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        grant = grant_set(actor=request_actor(request), prompt=prompt, **data.validated_data)
        return Response(GrantSerializer(grant).data, status=status.HTTP_201_CREATED)


class GrantRevokeApi(APIView):
    @extend_schema(responses={204: None})
    def delete(self, request: Request, prompt_id: int, username: str) -> Response:
        prompt = prompt_get_for_user(user=request.user, prompt_id=prompt_id, min_role=Role.OWNER)
        if not grant_revoke(actor=request_actor(request), prompt=prompt, username=username):
            raise NotFound
        return Response(status=status.HTTP_204_NO_CONTENT)


class AccessLogApi(APIView):
    class OutputSerializer(serializers.ModelSerializer[AccessLogEntry]):
        user = serializers.CharField(source="user.username", allow_null=True, default=None)
        link = serializers.CharField(source="link.token_hint", allow_null=True, default=None)

        class Meta:
            model = AccessLogEntry
            fields: tuple[str, ...] = ("at", "via", "user", "link", "path")

    @extend_schema(responses=OutputSerializer(many=True))
    def get(self, request: Request, prompt_id: int) -> Response:
        prompt = prompt_get_for_user(user=request.user, prompt_id=prompt_id, min_role=Role.OWNER)
        return Response(self.OutputSerializer(access_log(prompt=prompt), many=True).data)


class SharedVersionApi(APIView):
    """The version a link shows, per the link's access rules. Long texts come as heads whose
    `text_url` is the link's own range URL (with `version=`, so a label link never mixes two
    versions' ranges) — never the owner's; `?full=1` streams every text whole."""

    permission_classes = [AllowAny]

    class OutputSerializer(serializers.Serializer[dict[str, Any]]):
        id = serializers.IntegerField()
        number = serializers.IntegerField()
        parent = serializers.IntegerField(allow_null=True)  # type: ignore[assignment]
        author = serializers.CharField()
        created_at = serializers.DateTimeField()
        message = serializers.CharField(allow_blank=True)
        content_hash = serializers.CharField()
        prompt_title = serializers.CharField()
        content = ContentOutputSerializer()
        access = serializers.ChoiceField(choices=ShareLink.Access.choices)
        scope = serializers.DictField(
            help_text='What the link covers: `{"version": id}` or `{"label": name}`.'
        )

    @extend_schema(parameters=[FULL_PARAMETER], responses=OutputSerializer, auth=[])
    def get(self, request: Request, token: str) -> HttpResponseBase:
        try:
            link, version = shared_open(request=request, token=token, path="api")
        except LoginRequired:
            raise NotAuthenticated("Log in to open this link.") from None
        full = full_requested(request)
        content = fetch_content(content_hash=version.content_hash, version=version)
        ranges = reverse("api-shared-text", args=[token])
        body = {
            "id": version.pk,
            "number": version.number,
            "parent": version.parent_id,
            "author": version.author.username,
            "created_at": version.created_at,
            "message": version.message,
            "content_hash": version.content_hash,
            "prompt_title": version.prompt.title,
            "content": (
                content.as_full_json()
                if full
                else content.as_json(
                    text_url=lambda field: f"{ranges}?field={field}&version={version.pk}"
                )
            ),
            "access": link.access,
            "scope": (
                {"label": link.label_name} if link.label_name else {"version": link.version_id}
            ),
        }
        if full and content.truncated:
            return StreamingHttpResponse(json_stream(body), content_type="application/json")
        return Response(body)
