"""Uploads of large texts: create one (`POST /uploads/`), and Redline's own signed PUT endpoint
used in the embedded default (S3 deployments get a presigned URL instead)."""

from typing import Any

from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from common.auth import request_actor
from common.fields import StrictSerializer
from common.schema import ApiErrorSerializer

from ..text.uploads import SHA256_HEX_PATTERN, upload_create, upload_receive


class UploadCreateApi(APIView):
    """Start an upload: say how many bytes and their SHA-256, get where to send them."""

    class InputSerializer(StrictSerializer):
        size = serializers.IntegerField(
            min_value=0, help_text="Bytes of the UTF-8 text (at most UPLOAD_MAX_BYTES)."
        )
        sha256 = serializers.RegexField(
            SHA256_HEX_PATTERN, help_text="SHA-256 of those bytes, 64 hex digits."
        )

    class OutputSerializer(serializers.Serializer[dict[str, Any]]):
        id = serializers.UUIDField(help_text='Name it in a version as {"upload": id}.')
        url = serializers.URLField(help_text="Send the bytes here, once, before expires_in.")
        method = serializers.CharField(help_text="PUT")
        headers = serializers.DictField(
            child=serializers.CharField(),
            help_text="Send exactly these headers (browsers set Content-Length themselves).",
        )
        expires_in = serializers.IntegerField(help_text="Seconds the URL and the upload last.")

    @extend_schema(
        request=InputSerializer,
        responses={201: OutputSerializer},
        description="The URL is a presigned S3 PUT (bound to the size and SHA-256) when S3 is "
        "configured, else Redline's own signed PUT endpoint. The server checks size, SHA-256 "
        "and UTF-8 itself when a version names the upload; an upload is used at most once, by "
        "its creator, and unused ones are deleted when they expire.",
    )
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        target = upload_create(
            actor=request_actor(request),
            size=data.validated_data["size"],
            sha256=data.validated_data["sha256"],
        )
        url = target.url or request.build_absolute_uri(
            reverse("api-upload-put", kwargs={"token": target.token})
        )
        body = {
            "id": target.upload_id,
            "url": url,
            "method": target.method,
            "headers": target.headers,
            "expires_in": target.expires_in,
        }
        return Response(body, status=status.HTTP_201_CREATED)


class UploadPutApi(APIView):
    """Redline's own upload endpoint (embedded default): the signed URL is the credential."""

    authentication_classes: list[type] = []
    permission_classes = [AllowAny]

    class StoredSerializer(serializers.Serializer[dict[str, Any]]):
        id = serializers.UUIDField()
        size = serializers.IntegerField()

    @extend_schema(
        request={"application/octet-stream": OpenApiTypes.BINARY},
        responses={
            200: StoredSerializer,
            400: OpenApiResponse(
                ApiErrorSerializer, description="Content-Length is not the declared size."
            ),
            404: OpenApiResponse(
                ApiErrorSerializer, description="Unknown, expired or used upload URL."
            ),
        },
        description="The body is streamed to storage without being held in memory; it must be "
        "exactly the declared size.",
    )
    def put(self, request: Request, token: str) -> Response:
        # The raw WSGI stream: DRF's parsers (and request.body) would read it into memory.
        raw = request._request
        upload = upload_receive(
            token=token, stream=raw, content_length=raw.META.get("CONTENT_LENGTH")
        )
        return Response({"id": str(upload.pk), "size": upload.size})
