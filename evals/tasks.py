"""Celery tasks of evaluations: thin, ids only, idempotent (docs/style.md, rule 7)."""

from celery import Task, shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings

from .dispatch import DEFER_SECONDS, NextCells, cell_ended_send_next
from .services.cells import DEFERRED, cell_time_out
from .services.cells import cell_execute as cell_execute_service
from .services.evaluations import evaluations_reap as evaluations_reap_service


# acks_late + reject_on_worker_lost: a worker that dies mid-cell hands the message back. The
# redelivery is harmless: the cell's run is found by its idempotency key, and run_execute never
# sends a call twice (a running run whose worker went silent is failed, not re-sent).
# A budget that cannot hang a worker (docs/evals.md, Graders under a budget): past the soft
# limit the cell is `error` and the task returns, so the message is acknowledged; past the hard
# limit (a child stuck where no signal reaches) the pool kills the child and Celery acknowledges
# the message as failed (acks_on_failure_or_timeout), never a redelivery; the cell, still
# running, is handed over by the reaper and given up after EVAL_CELL_GRADE_ATTEMPTS_MAX.
@shared_task(
    bind=True,
    name="evals.cell_execute",
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,  # the cell's row is its result (evals/dispatch.py, cells_publish)
    max_retries=None,
    soft_time_limit=settings.EVAL_CELL_SOFT_TIME_LIMIT,
    time_limit=settings.EVAL_CELL_SOFT_TIME_LIMIT + settings.EVAL_CELL_TIME_LIMIT_GRACE,
)
def cell_execute(self: Task, cell_id: int, user_id: int | None = None) -> str:
    # `user_id`: the cell's account (evals/dispatch.py sends it; older messages lack it). With
    # it, the cell's close hands over the account's next cells in its own transaction; when
    # the cell ends without that close (already finished, crashed), the task does it after.
    feed = NextCells(user_id=user_id) if user_id is not None else None
    try:
        status = cell_execute_service(cell_id=cell_id, feed=feed)
    except SoftTimeLimitExceeded:
        status = cell_time_out(cell_id=cell_id, feed=feed)
        _send_next(cell_id, user_id, feed)
        return status
    except Exception:
        # a crashed cell still gives up its place
        _send_next(cell_id, user_id, feed)
        raise
    if status == DEFERRED:
        # The provider is at its concurrency cap: try again shortly (not an error).
        raise self.retry(countdown=DEFER_SECONDS)
    # The account's next cell goes to the queue as this one ends (its fair share).
    _send_next(cell_id, user_id, feed)
    return status


def _send_next(cell_id: int, user_id: int | None, feed: NextCells | None) -> None:
    if feed is None or not feed.done:
        cell_ended_send_next(cell_id=cell_id, user_id=user_id)


@shared_task(
    name="evals.evaluations_reap",
    soft_time_limit=settings.EVAL_CELL_SOFT_TIME_LIMIT,
    time_limit=settings.EVAL_CELL_SOFT_TIME_LIMIT + settings.EVAL_CELL_TIME_LIMIT_GRACE,
)
def evaluations_reap() -> int:
    """Periodic (CELERY_BEAT_SCHEDULE): grade cells whose run finished unseen, and hand over
    cells the broker never got."""
    return evaluations_reap_service()
