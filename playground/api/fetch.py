"""`GET /versions/{id}/` and the fetch by label: the API's hot path, as plain Django views.

Applications call the fetch by label on every prompt they send, so a GET is answered by a plain
function (`version_detail_view`, `label_version_view`): with an API key, one query for the key, the
version and the caller's access together (`playground.sharing.fetch`); with a session, the session's
user and one query. DRF's dispatch (request wrapping, negotiation, renderers) was most of what was
left of the request's time (bench/api_throughput.py). Everything else — other methods (405 for
versions, which are immutable), `Accept` headers asking for another representation — goes to the DRF
classes below, which also describe the operations in the schema and answer the same bodies. Errors
are rendered by the API's own exception handler (`common.api`), so both paths answer the same JSON
bytes.

This is the one request stack of the API beside DRF's, kept on purpose for its speed (issue
#35), and it answers exactly as the DRF class would, sharing DRF's code where it can:

- authentication: the same header parsing and key look-up (`api_key_from_request`,
  `key_row_use`), then an active session's user; the request's user is left as DRF leaves it;
- throttling: the class's own throttles run by DRF's `check_throttles` after authentication and
  before the access check (`common.api.api_throttles_check`), so a DRF throttle (on the class or in
  DEFAULT_THROTTLE_CLASSES) counts and refuses both paths' requests alike;
- the answer: DRF's `finalize_response` adds the class's headers (Allow, Vary: Accept), and the
  same log records and access-log rows follow.

`tests/playground/test_fetch_stacks.py` is the fence: it sends the same requests through both
stacks, with and without a throttle, and compares status, headers, body, log records,
access-log rows and the key's last use; it also fails when the classes' authentication or
permission classes change, which the fast path restates and would have to follow.

Caching (docs/api.md "Caching"): the ETag names the representation (`VersionFetch.etag`), and
is compared only after the access check, so a revoked reader gets 404, never 304.
`Cache-Control: private, no-cache` lets a client keep a body but makes it ask every time (what
keeps a revocation immediate); `Vary: Authorization, Cookie` keeps one caller's answer from
another in any cache that keys on the URL.
"""

import functools
from collections.abc import Callable
from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.urls import reverse
from django.utils.cache import get_conditional_response, patch_vary_headers
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
)
from rest_framework import exceptions, serializers
from rest_framework.request import Request
from rest_framework.views import APIView

from accounts.authentication import ApiKeyUse, HashedTokenAuthentication, api_key_from_request
from common.api import (
    api_caller_set,
    api_error_response,
    api_response_finalize,
    api_response_headers,
    api_throttles_check,
)
from common.auth import request_actor
from common.jsonstream import json_dumps, json_stream

from ..exceptions import ContentInvalid
from ..services import access_log_grant_use
from ..sharing.fetch import (
    Admit,
    KeyedFetch,
    VersionFetch,
    label_version_fetch_for_key,
    label_version_fetch_for_user,
    version_fetch_for_key,
    version_fetch_for_user,
)
from .prompts import VersionSummarySerializer

CACHE_CONTROL = "private, no-cache"
VARY = ("Accept", "Authorization", "Cookie")


def full_requested(request: HttpRequest | Request) -> bool:
    """`?full=1`: every text whole; absent or `0`: long texts as heads. Else a 400."""
    raw = request.GET.get("full")
    if raw in (None, "", "0"):
        return False
    if raw == "1":
        return True
    raise ContentInvalid("full: 1 (every text whole) or 0 (long texts as heads).", field="full")


def version_answer(
    request: HttpRequest | Request,
    version: VersionFetch,
    *,
    user: User,
    text_url: Callable[[str], str],
) -> HttpResponseBase:
    """200 with the version (streamed with `?full=1` when a text is long), or 304 when the
    client's `If-None-Match` names this representation. Called only after the access check."""
    full = full_requested(request)
    access_log_grant_use(
        prompt_id=version.prompt_id,
        grant_id=version.grant_id,
        user=user,
        path="api",
        throttle=True,
    )
    etag = version.etag(full=full)
    response: HttpResponseBase | None = get_conditional_response(request, etag=etag)
    if response is None:
        if full and version.prepared.truncated:
            # The long texts are read a range at a time while the answer is written.
            response = StreamingHttpResponse(
                json_stream(version.as_full_json()), content_type="application/json"
            )
        else:
            body = version.as_full_json() if full else version.as_json(text_url=text_url)
            response = HttpResponse(json_dumps(body), content_type="application/json")
    response.headers["ETag"] = etag
    response.headers["Cache-Control"] = CACHE_CONTROL
    patch_vary_headers(response, VARY)
    return response


