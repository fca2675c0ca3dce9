"""A poisoned grader against a real Celery worker: does its cell end, and are the workers free?
(issue #31)

    .venv/bin/python bench/abuse_evals_budget.py

PostgreSQL (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/redline_abuse_budget,
created if missing), a Redis broker (BENCH_REDIS_URL, default redis://127.0.0.1:6379/12) and a
real Celery worker as production runs it (prefork, two children) on a queue of its own. The
cells use the offline `echo` provider, whose reply quotes the row's value: a 60-letter word.
The grader is a `regex` grader with `(\\w|\\w\\w)*$`, which takes exponential time on that word
(with Python's `re`, which jsonschema used, nothing can stop it; the baseline row shows it).

Scenarios, each with a fresh worker, warmed up by two ordinary cells first:

- `budget`: the shipped regex budget (EVAL_REGEX_BUDGET_SECONDS, 0.25 s): the grader gives up and
  the cell is graded (failed, with the reason);
- `limit`: a regex budget of 600 s, past the cell's time limit (EVAL_CELL_SOFT_TIME_LIMIT, 10 s
  here): only the time limit can stop it; the cell must end `error` within the limit plus the
  grace, its message acknowledged.

After the poisoned cell, four ordinary cells: a worker child still stuck would leave some of them
waiting. "Hung workers" counts children that are still busy (`inspect().active()`) once those
cells are done, or that never took one.

Prints `abuse: <measure> | <figure> | <target>` lines (bench/abuse.py joins them).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._servers import ensure_database, migrate, services_env  # noqa: E402

DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/redline_abuse_budget"
DEFAULT_REDIS = "redis://127.0.0.1:6379/12"
POISON = r"(\w|\w\w)*$"
WORD = "a" * 60 + "!"
CHILDREN = 2
SOFT_LIMIT = 10
GRACE = 5
SCENARIOS = {
    "budget": {"EVAL_CELL_SOFT_TIME_LIMIT": str(SOFT_LIMIT)},
    "limit": {"EVAL_CELL_SOFT_TIME_LIMIT": str(SOFT_LIMIT), "EVAL_REGEX_BUDGET_SECONDS": "600"},
}


def row(measure: str, figure: str, target: str) -> None:
    print(f"abuse: {measure} | {figure} | {target}", flush=True)


def re_baseline(seconds: float = 10.0) -> str:
    """The same pattern and text under Python's `re`, in a child killed after `seconds`."""
    code = f"import re; re.search({POISON!r}, 'Review this design: ' + {WORD!r} + '. max')"
    started = time.monotonic()
    try:
        subprocess.run([sys.executable, "-c", code], timeout=seconds, check=True)
    except subprocess.TimeoutExpired:
        return f"still matching after {seconds:g} s (killed)"
    return f"ended after {time.monotonic() - started:.1f} s"


