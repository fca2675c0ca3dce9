"""Celery application. Tasks run eagerly in-process unless CELERY_BROKER_URL is set."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("redline")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.task(name="redline.ping")
def ping() -> dict[str, object]:
    """Liveness check: says which process and host ran it (used by the services test)."""
    import socket

    return {"pid": os.getpid(), "host": socket.gethostname()}
