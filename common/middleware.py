"""Domain errors → HTTP for the HTML pages, in one place (the API's twin is `common.api`).

A view calls selectors and services and lets their errors propagate: NotFound answers 404,
Forbidden 403 and RateLimited 429 with Retry-After, rendered by the project's error templates.
Errors a page shows inside its own form (bad input, 400) are still caught by that view, since
only it knows which form to render again. DRF views handle their exceptions before this runs.

Also here: `RequestGuardMiddleware` (request ids, NUL in URLs, JSON 500s under /api/, 503 when a
backing service is down) and `PrivateCacheMiddleware` (personal responses are not cached by
shared caches).
"""

import logging
import uuid
from collections.abc import Callable
from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.shortcuts import render
from django.utils.cache import add_never_cache_headers, patch_cache_control

from common.exceptions import Forbidden, NotFound, RateLimited
from common.logging import aiterator_bound, iterator_bound, request_id_bound
from common.outage import outage_unavailable


class DomainErrorMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, NotFound):
            raise Http404 from None  # Django renders 404.html, byte for byte as for a missing id
        if isinstance(exception, Forbidden):
            raise PermissionDenied(exception.message) from None
        if isinstance(exception, RateLimited):
            context = {"retry_after": exception.retry_after}
            response = render(request, "429.html", context, status=429)
            response["Retry-After"] = str(exception.retry_after)
            return response
        return None


logger = logging.getLogger("redline.request")


# The shared-link surfaces: `Cache-Control: no-store` on every answer (PrivateCacheMiddleware).
NO_STORE_URL_NAMES = frozenset(
    {
        "shared-page",
        "shared-copy",
        "shared-login",
        "shared-resume",
        "api-shared",
        "api-shared-text",
        "api-shared-text-download",
    }
)


class PrivateCacheMiddleware:
    """Caching policy for personal and shared responses.

    - Routes named in `NO_STORE_URL_NAMES` (the shared-link surfaces) answer
      `Cache-Control: no-store` whatever their status, so a revoked link does not live on in a
      browser or proxy cache. It is set here, after the view and the error middleware, so it
      covers their 404s and 429s too.
    - Other responses for a signed-in caller (session or API key) are `private`, so no shared
      cache keeps one person's pages for another; a view's own policy wins.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        match = getattr(request, "resolver_match", None)
        if match is not None and match.url_name in NO_STORE_URL_NAMES:
            add_never_cache_headers(response)
            return response
        user = getattr(request, "user", None)
        personal = (user is not None and user.is_authenticated) or (
            "HTTP_AUTHORIZATION" in request.META
        )
        if personal and not response.has_header("Cache-Control"):
            patch_cache_control(response, private=True)
        return response


API_PREFIX = "/api/"


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith(API_PREFIX)


def _error(request: HttpRequest, status: int, detail: str, **extra: Any) -> HttpResponse:
    """A JSON error under /api/, a readable page elsewhere."""
    if _is_api(request):
        return JsonResponse({"detail": detail, **extra}, status=status)
    return render(request, "error.html", {"status": status, "detail": detail}, status=status)


class RequestGuardMiddleware:
    """First in the chain: gives every request an id (in `X-Request-ID` and in every log line
    written while it is served, `common.logging`), refuses NUL characters in the path or query
    string before any view or database sees them (PostgreSQL cannot store NUL; SQLite would),
    and turns an exception no view handled into a JSON 500 under /api/ (a page elsewhere), or a
    503 with Retry-After when a backing service is down."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request_id = uuid.uuid4().hex
        request.request_id = request_id  # type: ignore[attr-defined]
        with request_id_bound(request_id):  # every log line of this request carries it
            if "\x00" in request.path or "%00" in request.META.get("QUERY_STRING", ""):
                response = _error(request, 400, "NUL characters are not allowed in URLs.")
            else:
                response = self.get_response(request)
        response["X-Request-ID"] = request_id
        if isinstance(response, StreamingHttpResponse):  # its body runs after this returns
            body = response.streaming_content
            if response.is_async:
                response.streaming_content = aiterator_bound(body, request_id)
            else:
                response.streaming_content = iterator_bound(body, request_id)
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        request_id = getattr(request, "request_id", "")
        unavailable = outage_unavailable(exception)  # ServiceUnavailable, or Redis down
        if unavailable is not None:
            logger.warning("request.unavailable", extra={"detail": str(exception)[:200]})
            response = _error(request, 503, unavailable.message, request_id=request_id)
            response["Retry-After"] = str(unavailable.retry_after)
            return response
        if not _is_api(request):
            return None  # Django's handler: the debug page in DEBUG, else the 500 page
        logger.error(
            "request.failed",
            extra={"method": request.method, "path": request.path},
            exc_info=exception,
        )
        return _error(
            request,
            500,
            f"Internal server error. Quote request id {request_id} when reporting it.",
            request_id=request_id,
        )
