"""The webhooks page (templates/webhooks/prompt_webhooks.html) through Django's client: owners
only, the secret in the answer to the POST that made it and never again, bad input re-rendered
with its message (escaped), delete and redeliver as the owner only."""

from __future__ import annotations

import pytest

from playground.models import Role
from playground.services import grant_set
from tests.factories import PASSWORD, make_user
from tests.playground.factories import make_prompt
from webhooks.models import Delivery, Webhook

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner():
    return make_user("owner")


def _client(client, user):
    assert client.login(username=user.username, password=PASSWORD)
    return client


def test_only_the_owner_sees_the_page(client, owner):
    prompt, _ = make_prompt(owner)
    editor = make_user("editor")
    grant_set(actor=owner, prompt=prompt, username="editor", role=Role.EDITOR)
    path = f"/webhooks/prompt/{prompt.pk}/"
    assert _client(client, editor).get(path).status_code == 403
    client.logout()
    assert _client(client, make_user("stranger")).get(path).status_code == 404
    client.logout()
    assert _client(client, owner).get(path).status_code == 200


def test_the_secret_is_shown_in_the_answer_to_the_post_only(client, owner, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    prompt, _ = make_prompt(owner)
    path = f"/webhooks/prompt/{prompt.pk}/"
    c = _client(client, owner)
    made = c.post(path, {"url": "http://127.0.0.1:9/hook", "events": ["version.created"]})
    assert made.status_code == 201
    secret = made.context["secret"]
    assert secret.startswith("whsec_") and secret in made.content.decode()
    again = c.get(path).content.decode()
    assert "http://127.0.0.1:9/hook" in again and secret not in again
    assert secret not in str(list(Webhook.objects.values()))  # only its salt is stored


def test_bad_input_is_a_400_with_its_message_escaped_and_the_form_kept(client, owner, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = False
    prompt, _ = make_prompt(owner)
    c = _client(client, owner)
    answer = c.post(
        f"/webhooks/prompt/{prompt.pk}/",
        {"url": "http://10.0.0.1/<b>x</b>", "events": ["label.moved"]},
    )
    assert answer.status_code == 400
    html = answer.content.decode()
    assert "public addresses only" in html
    assert "<b>x</b>" not in html and "&lt;b&gt;x&lt;/b&gt;" in html
    assert not Webhook.objects.exists()


def test_delete_and_redeliver_are_the_owners(client, owner, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    settings.WEBHOOK_EAGER_MODE = "inline"
    settings.WEBHOOK_MAX_ATTEMPTS = 1
    prompt, _ = make_prompt(owner)
    hook = Webhook.objects.create(
        prompt=prompt, owner=owner, url="http://127.0.0.1:9/", events=[], secret_salt="s"
    )
    delivery = Delivery.objects.create(webhook=hook, event="label.moved", body="{}")
    c = _client(client, make_user("stranger"))
    assert c.post(f"/webhooks/deliveries/{delivery.pk}/redeliver").status_code == 404
    assert c.post(f"/webhooks/{hook.pk}/delete").status_code == 404
    client.logout()
    c = _client(client, owner)
    assert c.post(f"/webhooks/deliveries/{delivery.pk}/redeliver").status_code == 302
    assert Delivery.objects.filter(redelivery_of=delivery).count() == 1
    assert c.post(f"/webhooks/{hook.pk}/delete").status_code == 302
    assert not Webhook.objects.exists() and not Delivery.objects.exists()
