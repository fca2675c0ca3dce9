"""Test data built through services, so invariants hold."""

import itertools

from django.contrib.auth.models import User
from rest_framework.test import APIClient

from accounts.services import api_token_create, user_create

_counter = itertools.count(1)
PASSWORD = "correct-horse-battery-staple"  # noqa: S105


def make_user(username: str | None = None) -> User:
    return user_create(username=username or f"user{next(_counter)}", password=PASSWORD)


def api_client_for(user: User | None) -> APIClient:
    """An API client authenticated with a real hashed API token (or anonymous)."""
    client = APIClient()
    if user is not None:
        _, key = api_token_create(actor=user)
        client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client
