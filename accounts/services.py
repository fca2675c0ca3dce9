from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction

from .models import ApiToken
from .tokens import token_generate, token_hash

API_TOKEN_PREFIX = "rlk_"  # noqa: S105 (a public prefix, not a secret)


@transaction.atomic
def api_token_create(*, actor: User) -> tuple[ApiToken, str]:
    """Create an API key for `actor`. Returns the row and the key; the key is not stored."""
    key = token_generate(prefix=API_TOKEN_PREFIX)
    token = ApiToken.objects.create(
        user=actor, key_hash=token_hash(key), key_prefix=key[: len(API_TOKEN_PREFIX) + 4]
    )
    return token, key


@transaction.atomic
def user_create(*, username: str, password: str, email: str = "") -> User:
    return get_user_model().objects.create_user(username=username, password=password, email=email)
