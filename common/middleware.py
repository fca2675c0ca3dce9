"""Project-wide response policy: caching of personal responses, request ids, JSON errors."""

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.utils.cache import patch_cache_control


class PrivateCacheMiddleware:
    """Responses for a signed-in caller (session or API key) are `Cache-Control: private`,
    so no shared cache keeps one person's pages for another. Views that set their own policy
    (the shared pages say `no-store`) keep it."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        user = getattr(request, "user", None)
        personal = (user is not None and user.is_authenticated) or (
            "HTTP_AUTHORIZATION" in request.META
        )
        if personal and not response.has_header("Cache-Control"):
            patch_cache_control(response, private=True)
        return response
