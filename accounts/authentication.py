from django.utils import timezone
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication

from .models import ApiToken
from .tokens import token_hash


class HashedTokenAuthentication(TokenAuthentication):
    """DRF token auth, but the database holds only hashes of the keys."""

    keyword = "Token"

    def authenticate_credentials(self, key: str):  # type: ignore[override]
        try:
            token = ApiToken.objects.select_related("user").get(key_hash=token_hash(key))
        except ApiToken.DoesNotExist:
            raise exceptions.AuthenticationFailed("Invalid token.") from None
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed("User inactive or deleted.")
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=timezone.now())
        return token.user, token
