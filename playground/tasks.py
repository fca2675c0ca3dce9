"""Celery tasks of the playground: thin, ids only, idempotent (STYLE.md rule 7)."""

from celery import shared_task

from .runs.services import run_execute as run_execute_service
from .runs.services import runs_reap_stale as runs_reap_stale_service
from .uploads import uploads_expire as uploads_expire_service


# acks_late: the message is acknowledged after the run finished, so a worker that dies mid-run
# hands it back (reject_on_worker_lost). The re-delivery is harmless: run_execute claims only
# queued runs and fails a running one whose worker went silent, never sending the call twice.
@shared_task(name="playground.run_execute", acks_late=True, reject_on_worker_lost=True)
def run_execute(run_id: int) -> str:
    return run_execute_service(run_id=run_id)


@shared_task(name="playground.runs_reap_stale")
def runs_reap_stale() -> int:
    """Periodic (CELERY_BEAT_SCHEDULE): fail runs whose worker vanished."""
    return runs_reap_stale_service()


@shared_task(name="playground.uploads_expire")
def uploads_expire() -> int:
    """Periodic (CELERY_BEAT_SCHEDULE): delete uploads never used once they expired."""
    return uploads_expire_service()
