"""Sign-up, log-in and log-out pages, and the keys page (accounts/views.py)."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from accounts.models import ApiToken
from accounts.services import api_token_create
from tests.factories import PASSWORD, make_user

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
    assert token.key_prefix in listed
    assert key not in listed
    assert client.post("/accounts/keys/", {"expires_in_days": "7000"}).status_code == 400
    bob_token = ApiToken.objects.exclude(user=ada).get()
    assert client.post(f"/accounts/keys/{bob_token.pk}/revoke/").status_code == 404
    assert client.post(f"/accounts/keys/{token.pk}/revoke/").status_code == 302
    assert not ApiToken.objects.filter(user=ada).exists()
    assert ApiToken.objects.filter(pk=bob_token.pk).exists()
    assert Client().get("/accounts/keys/").status_code == 302


def test_signup_is_throttled_per_address(settings):
    """Issue #31: one address made 20 accounts in 16 s. Past SIGNUP_RATE_LIMIT attempts a
    429 with Retry-After, and no account; another address still signs up."""
    settings.SIGNUP_RATE_LIMIT = 3
    settings.SIGNUP_RATE_WINDOW = 3600
    users = get_user_model().objects
    for number in range(3):
        answer = Client(REMOTE_ADDR="203.0.113.7").post(
            "/accounts/signup/",
            {"username": f"bot{number}", "password1": PASSWORD, "password2": PASSWORD},
        )
        assert answer.status_code == 302
    refused = Client(REMOTE_ADDR="203.0.113.7").post(
        "/accounts/signup/", {"username": "bot9", "password1": PASSWORD, "password2": PASSWORD}
    )
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 3600
    assert not users.filter(username="bot9").exists()
    other = Client(REMOTE_ADDR="198.51.100.2").post(
        "/accounts/signup/", {"username": "ada2", "password1": PASSWORD, "password2": PASSWORD}
    )
    assert other.status_code == 302


@pytest.mark.django_db
def test_the_login_page_says_why_a_visitor_was_sent_there():
    """Issue 33: an anonymous visitor to a login-only share link got a bare log-in page."""
    from playground.services import share_link_create
    from tests.playground.factories import make_prompt

    owner = make_user("sharer")
    prompt, v1 = make_prompt(owner)
    _, token = share_link_create(actor=owner, prompt=prompt, access="login", version=v1)
    visitor = Client()
    page = visitor.get(f"/s/{token}", follow=True).content.decode()
    assert "Log in" in page and "only for people with a Redline account" in page
    page = visitor.get(f"/playground/p/{prompt.pk}/", follow=True).content.decode()
    assert "That page is only for signed-in people" in page
    assert "login-reason" not in visitor.get("/accounts/login/").content.decode()


@pytest.mark.django_db
def test_an_ended_link_page_keeps_log_out_for_a_signed_in_visitor():
    from playground.services import share_link_create, share_link_revoke
    from tests.playground.factories import make_prompt

    owner = make_user("sharer")
    prompt, v1 = make_prompt(owner)
    link, token = share_link_create(actor=owner, prompt=prompt, access="public", version=v1)
    share_link_revoke(actor=owner, link=link)
    reader = Client()
    reader.force_login(make_user("reader"))
    response = reader.get(f"/s/{token}")
    assert response.status_code == 410
    assert "This link was revoked" in response.content.decode()
    assert ">Log out</button>" in response.content.decode()
