"""Gunicorn settings for Redline (`gunicorn -c gunicorn.conf.py config.wsgi`).

Every value can be overridden on the command line. Threaded workers (gthread) so a streaming
response does not hold a whole worker process; the access log goes through a logger that
redacts share-link tokens (common/gunicorn.py).
"""

import os

bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
workers = int(os.environ.get("GUNICORN_WORKERS", "4"))
worker_class = "gthread"
threads = int(os.environ.get("GUNICORN_THREADS", "8"))
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "60"))
accesslog = os.environ.get("GUNICORN_ACCESS_LOG", "-")
errorlog = os.environ.get("GUNICORN_ERROR_LOG", "-")
logger_class = "common.gunicorn.RedactingLogger"
# Behind a reverse proxy: trust X-Forwarded-* only from these addresses.
forwarded_allow_ips = os.environ.get("GUNICORN_FORWARDED_ALLOW_IPS", "127.0.0.1")
