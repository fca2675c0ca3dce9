import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from rest_framework.test import APIClient

from accounts.models import ApiToken
from tests.factories import PASSWORD, api_client_for, make_user

pytestmark = pytest.mark.django_db


def test_signup_logs_in(client):
    response = client.post(
        "/accounts/signup/",
        {"username": "ada", "password1": PASSWORD, "password2": PASSWORD},
    )
    assert response.status_code == 302
    assert get_user_model().objects.filter(username="ada").exists()
    assert "ada" in client.get("/").content.decode()


def test_signup_rejects_mismatched_passwords(client):
    response = client.post(
        "/accounts/signup/", {"username": "bob", "password1": PASSWORD, "password2": "other"}
    )
    assert response.status_code == 400
    assert not get_user_model().objects.filter(username="bob").exists()


def test_login_and_logout(client):
    make_user("carol")
    response = client.post("/accounts/login/", {"username": "carol", "password": PASSWORD})
    assert response.status_code == 302
    assert client.get("/").context["user"].username == "carol"
    client.post("/accounts/logout/")
    assert not client.get("/").context["user"].is_authenticated


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


def test_token_use_is_recorded_at_most_once_a_minute():
    from datetime import timedelta

    from django.utils import timezone

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