def version_text_url(version_id: int) -> Callable[[str], str]:
    """The owner-side range URL of each text of version `version_id` (reversed only when a
    text is long enough to need one)."""
    return lambda field: f"{reverse('api-version-text', args=[version_id])}?field={field}"


def _answer(request: HttpRequest | Request, version: VersionFetch, user: User) -> HttpResponseBase:
    return version_answer(request, version, user=user, text_url=version_text_url(version.id))


# --- the schema's description of both operations, and their DRF classes ----------------------

# Response schema of a text field (docs/api.md "Long texts in answers").
TEXT_SCHEMA: dict[str, Any] = {
    "oneOf": [
        {"type": "string"},
        {
            "type": "object",
            "description": "A text longer than PLAYGROUND_JSON_TEXT_HEAD_CHARS characters: its "
            "first characters, its length, and where to read it a range at a time.",
            "properties": {
                "text": {"type": "string", "description": "The first characters (the head)."},
                "truncated": {"type": "boolean", "enum": [True]},
                "total": {"type": "integer", "description": "Characters in the whole text."},
                "text_url": {
                    "type": "string",
                    "description": "The range URL of this text (add `offset`, `length`).",
                },
            },
            "required": ["text", "truncated", "total", "text_url"],
        },
    ],
    "description": "The text, or with a long text (unless `?full=1`) its head and range URL.",
}


@extend_schema_field(TEXT_SCHEMA)
class VersionTextField(serializers.JSONField):
    """A text of a version in an answer: a string, or a long text's head (TEXT_SCHEMA)."""


class MessageOutputSerializer(serializers.Serializer[dict[str, Any]]):
    role = serializers.CharField()
    content = VersionTextField()


class ContentOutputSerializer(serializers.Serializer[dict[str, Any]]):
    """A version's content as answered: the shape it is saved in, long texts cut to heads."""

    provider = serializers.CharField()
    model = serializers.CharField()
    system = VersionTextField()
    messages = MessageOutputSerializer(many=True)
    params = serializers.DictField()
    tools = serializers.ListField(child=serializers.DictField())
    response_format = serializers.DictField(allow_null=True)
    variables = serializers.DictField(child=serializers.CharField(allow_blank=True))


FULL_PARAMETER = OpenApiParameter(
    "full",
    {"type": "integer", "enum": [0, 1]},
    description="1: every text whole (a long version's answer is streamed); 0 (the default): "
    "texts longer than PLAYGROUND_JSON_TEXT_HEAD_CHARS come as a head and a range URL.",
)
IF_NONE_MATCH = OpenApiParameter(
    "If-None-Match",
    str,
    OpenApiParameter.HEADER,
    description="The ETag of the answer you hold: 304 with no body while it is still this "
    "answer (access is checked first: no access is a 404).",
)
ETAG = OpenApiParameter(
    "ETag",
    str,
    OpenApiParameter.HEADER,
    response=[200, 304],
    description="Names this answer: the version id, every field of the body and whether texts "
    "are cut. Two versions never share one (a revert has another id).",
)
CACHE_CONTROL_HEADER = OpenApiParameter(
    "Cache-Control",
    str,
    OpenApiParameter.HEADER,
    response=[200, 304],
    description="`private, no-cache`: keep the body, but ask again (with If-None-Match) each time.",
)
FETCH_PARAMETERS = [FULL_PARAMETER, IF_NONE_MATCH, ETAG, CACHE_CONTROL_HEADER]


class VersionOutputSerializer(VersionSummarySerializer):
    prompt = serializers.IntegerField(source="prompt_id")
    content = ContentOutputSerializer()

    class Meta(VersionSummarySerializer.Meta):
        fields = (*VersionSummarySerializer.Meta.fields, "prompt", "content")


_FETCH_RESPONSES = {
    200: VersionOutputSerializer,
    304: OpenApiResponse(description="Not modified: the ETag sent is still this answer."),
}


class VersionDetailApi(APIView):
    """One version with its content. Versions are immutable: no PUT, PATCH or DELETE.

    GETs are answered by `version_detail_view`; this class answers the rest and describes
    the operation."""

    @extend_schema(
        parameters=FETCH_PARAMETERS,
        responses=_FETCH_RESPONSES,
        description="Long texts come as a head and a range URL unless `?full=1`. The ETag "
        "names this answer; send it as If-None-Match to get 304 while it is unchanged.",
    )
    def get(self, request: Request, version_id: int) -> HttpResponseBase:
        version = version_fetch_for_user(user=request.user, version_id=version_id)
        return _answer(request, version, request_actor(request))


