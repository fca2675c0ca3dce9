"""Hand a committed run to whatever executes it.

With a broker: the Celery task, on the run queue. With eager tasks (the embedded default) the
task is applied eagerly too, but on a thread of the web process (`RUN_EAGER_MODE=thread`), so
the POST answers at once and the page can stream the run while it is produced; `inline` applies
it inside the request instead (tests that want the finished run straight away).
"""

from __future__ import annotations

import logging
import threading

from celery import current_app
from celery.app.task import Task
from django.conf import settings
from django.db import close_old_connections, connections

logger = logging.getLogger(__name__)

# The task by its name (playground/runs/tasks.py registers it): the task module imports the run
# services, which call this module, so importing it here would close a circle.
RUN_EXECUTE = "playground.run_execute"


def _task() -> Task:
    return current_app.tasks[RUN_EXECUTE]


def run_enqueue(*, run_id: int) -> None:
    if not current_app.conf.task_always_eager:
        _task().apply_async(args=[run_id], queue=settings.RUN_TASK_QUEUE)
        return
    if settings.RUN_EAGER_MODE == "inline":
        _task().apply(args=[run_id])
        return
    thread = threading.Thread(
        target=run_in_thread, args=(run_id,), name=f"redline-run-{run_id}", daemon=True
    )
    thread.start()


def run_in_thread(run_id: int) -> None:
    """The eager task on its own thread, with its own database connection."""
    close_old_connections()
    try:
        _task().apply(args=[run_id])
    finally:
        connections.close_all()
