"""Request bodies refused before they are read (issue #31; docs/operations.md, "Request bodies").

Django's ASGI handler reads a whole body into a temporary file (in memory, then on disk past
FILE_UPLOAD_MAX_MEMORY_SIZE) before any middleware or view runs, and under WSGI the CSRF
middleware reads a form body before the view checks who is asking: an anonymous 1 GiB POST
filled `/tmp`. So a body is limited before any of that:

- at most `REQUEST_BODY_MAX_BYTES`, except on Redline's own upload endpoint
  (`UPLOAD_PREFIX`, the embedded default's signed PUT), which takes up to
  `UPLOAD_MAX_BYTES`;
- a declared `Content-Length` past the limit is a 413 before a byte of the body is read (ASGI:
  `common.asgi`; WSGI: `RequestBodyLimitMiddleware`, first in the chain);
- a body without a length (chunked) is counted as it arrives under ASGI and refused with a 413
  as soon as it passes the limit; what was read is dropped. (Under WSGI Django reads no body
  without a `Content-Length`.)
"""

from __future__ import annotations

import json
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

# Redline's own upload endpoint (playground's signed PUT): bodies up to UPLOAD_MAX_BYTES.
UPLOAD_PREFIX = "/api/v1/uploads/put/"


def body_limit(path: str) -> int:
    """The most bytes a request body to `path` may have."""
    if path.startswith(UPLOAD_PREFIX):
        return int(settings.UPLOAD_MAX_BYTES)
    return int(settings.REQUEST_BODY_MAX_BYTES)


def body_declared_too_large(path: str, content_length: str | None) -> int | None:
    """The limit a declared `Content-Length` exceeds, or None (no length, or within it). A
    malformed length is left to the server and Django, which read no body for it."""
    if not content_length:
        return None
    try:
        declared = int(content_length)
    except ValueError:
        return None
    limit = body_limit(path)
    return limit if declared > limit else None


def body_refusal_detail(limit: int) -> str:
    return f"The request body is larger than {limit:,} bytes; it was not read."


def body_refusal_json(limit: int) -> bytes:
    return json.dumps({"detail": body_refusal_detail(limit)}).encode()


class RequestBodyLimitMiddleware:
    """WSGI (and the test client): a declared body past its limit is a 413 before anything reads
    it. Under ASGI `common.asgi` has already refused it."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = body_declared_too_large(request.path, request.META.get("CONTENT_LENGTH"))
        if limit is not None:
            # Nothing reads the body into memory or a file (a WSGI server may discard the rest
            # of it before the connection's next request).
            return JsonResponse({"detail": body_refusal_detail(limit)}, status=413)
        return self.get_response(request)