class LabelVersionApi(APIView):
    """The version a label points at, with its content: the call applications make on their hot
    path (`production`). Same body, ETag and caching rules as `GET /versions/{id}/`."""

    @extend_schema(
        parameters=FETCH_PARAMETERS,
        responses=_FETCH_RESPONSES,
        description="The labelled version, as `GET /versions/{id}/` answers it. When the label "
        "moves, the ETag changes (even to a revert with the same content).",
    )
    def get(self, request: Request, prompt_id: int, name: str) -> HttpResponseBase:
        version = label_version_fetch_for_user(user=request.user, prompt_id=prompt_id, name=name)
        return _answer(request, version, request_actor(request))


# --- the plain views ----------------------------------------------------------------------


def _plain_json_wanted(request: HttpRequest) -> bool:
    """A GET whose `Accept` takes plain JSON (no parameters such as `indent`, no HTML)."""
    if request.method != "GET":
        return False
    accept = request.META.get("HTTP_ACCEPT", "")
    return not accept or accept in ("*/*", "application/json")


def _caller_fetch(
    api: type[APIView],
    request: HttpRequest,
    by_key: Callable[[str, Admit], KeyedFetch],
    by_user: Callable[[User], VersionFetch],
) -> tuple[User, VersionFetch]:
    """Authenticate as the API does — an `Authorization: Token` header first, else the
    session — then throttle as it does, and fetch; with a key, in one query with the key's
    look-up (throttled between the key's check and the version's, as DRF's order is)."""

    def admit(user: User, auth: ApiKeyUse | None) -> None:
        # The request's user is the caller from here on, as DRF's authentication leaves it
        # (the middleware after the view reads it: no session is loaded for a key's caller).
        api_caller_set(request, user=user, auth=auth)
        api_throttles_check(api, request, user=user, auth=auth)

    try:
        key = api_key_from_request(request)
        if key is not None:
            found = by_key(key, admit)
            return found.user, found.version
    except exceptions.AuthenticationFailed:
        api_caller_set(request, user=AnonymousUser(), auth=None)
        raise
    user = request.user
    if not (user.is_authenticated and user.is_active):
        api_caller_set(request, user=AnonymousUser(), auth=None)
        raise exceptions.NotAuthenticated()
    assert isinstance(user, User)
    admit(user, None)
    return user, by_user(user)


def _plain(
    api: type[APIView], fast: Callable[..., HttpResponseBase]
) -> Callable[..., HttpResponseBase]:
    """A URL's view: plain-JSON GETs answered by `fast`, every other request by `api`, whose
    class drf-spectacular reads for the schema (the `cls` attribute DRF's views carry)."""
    drf_view = api.as_view()
    drf_headers = api_response_headers(api)

    def view(request: HttpRequest, **kwargs: Any) -> HttpResponseBase:
        if not _plain_json_wanted(request):
            return drf_view(request, **kwargs)
        try:
            response = fast(request, **kwargs)
        except Exception as exc:
            error = api_error_response(exc, auth_header=HashedTokenAuthentication.keyword)
            if error is None:
                raise
            response = error
        return api_response_finalize(api, drf_headers, response)

    functools.update_wrapper(view, drf_view, assigned=("__doc__",), updated=("__dict__",))
    return view


def _version_detail(request: HttpRequest, version_id: int) -> HttpResponseBase:
    user, version = _caller_fetch(
        VersionDetailApi,
        request,
        lambda key, admit: version_fetch_for_key(key=key, version_id=version_id, admit=admit),
        lambda user: version_fetch_for_user(user=user, version_id=version_id),
    )
    return _answer(request, version, user)


def _label_version(request: HttpRequest, prompt_id: int, name: str) -> HttpResponseBase:
    user, version = _caller_fetch(
        LabelVersionApi,
        request,
        lambda key, admit: label_version_fetch_for_key(
            key=key, prompt_id=prompt_id, name=name, admit=admit
        ),
        lambda user: label_version_fetch_for_user(user=user, prompt_id=prompt_id, name=name),
    )
    return _answer(request, version, user)


version_detail_view = _plain(VersionDetailApi, _version_detail)
label_version_view = _plain(LabelVersionApi, _label_version)

__all__ = [
    "LabelVersionApi",
    "VersionDetailApi",
    "full_requested",
    "label_version_view",
    "version_answer",
    "version_detail_view",
]
