"""Log-in throttling, API key management and the trusted-proxy setting (issue #10 §5)."""

import secrets
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.models import ApiToken
from accounts.services import api_token_create
from tests.factories import PASSWORD, api_client_for, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _clear_counters():
    cache.clear()
    yield
    cache.clear()


def _token(client: APIClient, username: str, password: str, **meta):
    return client.post(
        "/api/v1/auth/token/", {"username": username, "password": password}, format="json", **meta
    )


def test_api_log_in_is_throttled_per_account(settings):
    settings.LOGIN_FAILURE_LIMIT_ACCOUNT = 5
    make_user("ada")
    statuses = []
    for index in range(7):
        # A fresh address each time: the per-account limit holds on its own.
        client = APIClient(REMOTE_ADDR=f"10.0.0.{index + 1}")
        statuses.append(_token(client, "ada", "wrong").status_code)
    assert statuses == [401] * 5 + [429] * 2
    right = _token(APIClient(REMOTE_ADDR="10.0.1.1"), "ada", PASSWORD)
    assert right.status_code == 429
    assert right["Content-Type"].startswith("application/json")
    assert 1 <= int(right["Retry-After"]) <= settings.LOGIN_FAILURE_WINDOW
    assert "Too many failed log-ins" in right.json()["detail"]
    # Another account is not affected.
    make_user("bob")
    assert _token(APIClient(), "bob", PASSWORD).status_code == 201


def test_api_log_in_is_throttled_per_address(settings):
    settings.LOGIN_FAILURE_LIMIT_ADDRESS = 4
    make_user("ada")
    client = APIClient(REMOTE_ADDR="10.1.1.1")
    statuses = [_token(client, f"guess{i}", "wrong").status_code for i in range(5)]
    assert statuses == [401] * 4 + [429]
    assert _token(client, "ada", PASSWORD).status_code == 429
    assert _token(APIClient(REMOTE_ADDR="10.1.1.2"), "ada", PASSWORD).status_code == 201


def test_html_log_in_is_throttled_with_a_clear_message(settings):
    settings.LOGIN_FAILURE_LIMIT_ACCOUNT = 3
    make_user("ada")
    client = Client()
    for _ in range(3):
        response = client.post("/accounts/login/", {"username": "ada", "password": "wrong"})
        assert response.status_code == 200  # the form with its error
    response = client.post("/accounts/login/", {"username": "ada", "password": PASSWORD})
    assert response.status_code == 429 and int(response["Retry-After"]) >= 1
    assert "Too many failed log-ins" in response.content.decode()
    assert "_auth_user_id" not in client.session
    # The API shares the counter: the same account is held there too.
    assert _token(APIClient(), "ada", PASSWORD).status_code == 429


def test_trusted_proxy_count_picks_the_client_behind_the_proxy(settings):
    """Behind one proxy every request comes from the proxy's address: without the setting one
    guesser locks out everyone; with it each client has its own counter, and a forged
    X-Forwarded-For entry to the left of the proxy's does not help."""
    settings.SHARE_GUESS_LIMIT = 3
    settings.TRUSTED_PROXY_COUNT = 1
    proxy = {"REMOTE_ADDR": "172.16.0.1"}

    def guess(client_addr: str, forged: str = "") -> int:
        xff = f"{forged}, {client_addr}" if forged else client_addr
        return (
            Client(**proxy, HTTP_X_FORWARDED_FOR=xff)
            .get(f"/api/v1/shared/rl_{secrets.token_urlsafe(32)}/")
            .status_code
        )

    assert [guess("203.0.113.9", forged=f"1.2.3.{i}") for i in range(4)] == [404] * 3 + [429]
    assert guess("198.51.100.7") == 404  # another client behind the same proxy
    settings.TRUSTED_PROXY_COUNT = 0
    cache.clear()
    assert [guess(f"198.51.100.{i}") for i in range(4)] == [404] * 3 + [429]


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
    assert created.status_code == 201 and created.json()["expires_at"]
    key = created.json()["token"]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get("/api/v1/prompts/").status_code == 200
    ApiToken.objects.filter(pk=created.json()["id"]).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    expired = client.get("/api/v1/prompts/")
    assert expired.status_code == 401 and "expired" in expired.json()["detail"]
    past = APIClient().post(
        "/api/v1/auth/token/",
        {"username": "ada", "password": PASSWORD, "expires_at": "2001-01-01T00:00:00Z"},
        format="json",
    )
    assert past.status_code == 400 and "expires_at" in past.json()["detail"]


def test_keys_page_creates_lists_and_revokes():
    ada, bob = make_user("ada"), make_user("bob")
    api_token_create(actor=bob)
    client = Client()
    client.force_login(ada)
    home = client.get("/").content.decode()
    assert 'href="/accounts/keys/"' in home
    created = client.post("/accounts/keys/", {"expires_in_days": "30"})
    assert created.status_code == 200
    html = created.content.decode()
    key = html.split('id="new-key" class="mono" type="text" readonly value="')[1].split('"')[0]
    assert key.startswith("rlk_")
    token = ApiToken.objects.get(user=ada)
    assert token.expires_at is not None
    listed = client.get("/accounts/keys/").content.decode()
    assert token.key_prefix in listed and key not in listed
    assert client.post("/accounts/keys/", {"expires_in_days": "7000"}).status_code == 400
    bob_token = ApiToken.objects.exclude(user=ada).get()
    assert client.post(f"/accounts/keys/{bob_token.pk}/revoke/").status_code == 404
    assert client.post(f"/accounts/keys/{token.pk}/revoke/").status_code == 302
    assert not ApiToken.objects.filter(user=ada).exists()
    assert ApiToken.objects.filter(pk=bob_token.pk).exists()
    assert Client().get("/accounts/keys/").status_code == 302
