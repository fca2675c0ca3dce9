"""The change request pages: the forms go through the same services as the API, and a
stranger gets the 404 page on every one."""

import pytest
from django.test import Client

from changes.models import ChangeRequest, SuggestedEdit
from playground.models import Label

pytestmark = pytest.mark.django_db


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_request_review_from_a_version_then_review_accept_and_merge(world):
    alice, bob = _client(world.alice), _client(world.bob)
    prompt_page = alice.get(f"/playground/p/{world.prompt.pk}/v2/").content.decode()
    assert f"/changes/p/{world.prompt.pk}/new/?to=v2" in prompt_page
    form = alice.get(f"/changes/p/{world.prompt.pk}/new/?to=v2")
    assert form.status_code == 200 and "production (now at v1)" in form.content.decode()
    opened = alice.post(
        f"/changes/p/{world.prompt.pk}/new/?to=v2",
        {"label": "production", "description": "Riskiest first.", "reviewers": "bob, carol"},
    )
    assert opened.status_code == 302
    request = ChangeRequest.objects.get()
    url = f"/changes/{request.pk}/"
    text = bob.get(f"/api/v1/changes/{request.pk}/text/")  # session auth on the API too
    body = text.json()["text"]
    start = body.index("Always name")
    end = start + len("Always name the riskiest component first.")
    added = bob.post(
        url + "annotate/",
        {
            "quote": body[start:end],
            "start": start,
            "end": end,
            "kind": "risk",
            "severity": "major",
            "body": "Too absolute.",
            "suggest": "1",
            "suggestion": "Name the riskiest component first.",
        },
    )
    assert added.status_code == 302
    page = bob.get(url).content.decode()
    assert 'class="change-mark"' in page and "Too absolute." in page
    assert "Too absolute." not in alice.get(url).content.decode()  # a draft is private
    bob.post(url + "submit/", {"verdict": "request-changes"})
    page = alice.get(url).content.decode()
    assert "Request changes on r1" in page and "Accept this suggestion" in page
    edit = SuggestedEdit.objects.get()
    accepted = alice.post(url + "accept/", {"suggestion": [edit.pk]})
    assert accepted.status_code == 302
    request.refresh_from_db()
    assert request.to_version.parent_id == world.v2.pk
    bob.post(url + "submit/", {"verdict": "approve"})
    merged = alice.post(url + "merge/")
    assert merged.status_code == 302
    label = Label.objects.get(prompt=world.prompt, name="production")
    assert label.version_id == request.to_version_id
    page = alice.get(url).content.decode()
    assert f"change request #{request.pk}" in page
    labels = alice.get(f"/playground/p/{world.prompt.pk}/").content.decode()
    assert f"via change request #{request.pk}" in labels


def test_a_stranger_gets_404_on_every_page(opened):
    world = opened
    stranger = _client(world.stranger)
    rid = world.request_id
    for url in (
        f"/changes/{rid}/",
        f"/changes/p/{world.prompt.pk}/",
        f"/changes/p/{world.prompt.pk}/new/?to=v2",
        f"/changes/p/{world.prompt.pk}/gate/production/",
    ):
        assert stranger.get(url).status_code == 404, url
    for tail in (
        "annotate/",
        "submit/",
        "accept/",
        "merge/",
        "suggestions/1/reject/",
        "annotations/1/",
    ):
        assert stranger.post(f"/changes/{rid}/{tail}", {}).status_code == 404, tail
    assert "Review requested" not in stranger.get("/changes/inbox/").content.decode()
    assert "Your review was requested" in _client(world.bob).get("/changes/inbox/").content.decode()


def test_gate_rules_page_gates_the_label(world):
    alice = _client(world.alice)
    url = f"/changes/p/{world.prompt.pk}/gate/production/"
    assert _client(world.erin).get(url).status_code == 403
    saved = alice.post(
        url, {"required_approvals": "2", "required_reviewers": "bob", "no_blockers": "1"}
    )
    assert saved.status_code == 302
    assert Label.objects.get(prompt=world.prompt, name="production").gated
    page = alice.get(url).content.decode()
    assert 'value="2"' in page and "bob" in page
    bad = alice.post(url, {"required_approvals": "1", "eval_threshold": "0.5"})
    assert bad.status_code == 400 and "eval_testset" in bad.content.decode()
