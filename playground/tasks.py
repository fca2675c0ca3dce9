"""Celery tasks of the playground: thin, ids only, idempotent (docs/style.md, rule 7).

The runs' tasks are in playground/runs/tasks.py; Celery finds both (the app's `ready()` imports
them, and the worker loads the apps)."""

from celery import shared_task

from .text.uploads import uploads_expire as uploads_expire_service


@shared_task(name="playground.uploads_expire")
def uploads_expire() -> int:
    """Periodic (CELERY_BEAT_SCHEDULE): delete uploads never used once they expired."""
    return uploads_expire_service()
