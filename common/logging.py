"""Logging filters. Share-link tokens sit in URL paths; they must never reach a log line."""

import logging
import re

TOKEN = re.compile(r"rl_[A-Za-z0-9_\-]{8,}")
REDACTED = "rl_[redacted]"


class RedactTokens(logging.Filter):
    """Replaces anything that looks like a share token in the message and its arguments."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = TOKEN.sub(REDACTED, record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(
                TOKEN.sub(REDACTED, a) if isinstance(a, str) else a for a in record.args
            )
        request = getattr(record, "request", None)
        if request is not None and TOKEN.search(getattr(request, "path", "")):
            # Django's handlers keep the request on the record; formatters may print it.
            record.request = None
        return True
