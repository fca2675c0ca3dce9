"""Where a webhook may point, and the one HTTP POST of an attempt (SSRF-safe).

A URL is http(s) with a host and no credentials. Its host is resolved when the webhook is
registered and again on every attempt, and every address it resolves to must be a public one
(not loopback, private, link-local, shared, multicast, reserved or unspecified, IPv4-mapped
forms included) unless WEBHOOK_ALLOW_PRIVATE_URLS is set. The POST then connects to an address
that was checked (the name is not resolved a second time by the HTTP client), sends the Host and
TLS server name of the URL, follows no redirect, and gives up after WEBHOOK_TIMEOUT_SECONDS.
"""

from __future__ import annotations

import http.client
import ipaddress
import socket
import ssl
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings

from .exceptions import WebhookInvalid
from .models import RESPONSE_MAX_CHARS, URL_MAX_CHARS


class AddressRefused(WebhookInvalid):
    """The host resolves to an address webhooks may not reach (SSRF)."""


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str
    port: int
    path: str  # path and query, as sent


def url_parse(url: object) -> Target:
    """A webhook URL → its parts; WebhookInvalid (400 naming `url`) otherwise."""
    if not isinstance(url, str) or not url.strip():
        raise WebhookInvalid("url: required.", field="url")
    url = url.strip()
    if len(url) > URL_MAX_CHARS:
        raise WebhookInvalid(f"url: at most {URL_MAX_CHARS} characters.", field="url")
    if not url.isascii() or any(c.isspace() or ord(c) < 32 for c in url):
        raise WebhookInvalid("url: ASCII without spaces (encode the rest).", field="url")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise WebhookInvalid("url: not a valid URL.", field="url") from None
    if parts.scheme not in ("http", "https"):
        raise WebhookInvalid("url: must start with https:// or http://.", field="url")
    if not parts.hostname:
        raise WebhookInvalid("url: has no host.", field="url")
    if parts.username is not None or parts.password is not None:
        raise WebhookInvalid("url: must not carry a user name or password.", field="url")
    default = 443 if parts.scheme == "https" else 80
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    return Target(parts.scheme, parts.hostname, port or default, path)


def _refused(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return _refused(address.ipv4_mapped)
    return not address.is_global or address.is_multicast


def addresses_checked(target: Target) -> list[str]:
    """The host's addresses, every one allowed; WebhookInvalid naming the first refused one."""
    try:
        infos = socket.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        raise WebhookInvalid(
            f"url: the host {target.host} does not resolve.", field="url"
        ) from None
    addresses: list[str] = []
    for info in infos:
        text = str(info[4][0]).split("%", 1)[0]  # an IPv6 scope id is not part of the address
        if text not in addresses:
            addresses.append(text)
    if not settings.WEBHOOK_ALLOW_PRIVATE_URLS:
        for text in addresses:
            if _refused(ipaddress.ip_address(text)):
                raise AddressRefused(
                    f"url: {target.host} resolves to {text}, a loopback, private or reserved"
                    " address; webhooks go to public addresses only.",
                    field="url",
                )
    if not addresses:
        raise WebhookInvalid(f"url: the host {target.host} does not resolve.", field="url")
    return addresses


class _PinnedHTTPConnection(http.client.HTTPConnection):
    """Connects to a checked address, whatever the host name resolves to by now."""

    def __init__(self, host: str, port: int, *, address: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self._address = address

    def connect(self) -> None:
        self.sock = socket.create_connection((self._address, self.port), self.timeout)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    def __init__(self, host: str, port: int, *, address: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout, context=ssl.create_default_context())
        self._address = address

    def connect(self) -> None:
        sock = socket.create_connection((self._address, self.port), self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Answer:
    status_code: int
    body: str  # the start of the receiver's answer, for the delivery log


def post(target: Target, *, address: str, body: bytes, headers: dict[str, str]) -> Answer:
    """One POST to `address`; OSError (timeouts included) or http.client errors otherwise."""
    kind = _PinnedHTTPSConnection if target.scheme == "https" else _PinnedHTTPConnection
    conn = kind(target.host, target.port, address=address, timeout=settings.WEBHOOK_TIMEOUT_SECONDS)
    try:
        conn.request("POST", target.path, body=body, headers=headers)
        response = conn.getresponse()
        head = response.read(RESPONSE_MAX_CHARS * 4)
        return Answer(response.status, head.decode("utf-8", "replace")[:RESPONSE_MAX_CHARS])
    finally:
        conn.close()
