"""`Authorization: Token <key>` (accounts/authentication.py)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.models import ApiToken
from tests.factories import api_client_for, make_user

pytestmark = pytest.mark.django_db


def test_token_use_is_recorded_at_most_once_a_minute():
    user = make_user("erin")
    client = api_client_for(user)
    assert ApiToken.objects.get(user=user).last_used_at is None
    client.get("/api/v1/questions/")
    first = ApiToken.objects.get(user=user).last_used_at
    assert first is not None
    client.get("/api/v1/questions/")
    assert ApiToken.objects.get(user=user).last_used_at == first
    ApiToken.objects.filter(user=user).update(last_used_at=timezone.now() - timedelta(minutes=2))
    client.get("/api/v1/questions/")
    assert ApiToken.objects.get(user=user).last_used_at > first - timedelta(minutes=1)
