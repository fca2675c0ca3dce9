from django.urls import path

from .api import TokenCreateApi

urlpatterns = [path("token/", TokenCreateApi.as_view(), name="api-token-create")]
