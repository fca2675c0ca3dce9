"""The Content-Security-Policy (django-csp) and the upload origins it allows, built by
config/settings.py from the object-storage settings.

Only our own scripts, styles and images: no inline script anywhere; `img-src` allows data: but
no remote host, so a design document cannot make a reviewer's browser fetch a tracking pixel.
Style attributes stay allowed for the few server-set layout values (table alignment, the
version tree's row height).
"""

from typing import Any
from urllib.parse import urlsplit


def upload_connect_origins(*, bucket: str, endpoint: str, explicit: str) -> list[str]:
    """Origins the editor's script may PUT uploads to besides our own: the S3 endpoint's (the
    presigned URLs point there), `UPLOAD_CONNECT_ORIGINS` (space-separated) if given."""
    if explicit.strip():
        return explicit.split()
    if not bucket:
        return []
    if endpoint:
        parts = urlsplit(endpoint)
        return [f"{parts.scheme}://{parts.netloc}"]
    return ["https://*.amazonaws.com"]


def content_security_policy(*, connect_origins: list[str]) -> dict[str, Any]:
    """django-csp's CONTENT_SECURITY_POLICY, with `connect_origins` allowed for uploads."""
    return {
        "DIRECTIVES": {
            "default-src": ["'self'"],
            "script-src": ["'self'"],
            "style-src": ["'self'"],
            "style-src-attr": ["'unsafe-inline'"],
            "img-src": ["'self'", "data:"],
            "connect-src": ["'self'", *connect_origins],
            "font-src": ["'self'"],
            "object-src": ["'none'"],
            "base-uri": ["'self'"],
            "form-action": ["'self'"],
            "frame-ancestors": ["'none'"],
        }
    }
