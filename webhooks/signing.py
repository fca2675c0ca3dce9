"""Webhook secrets and signatures.

A webhook's secret is derived, not stored: HMAC-SHA256 of its random `secret_salt` under
WEBHOOK_SECRET_KEY (default: SECRET_KEY). A copy of the database alone cannot sign. The owner sees
the secret once, when the webhook is created; rotating WEBHOOK_SECRET_KEY changes every secret.

Each attempt is signed afresh: `Redline-Signature: v1=<hex>` is HMAC-SHA256 of
`<Redline-Timestamp>.<body>` under the secret. A receiver recomputes it, compares in constant
time, and refuses a timestamp more than a few minutes old (a replayed request).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from django.conf import settings

SECRET_PREFIX = "whsec_"  # noqa: S105 (a prefix, not a secret)
SIGNATURE_VERSION = "v1"


def secret_salt_new() -> str:
    return secrets.token_hex(32)


def webhook_secret(salt: str) -> str:
    key = (settings.WEBHOOK_SECRET_KEY or settings.SECRET_KEY).encode()
    derived = hmac.new(key, b"redline-webhook-secret:" + salt.encode(), hashlib.sha256)
    return SECRET_PREFIX + derived.hexdigest()


def signature(*, secret: str, timestamp: int, body: bytes) -> str:
    """The `Redline-Signature` header's value for this timestamp and body."""
    mac = hmac.new(secret.encode(), str(timestamp).encode() + b"." + body, hashlib.sha256)
    return f"{SIGNATURE_VERSION}={mac.hexdigest()}"


def signature_verify(
    *, secret: str, timestamp: str, body: bytes, header: str, now: int, tolerance: int
) -> bool:
    """What a receiver does (and the tests do): a fresh timestamp and an equal signature."""
    if not timestamp.isascii() or not timestamp.isdigit():
        return False
    if abs(now - int(timestamp)) > tolerance:
        return False
    expected = signature(secret=secret, timestamp=int(timestamp), body=body)
    return hmac.compare_digest(expected, header)
