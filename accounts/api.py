from django.contrib.auth import authenticate
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from common.exceptions import DomainError

from .services import api_token_create


class TokenCreateApi(APIView):
    """Exchange a username and password for an API key (shown once; only its hash is kept)."""

    authentication_classes: list = []
    permission_classes = [AllowAny]

    class InputSerializer(serializers.Serializer):
        username = serializers.CharField(max_length=150)
        password = serializers.CharField(max_length=4096, trim_whitespace=False)

    @extend_schema(
        request=InputSerializer,
        responses={201: inline_serializer("TokenOutput", {"token": serializers.CharField()})},
        auth=[],
    )
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user = authenticate(
            request._request,
            username=data.validated_data["username"],
            password=data.validated_data["password"],
        )
        if user is None:
            raise DomainError("Unable to log in with the given username and password.")
        _, key = api_token_create(actor=user)
        return Response({"token": key}, status=status.HTTP_201_CREATED)
