from datetime import timedelta

from django.utils import timezone
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication

from .models import ApiToken
from .tokens import token_hash

LAST_USED_RESOLUTION = timedelta(minutes=1)


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
        now = timezone.now()
        if token.expires_at is not None and token.expires_at <= now:
            raise exceptions.AuthenticationFailed("Token expired.")
        # Record use at most once a minute: a write on every request would cost throughput.
        if token.last_used_at is None or now - token.last_used_at > LAST_USED_RESOLUTION:
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        return token.user, token
