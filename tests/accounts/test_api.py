"""The auth API: a key for a username and password, listing and revoking keys, expiry, and
JSON errors (accounts/api.py)."""

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.models import ApiToken
from accounts.services import api_token_create
from tests.factories import PASSWORD, api_client_for, make_user

pytestmark = pytest.mark.django_db


def test_token_is_returned_once_and_stored_hashed():
    make_user("dave")
    client = APIClient()
    response = client.post("/api/v1/auth/token/", {"username": "dave", "password": PASSWORD})
    assert response.status_code == 201
    key = response.json()["token"]
    assert key.startswith("rlk_")
    assert len(key) > 40

    # The key is nowhere in the database; only its hash.
    token = ApiToken.objects.get()
    assert key not in (token.key_hash, token.key_prefix)
    with connection.cursor() as cursor:
        cursor.execute("SELECT key_hash, key_prefix FROM accounts_apitoken")
        assert all(key not in value for row in cursor.fetchall() for value in row)

    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get("/api/v1/questions/").status_code == 200
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}x")
    response = client.get("/api/v1/questions/")
    assert response.status_code == 401
    assert response.json()["detail"]


@pytest.mark.parametrize(
    ("payload", "needle", "status"),
    [
        # Refused credentials are 401 (issue #10: the schema's status for them), bad shape 400.
        ({"username": "dave", "password": "wrong"}, "Unable to log in", 401),
        ({"username": "dave"}, "password", 400),
        ({"username": ["x"], "password": "y"}, "username", 400),
    ],
)
def test_token_bad_input_is_400_with_detail(payload, needle, status):
    make_user("dave")
    response = APIClient().post("/api/v1/auth/token/", payload, format="json")
    assert response.status_code == status
    assert needle in response.json()["detail"]
    assert not ApiToken.objects.exists()


def test_invalid_json_and_invalid_utf8_are_400():
    client = APIClient()
    for body in (b"{not json", b'{"username": "\xff\xfe", "password": "x"}'):
        response = client.post("/api/v1/auth/token/", body, content_type="application/json")
        assert response.status_code == 400
        assert response.json()["detail"]


def test_unknown_api_url_is_json_404(client):
    response = client.get("/api/v1/nothing-here/")
    assert response.status_code == 404
    assert response.json() == {"detail": "Not found."}


def test_keys_are_listed_never_shown_and_revoked_on_the_next_request():
    ada, bob = make_user("ada"), make_user("bob")
    first, first_key = api_token_create(actor=ada)
    second, second_key = api_token_create(actor=ada, expires_at=timezone.now() + timedelta(days=30))
    _, bob_key = api_token_create(actor=bob)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {first_key}")
    listed = client.get("/api/v1/auth/tokens/")
    assert listed.status_code == 200
    rows = listed.json()
    rows = rows["results"] if isinstance(rows, dict) else rows
    assert {row["id"] for row in rows} == {first.pk, second.pk}
    assert set(rows[0]) >= {"id", "prefix", "created_at", "last_used_at", "expires_at"}
    for key in (first_key, second_key, bob_key):
        assert key not in listed.content.decode()
        assert key[len("rlk_") + 8 :] not in listed.content.decode()
    # Another account's key: 404, like a missing one.
    bob_token = ApiToken.objects.get(user=bob)
    assert client.delete(f"/api/v1/auth/tokens/{bob_token.pk}/").status_code == 404
    assert client.delete("/api/v1/auth/tokens/99999999/").status_code == 404
    # Revoke the second key with the first; the second is refused from now on.
    other = APIClient()
    other.credentials(HTTP_AUTHORIZATION=f"Token {second_key}")
    assert other.get("/api/v1/prompts/").status_code == 200
    assert client.delete(f"/api/v1/auth/tokens/{second.pk}/").status_code == 204
    assert other.get("/api/v1/prompts/").status_code == 401
    # A key may revoke itself.
    assert client.delete(f"/api/v1/auth/tokens/{first.pk}/").status_code == 204
    assert client.get("/api/v1/prompts/").status_code == 401
    assert api_client_for(bob).get("/api/v1/auth/tokens/").status_code == 200
    assert APIClient().get("/api/v1/auth/tokens/").status_code == 401


def test_keys_can_expire():
    make_user("ada")
    soon = (timezone.now() + timedelta(hours=1)).isoformat()
    created = APIClient().post(
        "/api/v1/auth/token/",
        {"username": "ada", "password": PASSWORD, "expires_at": soon},
        format="json",
    )
    assert created.status_code == 201
    assert created.json()["expires_at"]
    key = created.json()["token"]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get("/api/v1/prompts/").status_code == 200
    ApiToken.objects.filter(pk=created.json()["id"]).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    expired = client.get("/api/v1/prompts/")
    assert expired.status_code == 401
    assert "expired" in expired.json()["detail"]
    past = APIClient().post(
        "/api/v1/auth/token/",
        {"username": "ada", "password": PASSWORD, "expires_at": "2001-01-01T00:00:00Z"},
        format="json",
    )
    assert past.status_code == 400
    assert "expires_at" in past.json()["detail"]
