from django.urls import path

from .api import TokenCreateApi, TokenListApi, TokenRevokeApi

urlpatterns = [
    path("token/", TokenCreateApi.as_view(), name="api-token-create"),
    path("tokens/", TokenListApi.as_view(), name="api-token-list"),
    path("tokens/<int:token_id>/", TokenRevokeApi.as_view(), name="api-token-revoke"),
]
