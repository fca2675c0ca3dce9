from django.contrib.auth import authenticate
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.authentication import BaseAuthentication
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from common.auth import request_actor
from common.exceptions import DomainError
from common.fields import StrictSerializer

from .models import PASSWORD_MAX_CHARS, USERNAME_MAX_CHARS, ApiToken
from .selectors import api_token_get_for_user, api_token_list_for_user
from .services import api_token_create, api_token_revoke
from .throttle import login_failure_record, login_throttle_check


class BadCredentials(DomainError):
    """Wrong username or password: 401, the status for refused credentials."""

    status_code = 401


class ApiTokenSerializer(serializers.ModelSerializer[ApiToken]):
    """A key as listed: its id and first characters, never the key itself."""

    prefix = serializers.CharField(source="key_prefix")

    class Meta:
        model = ApiToken
        fields: tuple[str, ...] = ("id", "prefix", "created_at", "last_used_at", "expires_at")


class TokenCreateApi(APIView):
    """Exchange a username and password for an API key (shown once; only its hash is kept).

    Failed attempts are throttled per account and per client address (429 with Retry-After).
    """

    authentication_classes: list[type[BaseAuthentication]] = []
    permission_classes = [AllowAny]

    class InputSerializer(StrictSerializer):
        username = serializers.CharField(max_length=USERNAME_MAX_CHARS)
        password = serializers.CharField(max_length=PASSWORD_MAX_CHARS, trim_whitespace=False)
        expires_at = serializers.DateTimeField(
            required=False, allow_null=True, help_text="Optional expiry; none = never expires."
        )

    class OutputSerializer(ApiTokenSerializer):
        """Documents the answer: the key (shown only here, once) and the key's listing."""

        token = serializers.CharField(help_text="The key: shown only here, once.")

        class Meta(ApiTokenSerializer.Meta):
            fields = ("token", *ApiTokenSerializer.Meta.fields)

    @extend_schema(request=InputSerializer, responses={201: OutputSerializer}, auth=[])
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        username = data.validated_data["username"]
        login_throttle_check(request=request._request, username=username)
        user = authenticate(
            request._request, username=username, password=data.validated_data["password"]
        )
        if user is None:
            login_failure_record(request=request._request, username=username)
            raise BadCredentials("Unable to log in with the given username and password.")
        token, key = api_token_create(actor=user, expires_at=data.validated_data.get("expires_at"))
        body = {"token": key, **ApiTokenSerializer(token).data}
        return Response(body, status=status.HTTP_201_CREATED)


class TokenListApi(APIView):
    """The caller's API keys (never the keys themselves)."""

    @extend_schema(responses=ApiTokenSerializer(many=True))
    def get(self, request: Request) -> Response:
        tokens = api_token_list_for_user(user=request.user)
        return Response(ApiTokenSerializer(tokens, many=True).data)


class TokenRevokeApi(APIView):
    """Revoke one of the caller's keys; it is refused from its next request on."""

    @extend_schema(responses={204: None})
    def delete(self, request: Request, token_id: int) -> Response:
        token = api_token_get_for_user(user=request.user, token_id=token_id)
        api_token_revoke(actor=request_actor(request), token=token)
        return Response(status=status.HTTP_204_NO_CONTENT)
