from django.http import JsonResponse
from django.urls import path

from config.urls import urlpatterns as app_urlpatterns

BODY = {"id": 1, "status": "ok"}


def constant_json(request):
    """The baseline: a bare Django view returning a constant JSON body."""
    return JsonResponse(BODY)


urlpatterns = [path("bench/constant/", constant_json), *app_urlpatterns]
