from django.http import HttpRequest, HttpResponse, HttpResponsePermanentRedirect, JsonResponse
from django.shortcuts import render
from django.templatetags.static import static

from common.api import NOT_FOUND_DETAIL


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """404 for every unknown URL: JSON under /api/, a page elsewhere."""
    if request.path.startswith("/api/"):
        # Byte-identical to DRF's 404 body, so a missing route and a hidden object look alike.
        return JsonResponse(
            {"detail": NOT_FOUND_DETAIL}, status=404, json_dumps_params={"separators": (",", ":")}
        )
    return render(request, "404.html", status=404)


def favicon(request: HttpRequest) -> HttpResponse:
    """Browsers ask for /favicon.ico whatever the page says: send them to the static icon.

    Resolved per request, not at import: with the manifest storage the hashed name exists only
    after collectstatic, and URL loading (e.g. `check --deploy`) must not depend on it.
    """
    return HttpResponsePermanentRedirect(static("favicon.svg"))
