"""Gunicorn's access log with share tokens redacted, and the ASGI worker Redline runs.

Gunicorn writes access lines itself; they never pass through Django's logging filters, so the
request line, path, query and Referer of a shared page would carry the token in full. The
logger scrubs every value before formatting (percent-encoded tokens included), and the uvicorn
worker (whose access lines go to gunicorn's access log through the `uvicorn.access` logger)
gets the same filter. Both are named by `gunicorn.conf.py`.
"""

import logging
from typing import Any, ClassVar

from gunicorn.glogging import Logger
from uvicorn_worker import UvicornWorker as _UvicornWorker

from common.logging import RedactTokens, redact


class RedactingLogger(Logger):
    def atoms(self, resp: Any, req: Any, environ: Any, request_time: Any) -> dict[str, Any]:
        atoms = super().atoms(resp, req, environ, request_time)
        return {
            key: redact(value) if isinstance(value, str) else value for key, value in atoms.items()
        }


class UvicornWorker(_UvicornWorker):
    """uvicorn's gunicorn worker, serving `config.asgi`: open event streams await in its event
    loop instead of holding a thread (docs/operations.md, "Run streams").

    - Access lines are redacted like gunicorn's own.
    - No lifespan protocol (Django has none), and no rewriting of the client address or scheme
      from X-Forwarded-* headers: the app reads those itself, with TRUSTED_PROXY_COUNT and
      SECURE_PROXY_SSL_HEADER, exactly as under a WSGI server.
    """

    CONFIG_KWARGS: ClassVar[dict[str, Any]] = {
        "loop": "auto",
        "http": "auto",
        "lifespan": "off",
        "proxy_headers": False,
    }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        access = logging.getLogger("uvicorn.access")
        if not any(isinstance(f, RedactTokens) for f in access.filters):
            access.addFilter(RedactTokens())
