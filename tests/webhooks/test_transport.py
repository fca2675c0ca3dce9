"""The SSRF rules of webhooks/transport.py with the resolver answering what each case needs
(socket.getaddrinfo patched: the only way to make a name resolve to chosen addresses here)."""

from __future__ import annotations

import socket

import pytest

from tests.webhooks.receiver import receiver_running
from webhooks.exceptions import WebhookInvalid
from webhooks.transport import addresses_checked, post, url_parse


def _resolving(monkeypatch, answers: dict[str, list[str]]) -> list[str]:
    asked: list[str] = []

    def getaddrinfo(host, port, *args, **kwargs):
        asked.append(host)
        return [
            (socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port))
            for a in answers.get(host, [host])  # a literal address is itself
        ]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return asked


def test_every_address_of_a_name_must_be_public(monkeypatch, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = False
    _resolving(
        monkeypatch,
        {"mixed.example": ["93.184.216.34", "10.0.0.7"], "public.example": ["93.184.216.34"]},
    )
    with pytest.raises(WebhookInvalid) as refused:
        addresses_checked(url_parse("https://mixed.example/hook"))
    assert "10.0.0.7" in refused.value.message and refused.value.field == "url"
    assert addresses_checked(url_parse("https://public.example/hook")) == ["93.184.216.34"]


@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.com/",
        "http:///nohost",
        "https://user:pw@example.com/",
        "http://exa mple.com/",
    ],
)
def test_malformed_urls_are_refused_before_any_lookup(monkeypatch, url):
    asked = _resolving(monkeypatch, {"example.com": ["93.184.216.34"]})
    with pytest.raises(WebhookInvalid):
        addresses_checked(url_parse(url))
    assert asked == []


def test_the_post_goes_to_the_checked_address_with_the_urls_host(monkeypatch, settings):
    """The name is resolved once, by the check; the connection uses that address (a second
    answer, e.g. DNS rebinding to an internal host, is never asked for) and sends the URL's
    Host."""
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    settings.WEBHOOK_TIMEOUT_SECONDS = 5
    with receiver_running() as receiver:
        port = int(receiver.url.split(":")[2].split("/")[0])
        asked = _resolving(monkeypatch, {"hooks.example": ["127.0.0.1"]})
        target = url_parse(f"http://hooks.example:{port}/in?x=1")
        address = addresses_checked(target)[0]
        answer = post(target, address=address, body=b"{}", headers={"X-Test": "1"})
        assert answer.status_code == 200
        (request,) = receiver.requests
        assert request.path == "/in?x=1"
        assert request.headers["Host"] == f"hooks.example:{port}"
        assert asked.count("hooks.example") == 1 and "127.0.0.1" in asked
