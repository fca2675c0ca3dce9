"""Logging filters. Share-link tokens sit in URL paths; they must never reach a log line.

A token may arrive percent-encoded (`/s/%72l_…`, `/api/v1/shared/rl%5F…/`): Django decodes the
path before routing, so such a request reaches the shared page just the same. `redact` therefore
looks at the decoded text too, and blanks whatever follows a share route's prefix, whatever it
looks like.
"""

import logging
import re
from urllib.parse import unquote

TOKEN = re.compile(r"rl_[A-Za-z0-9_\-]{8,}")
REDACTED = "rl_[redacted]"
# The segment after a share route's prefix is the token, however it is spelled.
SHARE_SEGMENT = re.compile(r"(/s/|/api/v1/shared/)(?!resume\b)[^/?#\s\"']+")
_DECODE_ROUNDS = 3  # %2572 → %72 → r: a few rounds cover any double encoding a client tries


def _decoded(text: str) -> str:
    for _ in range(_DECODE_ROUNDS):
        if "%" not in text:
            break
        decoded = unquote(text)
        if decoded == text:
            break
        text = decoded
    return text


def redact(text: str) -> str:
    """`text` with every share token (plain or percent-encoded) replaced by `rl_[redacted]`."""
    if "%" in text:
        decoded = _decoded(text)
        if decoded != text and (TOKEN.search(decoded) or SHARE_SEGMENT.search(decoded)):
            text = decoded  # log the decoded form: its token is blanked below
    text = SHARE_SEGMENT.sub(lambda m: m.group(1) + REDACTED, text)
    return TOKEN.sub(REDACTED, text)


def has_token(text: str) -> bool:
    return redact(text) != text


class RedactTokens(logging.Filter):
    """Replaces anything that looks like a share token in the message and its arguments."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(redact(a) if isinstance(a, str) else a for a in record.args)
        request = getattr(record, "request", None)
        if request is not None and has_token(getattr(request, "path", "")):
            # Django's handlers keep the request on the record; formatters may print it.
            record.request = None
        return True
