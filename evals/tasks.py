"""Celery tasks of evaluations: thin, ids only, idempotent (docs/style.md, rule 7)."""

from celery import Task, shared_task
from django.conf import settings

from .dispatch import cell_ended_send_next
from .services import DEFERRED
from .services import cell_execute as cell_execute_service
from .services import evaluations_reap as evaluations_reap_service


# acks_late + reject_on_worker_lost: a worker that dies mid-cell hands the message back. The
# redelivery is harmless: the cell's run is found by its idempotency key, and run_execute never
# sends a call twice (a running run whose worker went silent is failed, not re-sent).
@shared_task(
    bind=True,
    name="evals.cell_execute",
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=None,
)
def cell_execute(self: Task, cell_id: int) -> str:
    try:
        status = cell_execute_service(cell_id=cell_id)
    except Exception:
        cell_ended_send_next(cell_id=cell_id)  # a crashed cell still gives up its place
        raise
    if status == DEFERRED:
        # The provider is at its concurrency cap: try again shortly (not an error).
        raise self.retry(countdown=settings.EVAL_DEFER_SECONDS)
    # The account's next cell goes to the queue as this one ends (its fair share).
    cell_ended_send_next(cell_id=cell_id)
    return status


@shared_task(name="evals.evaluations_reap")
def evaluations_reap() -> int:
    """Periodic (CELERY_BEAT_SCHEDULE): grade cells whose run finished unseen, and hand over
    cells the broker never got."""
    return evaluations_reap_service()
