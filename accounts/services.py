import logging
from datetime import datetime

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from common.exceptions import DomainError

from .models import ApiToken
from .tokens import token_generate, token_hash

API_TOKEN_PREFIX = "rlk_"  # noqa: S105 (a public prefix, not a secret)

logger = logging.getLogger(__name__)


@transaction.atomic
def api_token_create(*, actor: User, expires_at: datetime | None = None) -> tuple[ApiToken, str]:
    """Create an API key for `actor`, optionally expiring. Returns the row and the key; the
    key is not stored (only its SHA-256)."""
    if expires_at is not None and expires_at <= timezone.now():
        raise DomainError("expires_at: must be in the future.", field="expires_at")
    key = token_generate(prefix=API_TOKEN_PREFIX)
    token = ApiToken.objects.create(
        user_id=actor.pk,
        key_hash=token_hash(key),
        key_prefix=key[: len(API_TOKEN_PREFIX) + 4],
        expires_at=expires_at,
    )
    logger.info("api_token.created", extra={"user_id": actor.pk, "token_id": token.pk})
    return token, key


@transaction.atomic
def api_token_revoke(*, actor: User, token: ApiToken) -> None:
    """Delete the key: its hash is gone, so its next request is refused. Only its owner may."""
    if token.user_id != actor.pk:
        raise DomainError("Only the key's owner can revoke it.")
    ApiToken.objects.filter(pk=token.pk).delete()
    logger.info("api_token.revoked", extra={"user_id": actor.pk, "token_id": token.pk})


@transaction.atomic
def user_create(*, username: str, password: str, email: str = "") -> User:
    return get_user_model().objects.create_user(username=username, password=password, email=email)
