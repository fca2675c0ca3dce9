"""Evaluations on real Celery workers: cells per second with 1 and 4 worker processes, and the
overhead of an evaluation cell over a bare run, measured in the same run.

    .venv/bin/python bench/evals.py [--rows 50] [--bare 100]

PostgreSQL (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/redline_evals_bench,
created if missing) and Redis (BENCH_REDIS_URL, default redis://127.0.0.1:6379/15). The echo
provider with no delay, so what is measured is Redline's own work: creating the cells, the task
hand-off, the run's claim/stream/finish writes and the grading.

An evaluation is 3 versions × 2 models × `rows` rows × 2 repeats (600 cells at 50 rows), graded
by `contains` (the row's expected text) and `max-output-tokens`. Each phase starts a fresh worker
(`celery worker --pool=prefork --concurrency=N`), creates the evaluation, and times it until its
last cell is graded. The baseline is `bare` plain runs queued at once through the ordinary runs
path on one worker process. The last line is `name=value` pairs.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._servers import django_script, migrate  # noqa: E402
from bench.api_throughput import ensure_database  # noqa: E402

DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/redline_evals_bench"
DEFAULT_REDIS = "redis://127.0.0.1:6379/15"

SETUP = """
import json
from django.contrib.auth import get_user_model
from accounts.services import user_create
from evals import services as eval_services
from playground.models import Role
from playground.services import prompt_create, prompt_version_create

user = get_user_model().objects.filter(username="bench").first()
user = user or user_create(username="bench", password="bench-pass-123")
content = {
    "provider": "echo",
    "model": "echo-1",
    "system": "You are a senior reviewer.",
    "messages": [{"role": "user", "content": "Review: {{design}}"}],
    "variables": {"design": ""},
}
prompt, v1 = prompt_create(actor=user, title="bench evals", content=content)
versions = [v1]
for n in (2, 3):
    content = {**content, "system": f"You are a senior reviewer, take {n}."}
    saved = prompt_version_create(actor=user, prompt=prompt, parent=versions[-1], content=content)
    versions.append(saved.version)
rows = [
    {"variables": {"design": f"design number {i}"}, "expected": "Echo" if i % 4 else "absent"}
    for i in range(ROWS)
]
parsed = eval_services.testset_rows_parse(rows)
revision = eval_services.testset_create(
    actor=user, prompt=prompt, role=Role.OWNER, name="bench", rows=parsed
)
fixture = {"prompt": prompt.pk, "versions": [v.pk for v in versions], "testset": revision.pk}
print(json.dumps(fixture))
"""

EVALUATE = """
import json, time
from django.contrib.auth import get_user_model
from evals.models import Evaluation, TestSetRevision
from evals.services import evaluation_create
from playground.models import Prompt, Role

user = get_user_model().objects.get(username="bench")
started = time.perf_counter()
evaluation = evaluation_create(
    actor=user,
    prompt=Prompt.objects.get(pk=FIXTURE["prompt"]),
    role=Role.OWNER,
    revision=TestSetRevision.objects.get(pk=FIXTURE["testset"]),
    versions=FIXTURE["versions"],
    models=[{"provider": "echo", "model": "echo-1"}, {"provider": "echo", "model": "echo-2"}],
    graders=[{"type": "contains"}, {"type": "max-output-tokens", "limit": 1000}],
    repeat=2,
)
created = time.perf_counter()
deadline = started + 900
while True:
    evaluation.refresh_from_db()
    if evaluation.status in Evaluation.FINISHED or time.perf_counter() > deadline:
        break
    time.sleep(0.05)
done = time.perf_counter()
graded = evaluation.cells.filter(status="graded").count()
print(json.dumps({
    "status": evaluation.status, "cells": evaluation.cells_total, "graded": graded,
    "create_s": created - started, "total_s": done - started,
}))
"""

BARE = """
import json, time
from django.contrib.auth import get_user_model
from playground.models import PromptVersion, Run
from playground.runs.services import run_create

user = get_user_model().objects.get(username="bench")
version = PromptVersion.objects.get(pk=FIXTURE["versions"][0])
started = time.perf_counter()
ids = [
    run_create(actor=user, version=version, variables={"design": f"bare {i}"}).run.pk
    for i in range(BARE)
]
while Run.objects.filter(pk__in=ids).exclude(status__in=Run.FINISHED).exists():
    time.sleep(0.05)
print(json.dumps({"total_s": time.perf_counter() - started, "runs": len(ids)}))
"""


def worker(env: dict[str, str], processes: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "--pool=prefork",
            f"--concurrency={processes}",
            "--loglevel=WARNING",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def phase(env: dict[str, str], processes: int, script: str) -> dict[str, float]:
    process = worker(env, processes)
    try:
        return json.loads(django_script(env, script).splitlines()[-1])
    finally:
        process.terminate()
        process.wait(timeout=60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=50)
    parser.add_argument("--bare", type=int, default=100)
    args = parser.parse_args()
    db = os.environ.get("BENCH_DATABASE_URL", DEFAULT_DB)
    broker = os.environ.get("BENCH_REDIS_URL", DEFAULT_REDIS)
    ensure_database(db)
    env = {k: v for k, v in os.environ.items() if not k.startswith("S3_")}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DATABASE_URL=db,
        CELERY_BROKER_URL=broker,
        REDIS_URL=broker,
        REDLINE_DATA_DIR=tempfile.mkdtemp(prefix="redline-bench-evals-"),
        RUN_ECHO_DELAY_MS="0",
        LOG_LEVEL="WARNING",
        EVAL_PROVIDER_CONCURRENCY="echo=64",
    )
    subprocess.run(["redis-cli", "-u", broker, "flushdb"], check=False, capture_output=True)
    migrate(env)
    fixture = json.loads(django_script(env, f"ROWS = {args.rows}\n" + SETUP).splitlines()[-1])
    prefix = f"FIXTURE = {json.dumps(fixture)}\nBARE = {args.bare}\n"
    bare = phase(env, 1, prefix + BARE)
    per_run_ms = 1000 * bare["total_s"] / bare["runs"]
    print(
        f"bare runs, 1 worker process: {bare['runs']} in {bare['total_s']:.2f} s "
        f"({per_run_ms:.1f} ms a run)"
    )
    figures: dict[str, float] = {"bare_run_ms": per_run_ms}
    for processes in (1, 4):
        result = phase(env, processes, prefix + EVALUATE)
        rate = result["graded"] / result["total_s"]
        print(
            f"{processes} worker process(es): {result['graded']}/{result['cells']} cells graded,"
            f" status {result['status']}, {result['total_s']:.2f} s"
            f" (creating the cells {result['create_s']:.2f} s): {rate:.1f} cells/s"
        )
        figures[f"cells_per_s_{processes}"] = rate
        if processes == 1:
            figures["cell_ms"] = 1000 * result["total_s"] / result["cells"]
    figures["overhead_per_cell_ms"] = figures["cell_ms"] - per_run_ms
    figures["scaling_4_vs_1"] = figures["cells_per_s_4"] / figures["cells_per_s_1"]
    print(" ".join(f"{k}={v:.3f}" for k, v in figures.items()))


if __name__ == "__main__":
    main()
