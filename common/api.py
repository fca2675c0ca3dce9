"""Project-wide API plumbing: every error is JSON with a human-readable `detail`."""

import re
from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import (
    PermissionDenied,
    RequestDataTooBig,
    SuspiciousOperation,
    TooManyFieldsSent,
    TooManyFilesSent,
)
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from rest_framework import exceptions, status
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.pagination import PageNumberPagination
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView
from rest_framework.views import exception_handler as drf_exception_handler

from common.exceptions import DomainError, NotFound, RateLimited
from common.jsonstream import json_dumps
from common.outage import outage_unavailable

NOT_FOUND_DETAIL = "Not found."


def _first_message(data: Any, path: str = "") -> str:
    """The first error message in a DRF error structure, prefixed by its field path."""
    if isinstance(data, dict):
        for key, value in data.items():
            sub = f"{path}.{key}" if path else str(key)
            if key == "non_field_errors":
                sub = path
            return _first_message(value, sub)
    if isinstance(data, list) and data:
        if all(not isinstance(v, (dict, list)) for v in data):
            return _first_message(data[0], path)
        for index, value in enumerate(data):
            if value:
                return _first_message(value, f"{path}.{index}" if path else str(index))
    text = str(data)
    return f"{path}: {text}" if path else text


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, (Http404, NotFound)):
        return Response({"detail": NOT_FOUND_DETAIL}, status=status.HTTP_404_NOT_FOUND)
    if isinstance(exc, DomainError):
        body: dict[str, Any] = {"detail": exc.message}
        if exc.field:
            body["field"] = exc.field
        headers = {"Retry-After": str(exc.retry_after)} if isinstance(exc, RateLimited) else None
        return Response(body, status=exc.status_code, headers=headers)
    unavailable = outage_unavailable(exc)  # ServiceUnavailable, or Redis/the broker down
    if unavailable is not None:
        return Response(
            {"detail": unavailable.message},
            status=status.HTTP_503_SERVICE_UNAVAILABLE,
            headers={"Retry-After": str(unavailable.retry_after)},
        )
    if isinstance(exc, (TooManyFieldsSent, TooManyFilesSent)):
        limit = settings.DATA_UPLOAD_MAX_NUMBER_FIELDS
        return Response(
            {"detail": f"Too many form fields (the limit is {limit}); send JSON instead."},
            status=status.HTTP_400_BAD_REQUEST,
        )
    if isinstance(exc, RequestDataTooBig):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        return Response(
            {
                "detail": f"Request body too large (the limit is {limit} bytes). Upload long "
                "texts with POST /api/v1/uploads/ and reference them instead."
            },
            status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
        )
    if isinstance(exc, SuspiciousOperation):
        return Response({"detail": "Bad request."}, status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(detail=exc.messages)
    if isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()

    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.ValidationError):
        response.data = {"detail": _first_message(exc.detail), "errors": exc.detail}
    elif not (isinstance(response.data, dict) and "detail" in response.data):
        response.data = {"detail": _first_message(response.data)}
    return response


def api_error_response(exc: Exception, *, auth_header: str) -> HttpResponse | None:
    """What an APIView answers for `exc` (through `exception_handler`), for a plain Django view
    on the API's hot path: the same status, headers and JSON bytes. `auth_header` is the
    `WWW-Authenticate` of a 401, as the view's first authentication class gives it. None for an
    exception the API does not handle (the caller re-raises it)."""
    if isinstance(exc, (exceptions.NotAuthenticated, exceptions.AuthenticationFailed)):
        exc.auth_header = auth_header  # type: ignore[union-attr]  # as APIView.handle_exception
    answer = exception_handler(exc, {})
    if answer is None:
        return None
    response = HttpResponse(
        json_dumps(answer.data), status=answer.status_code, content_type="application/json"
    )
    for name, value in answer.items():
        if name.lower() != "content-type":
            response[name] = value
    return response


# --- a plain Django view answering for a DRF class (the API's hot path) ----------------------
#
# playground/api/fetch.py answers its plain-JSON GETs without DRF's dispatch, for speed. These
# run DRF's own code for the parts of that dispatch the answer depends on, so the two stacks
# cannot drift apart there (tests/playground/test_fetch_stacks.py compares them).


