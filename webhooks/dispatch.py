"""Hand a delivery to whatever sends it.

With a broker: the `webhooks.deliver` task on WEBHOOK_TASK_QUEUE (a retry is the same task sent
again with a countdown). With eager tasks (the embedded default) a small pool of
WEBHOOK_EAGER_THREADS threads of the web process sends, and a retry waits on a timer (holding
no pool thread), so no request waits on a receiver and receivers that never answer hold at most
that many threads; WEBHOOK_EAGER_MODE=inline sends in the calling thread (tests that want the
outcome at once).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from celery import current_app
from django.conf import settings
from django.db import close_old_connections, connections

logger = logging.getLogger(__name__)

# By name: tasks.py imports the services, which call this module.
DELIVER_TASK = "webhooks.deliver"

# One attempt at a delivery: the seconds to wait before the next one, or None when it is over.
Attempt = Callable[[int], float | None]

_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_in_flight = 0  # deliveries the eager sender has not finished (queued, sending or waiting)
_idle = threading.Condition(_lock)


def delivery_dispatch(*, delivery_id: int, attempt: Attempt, countdown: float = 0) -> None:
    if not current_app.conf.task_always_eager:
        current_app.send_task(
            DELIVER_TASK,
            args=[delivery_id],
            queue=settings.WEBHOOK_TASK_QUEUE,
            countdown=countdown or None,
        )
        return
    if settings.WEBHOOK_EAGER_MODE == "inline":
        wait: float | None = countdown
        while wait is not None:
            if wait:
                time.sleep(wait)
            wait = attempt(delivery_id)
        return
    global _in_flight
    with _lock:
        _in_flight += 1
    _submit(delivery_id, attempt, countdown)


def _submit(delivery_id: int, attempt: Attempt, countdown: float) -> None:
    global _pool
    if countdown:
        timer = threading.Timer(countdown, _submit, args=(delivery_id, attempt, 0))
        timer.daemon = True
        timer.start()
        return
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(
                max_workers=settings.WEBHOOK_EAGER_THREADS, thread_name_prefix="redline-webhook"
            )
        pool = _pool
    pool.submit(_attempt_once, delivery_id, attempt)


def _attempt_once(delivery_id: int, attempt: Attempt) -> None:
    global _in_flight
    close_old_connections()
    wait: float | None = None
    try:
        wait = attempt(delivery_id)
    except Exception:
        logger.exception("webhook.delivery_crashed", extra={"delivery_id": delivery_id})
    finally:
        connections.close_all()
    if wait is not None:
        _submit(delivery_id, attempt, wait)
        return
    with _lock:
        _in_flight -= 1
        _idle.notify_all()


def eager_drain(timeout: float) -> bool:
    """Wait until the eager sender has finished every delivery it was given (tests; a graceful
    stop). True when it is idle."""
    with _lock:
        return _idle.wait_for(lambda: _in_flight == 0, timeout)
