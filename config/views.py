from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from common.api import NOT_FOUND_DETAIL


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """404 for every unknown URL: JSON under /api/, a page elsewhere."""
    if request.path.startswith("/api/"):
        # Byte-identical to DRF's 404 body, so a missing route and a hidden object look alike.
        return JsonResponse(
            {"detail": NOT_FOUND_DETAIL}, status=404, json_dumps_params={"separators": (",", ":")}
        )
    return render(request, "404.html", status=404)
