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
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from celery import current_app
from django.conf import settings
from django.db import close_old_connections, connection, connections

from .models import EvalCell

logger = logging.getLogger(__name__)

# What a cell's execution answers when its provider is at its concurrency cap: try again later.
DEFERRED = "deferred"
# The cell task by its name (evals/tasks.py registers it on the workers; the tasks call the
# services, which call this module: importing them here would close a circle). Eagerly, the
# services hand their own `cell_execute` in as `execute`.
CELL_TASK = "evals.cell_execute"

CellExecute = Callable[[int], str]  # cell id → the cell's status, or DEFERRED


def cells_dispatch(*, evaluation_id: int, execute: CellExecute, unfinished: bool = False) -> None:
    """Hand the evaluation's queued cells (with `unfinished`, its running ones too: the reaper's
    hand-off of a stalled evaluation) to workers, in matrix order. `execute` runs one cell when
    tasks are eager (the embedded default)."""
    statuses = [EvalCell.Status.QUEUED, *([EvalCell.Status.RUNNING] if unfinished else [])]
    cell_ids = list(
        EvalCell.objects.filter(evaluation_id=evaluation_id, status__in=statuses)
        .order_by("row__position", "target__position", "repeat_index")
        .values_list("pk", flat=True)
    )
    if not current_app.conf.task_always_eager:
        for cell_id in cell_ids:
            current_app.send_task(CELL_TASK, args=[cell_id], queue=settings.EVAL_TASK_QUEUE)
        return
    if settings.EVAL_EAGER_MODE == "inline":
        _run_pool_inline(cell_ids, execute)
        return
    thread = threading.Thread(
        target=_run_pool,
        args=(cell_ids, execute),
        name=f"redline-eval-{evaluation_id}",
        daemon=True,
    )
    thread.start()


def _run_pool(cell_ids: list[int], execute: CellExecute) -> None:
    # SQLite takes one writer at a time: more threads would only queue on its lock.
    threads = 1 if connection.vendor == "sqlite" else settings.EVAL_EAGER_THREADS
    with ThreadPoolExecutor(max_workers=threads) as pool:
        list(pool.map(lambda cell_id: _run_one(cell_id, execute), cell_ids))


def _run_pool_inline(cell_ids: list[int], execute: CellExecute) -> None:
    """Every cell in the calling thread, in order (tests that want the finished evaluation)."""
    for cell_id in cell_ids:
        while execute(cell_id) == DEFERRED:
            time.sleep(settings.EVAL_DEFER_SECONDS)


def _run_one(cell_id: int, execute: CellExecute) -> None:
    close_old_connections()
    try:
        while execute(cell_id) == DEFERRED:
            time.sleep(settings.EVAL_DEFER_SECONDS)
    except Exception:
        logger.exception("evaluation.cell_crashed", extra={"cell_id": cell_id})
    finally:
        connections.close_all()
