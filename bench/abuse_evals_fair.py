"""One account runs a 5,000-cell evaluation; how long does another account's run wait? (#31)

    .venv/bin/python bench/abuse_evals_fair.py [--rows 1000] [--repeat 5] [--scenarios fair]

The production set-up, started fresh by this script on loopback: gunicorn with uvicorn workers
(`make serve`) on PostgreSQL (BENCH_DATABASE_URL, default
postgres://postgres@127.0.0.1:5432/redline_abuse_bench, created if missing), a Redis broker
(BENCH_REDIS_URL, default redis://127.0.0.1:6379/8) and a real Celery worker (threads pool,
concurrency 4) consuming one queue for runs and evaluation cells. Runs use the offline `echo`
provider with RUN_ECHO_DELAY_MS=25.

For each scenario: a second account's run alone, POST → done (the baseline, "one run", median
of three); then the first account POSTs an evaluation of `--rows` × `--repeat` cells and at
once the second account POSTs one run: its POST → done is the delay. The evaluation is then
cancelled and the worker pinged: a worker that does not answer within 10 s is hung.

- `fair`: the shipped EVAL_USER_CELLS_IN_FLIGHT (cells handed to the queue a few at a time);
- `before`: EVAL_USER_CELLS_IN_FLIGHT lifted, every cell queued at once, as before issue #31
  (slow: the run waits behind the cells).

Prints `abuse: <measure> | <figure> | <target>` lines (bench/abuse.py joins them).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._servers import asgi_server, django_script, free_port, migrate, services_env  # noqa: E402
from bench.abuse_queue import _request, timed_run  # noqa: E402
from bench.api_throughput import ensure_database  # noqa: E402

DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/redline_abuse_bench"
DEFAULT_REDIS = "redis://127.0.0.1:6379/8"
CONCURRENCY = 4
SCENARIOS: dict[str, dict[str, str]] = {
    "fair": {},
    "before": {"EVAL_USER_CELLS_IN_FLIGHT": "1000000"},
}


def prepare(env: dict[str, str], tag: str, rows: int) -> dict[str, dict[str, str]]:
    """Two fresh accounts, each with an echo prompt and an API key; the first with a test set
    of `rows` rows."""
    out = django_script(
        env,
        f"""
        import json
        from accounts.services import api_token_create, user_create
        from evals.services.testsets import testset_create, testset_rows_parse
        from playground.models import Role
        from evals.models import EvalCell, Evaluation
        from playground.models import Run
        from playground.services import prompt_create

        # Earlier bench runs' queues and workers are gone: what they left unfinished would
        # take this run's turns.
        Run.objects.filter(status__in=("queued", "running")).update(status="cancelled")
        EvalCell.objects.filter(status__in=("queued", "running")).update(status="cancelled")
        Evaluation.objects.filter(status__in=("queued", "running")).update(status="cancelled")
        content = {{
            "provider": "echo",
            "system": "You are a senior reviewer of system designs.",
            "messages": [{{"role": "user", "content": "Review this design: {{{{design}}}}"}}],
            "variables": {{"design": "a write-through cache in front of PostgreSQL, sharded"}},
        }}
        found = {{}}
        for who in ("flood", "other"):
            user = user_create(username=f"{{who}}-{tag}", password="bench-pass-123")
            prompt, version = prompt_create(actor=user, title=f"{{who}} runs", content=content)
            _, key = api_token_create(actor=user)
            found[who] = {{"version": str(version.pk), "key": key, "prompt": str(prompt.pk)}}
            if who == "flood":
                revision = testset_create(
                    actor=user, prompt=prompt, role=Role.OWNER, name="flood",
                    rows=testset_rows_parse([{{"expected": str(i)}} for i in range({rows})]),
                )
                found[who]["testset"] = str(revision.testset_id)
        print(json.dumps(found))
        """,
    )
    return json.loads(out.splitlines()[-1])


def hung_workers(env: dict[str, str], name: str) -> int:
    out = django_script(
        env,
        f"""
        from celery import current_app
        print(len(current_app.control.ping(destination=[{name!r}], timeout=10)))
        """,
    )
    return 1 - int(out.splitlines()[-1])


def scenario(name: str, rows: int, repeat: int, db: str, broker: str) -> dict[str, float]:
    data_dir = Path(tempfile.mkdtemp(prefix=f"redline-bench-evals-{name}-"))
    queue = f"abuse-evals-{uuid.uuid4().hex[:8]}"
    env = services_env(
        data_dir=data_dir,
        db=db,
        broker=broker,
        RUN_TASK_QUEUE=queue,
        EVAL_TASK_QUEUE=queue,
        RUN_ECHO_DELAY_MS="25",
        LOG_LEVEL="WARNING",
        **SCENARIOS[name],
    )
    migrate(env)
    accounts = prepare(env, uuid.uuid4().hex[:8], rows)
    worker_name = f"{queue}@bench"
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "--pool=threads",
            f"--concurrency={CONCURRENCY}",
            "--loglevel=WARNING",
            "--without-gossip",
            "--without-mingle",
            "-Q",
            queue,
            "-n",
            worker_name,
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    port = free_port()
    server = asgi_server(port, env, "--workers", "2", "--log-level", "warning")
    flood, other = accounts["flood"], accounts["other"]
    evaluation_id = None
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                _request(port, "GET", "/api/v1/questions/", other["key"])
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        timed_run(port, other)  # warm up the worker and connections
        one = statistics.median(timed_run(port, other) for _ in range(3))
        start = time.perf_counter()
        status, body = _request(
            port,
            "POST",
            f"/api/v1/prompts/{flood['prompt']}/evals/",
            flood["key"],
            {
                "testset": int(flood["testset"]),
                "versions": [int(flood["version"])],
                "graders": [{"type": "contains", "value": "Review"}],
                "repeat": repeat,
            },
        )
        if status != 201:
            raise RuntimeError(f"evaluation POST answered {status}: {body}")
        evaluation_id = body["id"]
        posted = time.perf_counter() - start
        delay = timed_run(port, other)
        _, progress = _request(port, "GET", f"/api/v1/evals/{evaluation_id}/", flood["key"])
    finally:
        if evaluation_id is not None:
            _request(port, "POST", f"/api/v1/evals/{evaluation_id}/cancel/", flood["key"])
        hung = hung_workers(env, worker_name)
        server.terminate()
        server.wait(timeout=20)
        worker.terminate()
        worker.wait(timeout=30)
    return {
        "one": one,
        "delay": delay,
        "posted": posted,
        "cells": rows * repeat,
        "done_meanwhile": progress.get("progress", {}).get("done", 0),
        "hung": hung,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--scenarios", default="fair")
    args = parser.parse_args()
    db = os.environ.get("BENCH_DATABASE_URL", DEFAULT_DB)
    ensure_database(db)
    broker = os.environ.get("BENCH_REDIS_URL", DEFAULT_REDIS)
    for name in args.scenarios.split(","):
        r = scenario(name, args.rows, args.repeat, db, broker)
        ratio = r["delay"] / r["one"]
        label = {
            "fair": "cells in the account's share",
            "before": "every cell queued at once (before #31)",
        }[name]
        print(
            f"abuse: another user's run while one account runs a {r['cells']:,}-cell evaluation"
            f" ({label}) | {r['delay']:.2f} s = {ratio:.1f}× one run ({r['one']:.2f} s;"
            f" {r['done_meanwhile']} cells done meanwhile, evaluation POST {r['posted']:.2f} s)"
            f" | ≤ 2× one run",
            flush=True,
        )
        print(
            f"abuse: hung workers after the {r['cells']:,}-cell evaluation ({label}) |"
            f" {r['hung']} | 0",
            flush=True,
        )


if __name__ == "__main__":
    main()