def start_worker(env: dict[str, str], queue: str) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "--pool=prefork",
            f"--concurrency={CHILDREN}",
            "--prefetch-multiplier=1",
            "-O",
            "fair",
            "--loglevel=WARNING",
            "--without-gossip",
            "--without-mingle",
            "-Q",
            queue,
            "-n",
            f"{queue}@bench",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def scenario(name: str, base_env: dict[str, str]) -> None:
    from celery import current_app
    from django.conf import settings

    from accounts.services import user_create
    from evals.models import EvalCell
    from evals.services.evaluations import evaluation_create
    from evals.services.testsets import testset_create, testset_rows_parse
    from playground.models import Role
    from playground.services import prompt_create

    queue = f"budget-{name}-{uuid.uuid4().hex[:8]}"
    settings.EVAL_TASK_QUEUE = queue  # where this process publishes the cells
    env = {**base_env, **SCENARIOS[name], "EVAL_TASK_QUEUE": queue}
    worker = start_worker(env, queue)
    try:
        deadline = time.monotonic() + 120
        while not current_app.control.ping(destination=[f"{queue}@bench"], timeout=1):
            if time.monotonic() > deadline or worker.poll() is not None:
                raise SystemExit("the celery worker did not answer a ping")
        owner = user_create(username=f"budget-{uuid.uuid4().hex[:8]}", password="bench-pass-123")
        content = {
            "provider": "echo",
            "model": "echo-1",
            "messages": [{"role": "user", "content": "Review this design: {{design}}"}],
            "variables": {"design": "x"},
        }
        prompt, version = prompt_create(actor=owner, title="poison", content=content)

        def evaluation(rows: list[str], graders: list[dict]) -> list[int]:
            revision = testset_create(
                actor=owner,
                prompt=prompt,
                role=Role.OWNER,
                name="t",
                rows=testset_rows_parse([{"variables": {"design": v}} for v in rows]),
            )
            created = evaluation_create(
                actor=owner,
                prompt=prompt,
                role=Role.OWNER,
                revision=revision,
                versions=[version.pk],
                graders=graders,
            )
            return list(EvalCell.objects.filter(evaluation=created).values_list("pk", flat=True))

        def wait(cells: list[int], timeout: float) -> bool:
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                if not EvalCell.objects.filter(
                    pk__in=cells, status__in=("queued", "running")
                ).exists():
                    return True
                time.sleep(0.05)
            return False

        ordinary = [{"type": "contains", "value": "Echo"}]
        warm = evaluation(["warm one", "warm two"], ordinary)
        if not wait(warm, 180):
            raise SystemExit("the warm-up cells did not end")
        started = time.monotonic()
        (poisoned,) = evaluation([WORD], [{"type": "regex", "pattern": POISON}])
        ended = wait([poisoned], SOFT_LIMIT + GRACE + 60)
        seconds = time.monotonic() - started
        cell = EvalCell.objects.get(pk=poisoned)
        reason = (cell.error or (cell.grades[0]["reason"] if cell.grades else ""))[:70]
        after = evaluation([f"after {i}" for i in range(2 * CHILDREN)], ordinary)
        after_done = wait(after, 120)
        active = current_app.control.inspect(destination=[f"{queue}@bench"], timeout=2).active()
        busy = sum(len(tasks) for tasks in (active or {}).values())
        took = EvalCell.objects.filter(pk__in=after, status="graded").count()
        if name == "budget":
            row(
                "poisoned regex grader, shipped budget: the cell's end",
                f"{cell.status} in {seconds:.2f} s"
                + ("" if ended else " (NOT ended)")
                + f" — “{reason}”",
                f"graded (failed) within the {settings.EVAL_REGEX_BUDGET_SECONDS:g} s budget"
                " plus one echo run",
            )
        else:
            row(
                f"poisoned regex grader, budget 600 s > cell limit {SOFT_LIMIT} s: the cell's end",
                f"{cell.status} in {seconds:.1f} s (limit {SOFT_LIMIT} s, hard"
                f" {SOFT_LIMIT + GRACE} s; grading started {cell.grade_attempts}×)"
                + ("" if ended else " (NOT ended)"),
                f"error within {SOFT_LIMIT} s + one echo run, acknowledged (started once)",
            )
        row(
            f"hung workers after the poisoned cell ({name})",
            f"{busy} busy of {CHILDREN}; {took} of {len(after)} later cells graded"
            + ("" if after_done else " (NOT all ended)"),
            f"0 hung, {len(after)} of {len(after)} graded",
        )
    finally:
        worker.terminate()
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            worker.kill()


def main() -> None:
    db = os.environ.get("BENCH_DATABASE_URL", DEFAULT_DB)
    broker = os.environ.get("BENCH_REDIS_URL", DEFAULT_REDIS)
    ensure_database(db)
    data_dir = Path(tempfile.mkdtemp(prefix="redline-bench-budget-"))
    env = services_env(
        data_dir=data_dir,
        db=db,
        broker=broker,
        RUN_ECHO_DELAY_MS="0",
        EVALS_ACTIVE_PER_USER="100",
        EVAL_CELL_TIME_LIMIT_GRACE=str(GRACE),
        LOG_LEVEL="WARNING",
    )
    migrate(env)
    row("the poisoned pattern under Python's re (baseline)", re_baseline(), "—")
    os.environ.update(env)
    import django

    django.setup()
    for name in SCENARIOS:
        scenario(name, env)


if __name__ == "__main__":
    main()
