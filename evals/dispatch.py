"""Hand an evaluation's cells to whatever executes them.

With a broker: one `evals.cell_execute` task per cell on EVAL_TASK_QUEUE; a cell whose provider
is at its cap is retried shortly by the task itself. With eager tasks (the embedded default) a
background thread of the web process runs the cells on a small pool of EVAL_EAGER_THREADS threads
(one on SQLite, which takes one writer at a time), each with its own database connection, so
the POST answers at once and the page shows progress.
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from celery import current_app
from django.conf import settings
from django.db import close_old_connections, connection, connections

logger = logging.getLogger(__name__)


def evaluation_dispatch(*, evaluation_id: int, unfinished: bool = False) -> None:
    """Hand the evaluation's queued cells (with `unfinished`, its running ones too: the reaper's
    hand-off of a stalled evaluation) to workers, in matrix order."""
    from .models import EvalCell
    from .tasks import cell_execute

    statuses = [EvalCell.Status.QUEUED, *([EvalCell.Status.RUNNING] if unfinished else [])]
    cell_ids = list(
        EvalCell.objects.filter(evaluation_id=evaluation_id, status__in=statuses)
        .order_by("row__position", "target__position", "repeat_index")
        .values_list("pk", flat=True)
    )
    if not current_app.conf.task_always_eager:
        for cell_id in cell_ids:
            cell_execute.apply_async(args=[cell_id], queue=settings.EVAL_TASK_QUEUE)
        return
    if settings.EVAL_EAGER_MODE == "inline":
        _run_pool_inline(cell_ids)
        return
    thread = threading.Thread(
        target=_run_pool, args=(cell_ids,), name=f"redline-eval-{evaluation_id}", daemon=True
    )
    thread.start()


def _run_pool(cell_ids: list[int]) -> None:
    # SQLite takes one writer at a time: more threads would only queue on its lock.
    threads = 1 if connection.vendor == "sqlite" else settings.EVAL_EAGER_THREADS
    with ThreadPoolExecutor(max_workers=threads) as pool:
        list(pool.map(_run_one, cell_ids))


def _run_pool_inline(cell_ids: list[int]) -> None:
    """Every cell in the calling thread, in order (tests that want the finished evaluation)."""
    from .services import DEFERRED, cell_execute

    for cell_id in cell_ids:
        while cell_execute(cell_id=cell_id) == DEFERRED:
            time.sleep(settings.EVAL_DEFER_SECONDS)


def _run_one(cell_id: int) -> None:
    from .services import DEFERRED, cell_execute

    close_old_connections()
    try:
        while cell_execute(cell_id=cell_id) == DEFERRED:
            time.sleep(settings.EVAL_DEFER_SECONDS)
    except Exception:
        logger.exception("evaluation.cell_crashed", extra={"cell_id": cell_id})
    finally:
        connections.close_all()
