"""A real Celery worker for run tests, on its own queue and with its own provider settings."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest

EXPECT_SERVICES = os.environ.get("REDLINE_EXPECT_SERVICES") == "1"


@dataclass(frozen=True)
class Worker:
    process: subprocess.Popen
    queue: str
    name: str


def needs_broker() -> None:
    from django.conf import settings

    if not settings.CELERY_BROKER_URL:
        if EXPECT_SERVICES:
            pytest.fail("CELERY_BROKER_URL is not set in the services pass")
        pytest.skip("needs CELERY_BROKER_URL (Redis) for a real Celery worker")


def _database_url() -> str:
    from django.conf import settings
    from django.db import connection

    db = settings.DATABASES["default"]
    if db["ENGINE"].endswith("postgresql"):
        user = db.get("USER") or ""
        host = db.get("HOST") or "127.0.0.1"
        port = db.get("PORT") or 5432
        return f"postgres://{user}@{host}:{port}/{connection.settings_dict['NAME']}"
    return f"sqlite:///{connection.settings_dict['NAME']}"


@contextmanager
def run_worker(
    *, queue: str | None = None, pool: str = "solo", **env_values: str
) -> Iterator[Worker]:
    """Start a worker (one process: the solo pool; `pool="prefork"` for one child, which time
    limits need) that consumes `queue` (default: a fresh one); stop (or find killed) at exit. A
    worker started on the queue of a killed one takes over its messages."""
    from config.celery import app

    needs_broker()
    queue = queue or f"runs-test-{uuid.uuid4().hex[:10]}"
    name = f"{queue}-{uuid.uuid4().hex[:6]}@{socket.gethostname()}"
    env = dict(os.environ)
    env.update(
        DATABASE_URL=_database_url(), DB_CONN_MAX_AGE="0", RUN_TASK_QUEUE=queue, **env_values
    )
    # A cell's task sends the account's next cell from the worker (evals/dispatch.py): to the
    # queue this worker consumes unless the caller names another.
    env["EVAL_TASK_QUEUE"] = env_values.get("EVAL_TASK_QUEUE", queue)
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            f"--pool={pool}",
            "--concurrency=1",
            "--loglevel=WARNING",
            "--without-gossip",
            "--without-mingle",
            "-Q",
            queue,
            "-n",
            name,
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not app.control.ping(destination=[name], timeout=0.5):
            if process.poll() is not None:
                pytest.fail(f"celery worker exited with {process.returncode}")
            if time.monotonic() > deadline:
                pytest.fail("celery worker did not answer a ping within 60 s")
        yield Worker(process=process, queue=queue, name=name)
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)
