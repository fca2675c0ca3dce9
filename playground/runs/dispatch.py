"""Hand a committed run to whatever executes it.

With a broker: the Celery task, on the run queue. With eager tasks (the embedded default) the
task is applied eagerly too, but on a thread of the web process (`RUN_EAGER_MODE=thread`), so
the POST answers at once and the page can stream the run while it is produced; `inline` applies
it inside the request instead (tests that want the finished run straight away).

`dispatched_at` marks the run handed over (issue #31). A publish that fails because the broker
is down leaves it None, and the run stays queued, accepted: `runs_redispatch` (a beat task)
sends it once the broker is back, and sends again any queued run whose message is older than
RUN_REDISPATCH_SECONDS (Redis restarted empty). A spare message is a harmless turn: the run is
claimed once, and a turn that finds nothing queued does nothing.
"""

from __future__ import annotations

import logging
import threading

from celery import current_app
from celery.app.task import Task
from django.conf import settings
from django.db import close_old_connections, connections
from django.utils import timezone

from common.outage import BACKEND_DOWN

from ..models import Run

logger = logging.getLogger(__name__)

# The task by its name (playground/runs/tasks.py registers it): the task module imports the run
# services, which call this module, so importing it here would close a circle.
RUN_EXECUTE = "playground.run_execute"


def _task() -> Task:
    return current_app.tasks[RUN_EXECUTE]


def run_enqueue(*, run_id: int) -> bool:
    """Hand the run over; False when the broker is down (the run waits for the reaper)."""
    # Marked before the message exists: an update after publishing would hold the run's row
    # lock just as a worker's turn looks for it with SKIP LOCKED, and the turn would be lost.
    Run.objects.filter(pk=run_id).update(dispatched_at=timezone.now())
    if not current_app.conf.task_always_eager:
        try:
            _task().apply_async(args=[run_id], queue=settings.RUN_TASK_QUEUE)
        except BACKEND_DOWN:
            Run.objects.filter(pk=run_id).update(dispatched_at=None)
            logger.warning("run.dispatch_failed", extra={"run_id": run_id})
            return False
        return True
    if settings.RUN_EAGER_MODE == "inline":
        _task().apply(args=[run_id])
        return True
    thread = threading.Thread(
        target=run_in_thread, args=(run_id,), name=f"redline-run-{run_id}", daemon=True
    )
    thread.start()
    return True


def run_in_thread(run_id: int) -> None:
    """The eager task on its own thread, with its own database connection."""
    close_old_connections()
    try:
        _task().apply(args=[run_id])
    finally:
        connections.close_all()
