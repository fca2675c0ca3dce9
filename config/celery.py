"""Celery application. Tasks run eagerly in-process unless CELERY_BROKER_URL is set."""

import os

from celery import Celery
from celery.signals import setup_logging

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("redline")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@setup_logging.connect
def _django_logging(**kwargs: object) -> None:
    """A worker logs through Django's LOGGING (JSON lines with the task id, common/logging.py)
    instead of replacing the root logger's handlers with Celery's own format."""
    import logging.config

    from django.conf import settings

    logging.config.dictConfig(settings.LOGGING)


@app.task(name="redline.ping")
def ping() -> dict[str, object]:
    """Liveness check: says which process and host ran it (used by the services test)."""
    import socket

    return {"pid": os.getpid(), "host": socket.gethostname()}
