"""Gunicorn's access log, with share tokens redacted.

Gunicorn writes access lines itself; they never pass through Django's logging filters, so the
request line, path, query and Referer of a shared page would carry the token in full. This
logger scrubs every value before formatting, percent-encoded tokens included. Used by
`gunicorn.conf.py`.
"""

from typing import Any

from gunicorn.glogging import Logger

from common.logging import redact


class RedactingLogger(Logger):
    def atoms(self, resp: Any, req: Any, environ: Any, request_time: Any) -> dict[str, Any]:
        atoms = super().atoms(resp, req, environ, request_time)
        return {
            key: redact(value) if isinstance(value, str) else value for key, value in atoms.items()
        }
