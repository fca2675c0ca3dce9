"""Log-in throttling, per account and per address, and the trusted-proxy setting
(accounts/throttle.py, issue #10 §5)."""

import secrets

import pytest
from django.core.cache import cache
from django.test import Client
from rest_framework.test import APIClient

from tests.factories import PASSWORD, make_user

pytestmark = pytest.mark.django_db


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
    assert response.status_code == 429
    assert int(response["Retry-After"]) >= 1
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
