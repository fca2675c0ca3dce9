"""Hand a delivery to whatever sends it.

With a broker: the `webhooks.deliver` task on WEBHOOK_TASK_QUEUE (a retry is the same task sent
again with a countdown). With eager tasks (the embedded default) a daemon thread of the web
process sends it and sleeps between retries, so no request ever waits on a receiver;
WEBHOOK_EAGER_MODE=inline sends in the calling thread (tests that want the outcome at once).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from celery import current_app
from django.conf import settings
from django.db import close_old_connections, connections

logger = logging.getLogger(__name__)

# By name: tasks.py imports the services, which call this module.
DELIVER_TASK = "webhooks.deliver"

# One attempt at a delivery: the seconds to wait before the next one, or None when it is over.
Attempt = Callable[[int], float | None]


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
        _until_done(delivery_id, attempt, countdown)
        return
    thread = threading.Thread(
        target=_on_thread,
        args=(delivery_id, attempt, countdown),
        name=f"redline-webhook-{delivery_id}",
        daemon=True,
    )
    thread.start()


def _until_done(delivery_id: int, attempt: Attempt, countdown: float) -> None:
    wait: float | None = countdown
    while wait is not None:
        if wait:
            time.sleep(wait)
        wait = attempt(delivery_id)


def _on_thread(delivery_id: int, attempt: Attempt, countdown: float) -> None:
    close_old_connections()
    try:
        _until_done(delivery_id, attempt, countdown)
    except Exception:
        logger.exception("webhook.delivery_crashed", extra={"delivery_id": delivery_id})
    finally:
        connections.close_all()
