"""Gunicorn settings for Redline (`gunicorn -c gunicorn.conf.py config.asgi`; `make serve`).

Every value can be overridden on the command line. uvicorn workers serving the ASGI app, so an
open run stream (server-sent events) awaits in the worker's event loop instead of holding a
thread; the access log goes through a logger that redacts share-link tokens
(common/gunicorn.py).
"""

import os

bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
workers = int(os.environ.get("GUNICORN_WORKERS", "4"))
worker_class = "common.gunicorn.UvicornWorker"
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "60"))
# Seconds a worker gets to finish its requests on restart; open streams are cut then and the
# browser reconnects, resuming from its last event id.
graceful_timeout = int(os.environ.get("GUNICORN_GRACEFUL_TIMEOUT", "10"))
accesslog = os.environ.get("GUNICORN_ACCESS_LOG", "-")
errorlog = os.environ.get("GUNICORN_ERROR_LOG", "-")
logger_class = "common.gunicorn.RedactingLogger"
# Behind a reverse proxy: trust X-Forwarded-* only from these addresses.
forwarded_allow_ips = os.environ.get("GUNICORN_FORWARDED_ALLOW_IPS", "127.0.0.1")
