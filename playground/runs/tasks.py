"""Celery tasks of runs: thin, ids only, idempotent (docs/style.md, rule 7)."""

from celery import Task, shared_task
from django.conf import settings

from .fair import run_execute_next
from .services import run_execute as run_execute_service
from .services import runs_reap_stale as runs_reap_stale_service
from .services import runs_redispatch as runs_redispatch_service


# acks_late: the message is acknowledged after the run finished, so a worker that dies mid-run
# hands it back (reject_on_worker_lost). The re-delivery is harmless: run_execute claims only
# queued runs and fails a running one whose worker went silent, never sending the call twice.
#
# On a worker (a broker configured, RUN_FAIR_QUEUE on) the message is a turn: it executes the
# queued run of the account with the fewest running, so one account's flood cannot hold the
# queue (playground/runs/fair.py). Eagerly (the embedded default) it executes its own run.
@shared_task(name="playground.run_execute", acks_late=True, reject_on_worker_lost=True, bind=True)
def run_execute(self: Task, run_id: int) -> str:
    if settings.RUN_FAIR_QUEUE and not self.request.is_eager:
        return run_execute_next(run_id=run_id)
    return run_execute_service(run_id=run_id)


@shared_task(name="playground.runs_reap_stale")
def runs_reap_stale() -> int:
    """Periodic (CELERY_BEAT_SCHEDULE): fail runs whose worker vanished."""
    return runs_reap_stale_service()


@shared_task(name="playground.runs_redispatch")
def runs_redispatch() -> int:
    """Periodic (CELERY_BEAT_SCHEDULE): send queued runs whose message the broker never got
    (down when they were accepted) or lost."""
    return runs_redispatch_service()
