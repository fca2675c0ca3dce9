"""Long texts of a version, a range at a time, and whole as a download.

`GET /api/v1/versions/{id}/text/` and `GET /api/v1/shared/{token}/text/` answer the same body,
`{field, offset, length, total, text}`, counted in characters (Unicode code points). Both check
access in the request itself, on every range: the version through the caller's role, the shared
variant through the link (live, not revoked or expired, and covering that version).
"""

from typing import Any

from django.conf import settings
from django.http import HttpResponseRedirect, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.utils.cache import get_conditional_response
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotAuthenticated
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from common.auth import request_actor

from ..exceptions import ContentInvalid, NotFound
from ..models import PromptVersion
from ..selectors import version_access_get_for_user
from ..services import access_log_grant_use
from ..sharing.links import LoginRequired, shared_open
from ..text.ranges import (
    FIELD_PATTERN,
    TextRange,
    version_text_download,
    version_text_field,
    version_text_range,
)

# Offsets past any text the store could hold are refused before they reach a query.
_MAX_OFFSET = 2**40


class TextRangeSerializer(serializers.Serializer[dict[str, Any]]):
    field = serializers.CharField(help_text="`system` or `messages.N.content`.")
    offset = serializers.IntegerField(help_text="First character returned (code points).")
    length = serializers.IntegerField(help_text="Characters returned (0 at the end).")
    total = serializers.IntegerField(help_text="Characters in the whole field.")
    text = serializers.CharField(allow_blank=True)


def _whole(request: Request, name: str, default: int, maximum: int) -> int:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 15:
        raise ContentInvalid(f"{name}: a whole number from 0 to {maximum}.", field=name)
    value = int(raw)
    if value > maximum:
        raise ContentInvalid(f"{name}: at most {maximum}.", field=name)
    return value


def _range_query(request: Request) -> tuple[str, int, int]:
    """`field`, `offset` and `length` from the query string; 400 naming the bad one."""
    field = request.query_params.get("field")
    if not field:
        raise ContentInvalid("field: required (`system` or `messages.N.content`).", field="field")
    offset = _whole(request, "offset", 0, _MAX_OFFSET)
    length = _whole(
        request,
        "length",
        int(settings.PLAYGROUND_TEXT_PAGE_CHARS),
        int(settings.PLAYGROUND_TEXT_RANGE_MAX_CHARS),
    )
    return field, offset, length


def _shared_version(request: Request, token: str, path: str) -> PromptVersion:
    """The version a live link shows now; with `?version=`, only if that is it (else 404), so a
    reader of a label link never mixes the ranges of two versions."""
    try:
        _, version = shared_open(request=request, token=token, path=path, thin_log=True)
    except LoginRequired:
        raise NotAuthenticated("Log in to open this link.") from None
    wanted = request.query_params.get("version")
    if wanted not in (None, "", str(version.pk)):
        raise NotFound
    return version