def api_caller_set(request: HttpRequest, *, user: User | AnonymousUser, auth: object) -> None:
    """Leave `request` as DRF's authentication leaves it: its user is the caller (the
    middleware after the view reads it, and loads no session for an API key's caller), or
    the anonymous user once authentication failed."""
    request.user = user
    request.auth = auth  # type: ignore[attr-defined]  # as DRF's Request sets it


def api_throttles_check(
    view_class: type[APIView], request: HttpRequest, *, user: User, auth: object
) -> None:
    """The class's throttles, checked by DRF's own `check_throttles` for the authenticated
    caller (Throttled: 429 with Retry-After). Free when the class has none; with one, a DRF
    `Request` is built for them, as DRF's dispatch would."""
    if not view_class.throttle_classes:
        return
    wrapped = Request(request)
    wrapped.user = user
    wrapped.auth = auth
    view = view_class()
    view.setup(wrapped)
    view.check_throttles(wrapped)


def api_response_headers(view_class: type[APIView]) -> dict[str, str]:
    """The headers DRF's dispatch adds to every answer of the class (Allow, Vary: Accept)."""
    probe = view_class()
    probe.setup(HttpRequest())  # as dispatch sets a view up (HEAD is answered as GET)
    return dict(probe.default_response_headers)


def api_response_finalize(
    view_class: type[APIView], headers: Mapping[str, str], response: HttpResponseBase
) -> HttpResponseBase:
    """`response` with `headers` (`api_response_headers`) added by DRF's `finalize_response`."""
    view = view_class()
    view.headers = dict(headers)
    return view.finalize_response(None, response)  # type: ignore[arg-type]  # not a Response


class TextFileRenderer(BaseRenderer):
    """A body that is a text file (UTF-8); subclasses say how the data becomes the text."""

    charset = "utf-8"

    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: Mapping[str, Any] | None = None,
    ) -> bytes:
        return self.text(data).encode(self.charset)

    def text(self, data: Any) -> str:
        raise NotImplementedError


class NoUrlFormatNegotiation(DefaultContentNegotiation):
    """Content negotiation with DRF's `?format=` renderer override off, for endpoints whose own
    query parameters pick the representation."""

    settings = SimpleNamespace(URL_FORMAT_OVERRIDE=None)  # type: ignore[assignment]


class JsonErrorsMixin(APIView):
    """For endpoints whose success body is a file (plain text, Markdown): errors are still JSON
    with `detail` (docs/api.md), whatever representation the client asked for."""

    def finalize_response(
        self, request: Request, response: Response, *args: Any, **kwargs: Any
    ) -> Response:
        response = super().finalize_response(request, response, *args, **kwargs)
        if isinstance(response, Response) and response.status_code >= 400:
            response.accepted_renderer = JSONRenderer()
            response.accepted_media_type = JSONRenderer.media_type
        return response


_INTEGER = re.compile(r"-?[0-9]+")


class StrictPageNumberPagination(PageNumberPagination):
    """Page-number pagination that refuses (400) a `page` that is not an integer — DRF reads an
    empty `?page=` as page 1 — and a `page_size` that is not a whole number from 1 to
    `max_page_size` — DRF silently falls back to the default — so what the schema documents
    is what is accepted. An integer with no such page stays DRF's 404."""

    def paginate_queryset(self, queryset: Any, request: Request, view: Any = None) -> Any:
        values = request.query_params.getlist(self.page_query_param)
        if values and (len(values) > 1 or not _INTEGER.fullmatch(values[0])):
            raise DomainError("page: must be a whole number.", field="page")
        if self.page_size_query_param:
            self._page_size_check(request.query_params.getlist(self.page_size_query_param))
        return super().paginate_queryset(queryset, request, view)

    def _page_size_check(self, values: list[str]) -> None:
        name = self.page_size_query_param
        if not values:
            return
        if len(values) > 1 or not _INTEGER.fullmatch(values[0]) or int(values[0]) < 1:
            raise DomainError(f"{name}: must be a whole number from 1.", field=name)
        if self.max_page_size is not None and int(values[0]) > self.max_page_size:
            raise DomainError(f"{name}: at most {self.max_page_size}.", field=name)

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.page_size_query_param:
                schema = {"type": "integer", "minimum": 1}
                if self.max_page_size is not None:
                    schema["maximum"] = self.max_page_size
                parameter["schema"] = schema
        return parameters
