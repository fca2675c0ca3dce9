"""Domain errors → HTTP for the HTML pages, in one place (the API's twin is `common.api`).

A view calls selectors and services and lets their errors propagate: NotFound answers 404,
Forbidden 403 and RateLimited 429 with Retry-After, rendered by the project's error templates.
Errors a page shows inside its own form (bad input, 400) are still caught by that view, since
only it knows which form to render again. DRF views handle their exceptions before this runs.
"""

from collections.abc import Callable

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from common.exceptions import Forbidden, NotFound, RateLimited


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
