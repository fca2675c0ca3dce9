"""Secret tokens: generated from `secrets`, recognisable by prefix, stored only as SHA-256."""

import hashlib
import secrets


def token_generate(*, prefix: str) -> str:
    """A new token: `prefix` + 32 bytes (256 bits) of URL-safe randomness."""
    return prefix + secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()