def _download(version: PromptVersion, field: str) -> HttpResponseBase:
    download = version_text_download(version=version, field=field)
    if download.url is not None:
        # Valid SHARE_PRESIGNED_TTL seconds: the one window a revocation cannot close.
        redirect = HttpResponseRedirect(download.url)
        redirect["Cache-Control"] = "no-store"
        return redirect
    response = StreamingHttpResponse(
        download.stream or iter(()), content_type="text/plain; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="{download.filename}"'
    response["X-Content-Type-Options"] = "nosniff"
    return response


_RANGE_PARAMETERS = [
    OpenApiParameter(
        "field",
        OpenApiTypes.STR,
        required=True,
        pattern=FIELD_PATTERN,
        description="`system` or `messages.N.content` (N counts from 0; a message the version "
        "does not have is a 400).",
    ),
    OpenApiParameter(
        "offset",
        {"type": "integer", "minimum": 0, "maximum": _MAX_OFFSET},
        description="First character (default 0; past the end of the text is a 400).",
    ),
    OpenApiParameter(
        "length",
        {"type": "integer", "minimum": 0, "maximum": int(settings.PLAYGROUND_TEXT_RANGE_MAX_CHARS)},
        description="Characters wanted (default PLAYGROUND_TEXT_PAGE_CHARS, at most "
        "PLAYGROUND_TEXT_RANGE_MAX_CHARS).",
    ),
]
_VERSION_PARAMETER = OpenApiParameter(
    "version",
    {"type": "integer", "minimum": 1},
    description="The version the reader is on; 404 unless the link shows it now.",
)
_DOWNLOAD = OpenApiResponse(OpenApiTypes.STR, description="The whole text, text/plain UTF-8.")
_PRESIGNED = OpenApiResponse(
    description="With S3 configured and a long text: a redirect to a presigned GET of it, "
    "valid SHARE_PRESIGNED_TTL seconds."
)


class VersionTextApi(APIView):
    """A range of one long text of a version. ETag: the text's hash and the range asked for."""

    @extend_schema(
        parameters=_RANGE_PARAMETERS,
        responses={200: TextRangeSerializer, 304: None},
        description="Characters are Unicode code points. `length` is what was returned "
        "(less than asked at the end of the text), `total` the whole field's length.",
    )
    def get(self, request: Request, version_id: int) -> HttpResponseBase:
        access = version_access_get_for_user(user=request.user, version_id=version_id)
        field, offset, length = _range_query(request)
        version = access.version
        sha = version_text_field(version=version, field=field).sha
        access_log_grant_use(
            prompt_id=version.prompt_id,
            grant_id=access.access.grant_id,
            user=request_actor(request),
            path="text",
            throttle=True,
        )
        # Checked only after access: a revoked reader gets 404, never 304.
        etag = f'"{sha}-{offset}-{length}"'
        response = get_conditional_response(request, etag=etag) or Response(
            version_text_range(version=version, field=field, offset=offset, length=length).as_json()
        )
        response.headers["ETag"] = etag
        response.headers["Cache-Control"] = "private, no-cache"
        return response


class VersionTextDownloadApi(APIView):
    """One text of a version, whole, as a file."""

    @extend_schema(
        parameters=_RANGE_PARAMETERS[:1],
        responses={(200, "text/plain"): _DOWNLOAD, 302: _PRESIGNED},
    )
    def get(self, request: Request, version_id: int) -> HttpResponseBase:
        version = version_access_get_for_user(user=request.user, version_id=version_id).version
        field = request.query_params.get("field", "")
        return _download(version, field)


class SharedTextApi(APIView):
    """A range of one long text of the version a share link shows (the link is checked on
    every range: revoked or expired links answer 404 at once)."""

    permission_classes = [AllowAny]

    @extend_schema(
        parameters=[*_RANGE_PARAMETERS, _VERSION_PARAMETER],
        responses={200: TextRangeSerializer},
        auth=[],
    )
    def get(self, request: Request, token: str) -> Response:
        version = _shared_version(request, token, "text")
        field, offset, length = _range_query(request)
        found: TextRange = version_text_range(
            version=version, field=field, offset=offset, length=length
        )
        return Response(found.as_json())


class SharedTextDownloadApi(APIView):
    """One text of the version a share link shows, whole, as a file."""

    permission_classes = [AllowAny]

    @extend_schema(
        parameters=[_RANGE_PARAMETERS[0], _VERSION_PARAMETER],
        responses={(200, "text/plain"): _DOWNLOAD, 302: _PRESIGNED},
        auth=[],
    )
    def get(self, request: Request, token: str) -> HttpResponseBase:
        version = _shared_version(request, token, "download")
        return _download(version, request.query_params.get("field", ""))


__all__ = [
    "SharedTextApi",
    "SharedTextDownloadApi",
    "VersionTextApi",
    "VersionTextDownloadApi",
]
