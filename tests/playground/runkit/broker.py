"""The broker as tests see it: messages read off a queue in the order workers would take them,
and the broker pointed at a closed port (down) for a while. Needs CELERY_BROKER_URL (Redis)."""

from __future__ import annotations

import socket
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from tests.playground.runkit.worker import needs_broker


@dataclass(frozen=True)
class Message:
    task: str
    args: list
    time_limits: list  # [hard, soft] as the message carries them; None: the worker's own


def fresh_queue(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


@contextmanager
def publishing(settings, queue: str) -> Iterator[str]:
    """This process publishes runs' and cells' tasks to `queue` instead of running them."""
    from config.celery import app

    needs_broker()
    settings.RUN_TASK_QUEUE = queue
    settings.EVAL_TASK_QUEUE = queue
    previous = app.conf.task_always_eager
    app.conf.task_always_eager = False
    try:
        yield queue
    finally:
        app.conf.task_always_eager = previous
        queue_purge(queue)


def queue_pop(queue: str, timeout: float = 2.0) -> Message | None:
    """The next message a worker consuming `queue` would take (removed), or None."""
    from config.celery import app

    with app.connection_for_read() as connection:
        simple = connection.SimpleQueue(queue, no_ack=True)
        try:
            message = simple.get(block=True, timeout=timeout)
        except simple.Empty:
            return None
        finally:
            simple.close()
        args, _kwargs, _embed = message.decode()
        return Message(
            task=message.headers["task"],
            args=list(args),
            time_limits=list(message.headers.get("timelimit") or [None, None]),
        )


def queue_purge(queue: str) -> None:
    from config.celery import app

    with app.connection_for_write() as connection:
        simple = connection.SimpleQueue(queue, no_ack=True)
        simple.clear()
        simple.close()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])  # closed again when this returns


def _reset_pools(app) -> None:
    app._pool = None
    app.amqp._producer_pool = None


@contextmanager
def broker_down() -> Iterator[None]:
    """Publishing fails (kombu's OperationalError) as when Redis is down, until exit."""
    from config.celery import app

    needs_broker()
    saved = app.conf.broker_write_url
    app.conf.broker_write_url = f"redis://127.0.0.1:{_closed_port()}/0"
    _reset_pools(app)
    try:
        yield
    finally:
        app.conf.broker_write_url = saved
        _reset_pools(app)
