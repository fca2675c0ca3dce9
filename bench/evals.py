"""Evaluations on real Celery workers: cells per second with 1, 2 and 4 worker processes, and
the overhead of an evaluation cell over a bare run, measured in the same run.

    .venv/bin/python bench/evals.py [--rows 50] [--processes 1 2 4] [--in-flight N]

PostgreSQL (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/redline_evals_bench,
created if missing) and Redis (BENCH_REDIS_URL, default redis://127.0.0.1:6379/15; flushed). The
echo provider with no delay, so what is measured is Redline's own work: the task hand-off, the
run's create/claim/stream/finish writes and, for a cell, the evaluation's machinery around it.

The evaluation is 3 versions × 2 models × `rows` rows × 2 repeats (600 cells at 50 rows), graded
by `contains` (the row's expected text) and `max-output-tokens`. Its **baseline** is the same
600 runs — same versions, models and variables — with the evaluation left out: created in one
transaction, then one `playground.run_execute` task each on the same queue (the fair run queue
off, so each task executes its own run, as a cell task does), timed from the first create to the
last run finished. For each process count a fresh worker
(`celery worker --pool=prefork --concurrency=N`) is started and warmed up (a ping, then a few
runs through every process) before anything is timed; then the baseline and the evaluation run
on it one after the other. Overhead per cell = (evaluation time − baseline time) ÷ cells, and
the ratio of the two times, both at each process count. The last line is `name=value` pairs.

The one account's in-flight cap (`EVAL_USER_CELLS_IN_FLIGHT`, 2 by default: issue #31's
fairness) is set to the process count, so its evaluation may use every process as the bare runs
do and the ratio is a cell's cost; `--in-flight 2` measures with the default cap, where at 4
processes one account's evaluation keeps 2 busy by design.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

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
from evals.services.testsets import testset_create, testset_rows_parse
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
parsed = testset_rows_parse(rows)
revision = testset_create(
    actor=user, prompt=prompt, role=Role.OWNER, name="bench", rows=parsed
)
fixture = {"prompt": prompt.pk, "versions": [v.pk for v in versions], "testset": revision.pk}
print(json.dumps(fixture))
"""

SESSION = """
import json, time
from django.contrib.auth import get_user_model
from django.db import transaction
from config.celery import app
from evals.models import Evaluation, TestSetRevision
from evals.services.evaluations import evaluation_create
from playground.models import Prompt, PromptVersion, Role, Run
from playground.runs.services import run_create
from playground.runs.tasks import run_execute

user = get_user_model().objects.get(username="bench")
versions = list(PromptVersion.objects.filter(pk__in=FIXTURE["versions"]).order_by("number"))
MODELS = ["echo-1", "echo-2"]


def runs_finished(ids):
    while Run.objects.filter(pk__in=ids).exclude(status__in=Run.FINISHED).exists():
        time.sleep(0.05)


def bare(combos):
    # The evaluation's runs without the evaluation: created together, one task per run.
    started = time.perf_counter()
    with transaction.atomic():
        ids = [
            run_create(
                actor=user, version=v, variables={"design": d}, provider="echo", model=m,
                enqueue=False,
            ).run.pk
            for v, m, d in combos
        ]
    created = time.perf_counter()
    for run_id in ids:
        run_execute.apply_async(args=[run_id], queue="celery")
    runs_finished(ids)
    return {"runs": len(ids), "create_s": created - started,
            "total_s": time.perf_counter() - started}


# Warm up: the worker answers, and every process has executed a few runs.
deadline = time.monotonic() + 120
while not app.control.ping(timeout=0.5):
    if time.monotonic() > deadline:
        raise SystemExit("the worker did not answer a ping")
bare([(versions[0], "echo-1", f"warm-up {i}") for i in range(4 * PROCESSES)])

rows = [f"design number {i}" for i in range(ROWS)]
baseline = bare([(v, m, d) for d in rows for v in versions for m in MODELS for _ in range(2)])

started = time.perf_counter()
evaluation = evaluation_create(
    actor=user,
    prompt=Prompt.objects.get(pk=FIXTURE["prompt"]),
    role=Role.OWNER,
    revision=TestSetRevision.objects.get(pk=FIXTURE["testset"]),
    versions=FIXTURE["versions"],
    models=[{"provider": "echo", "model": m} for m in MODELS],
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
    "bare": baseline,
    "status": evaluation.status, "cells": evaluation.cells_total, "graded": graded,
    "create_s": created - started, "total_s": done - started,
}))
"""


PROFILE = """
import cProfile, io, json, pstats, time
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from evals.dispatch import NextCells
from evals.models import EvalCell, TestSetRevision
from evals.services.cells import cell_execute
from evals.services.evaluations import evaluation_create
from playground.models import Prompt, PromptVersion, Role
from playground.runs.services import run_create, run_execute

user = get_user_model().objects.get(username="bench")
versions = list(PromptVersion.objects.filter(pk__in=FIXTURE["versions"]).order_by("number"))
N = ROWS * len(versions)


def bare():
    with transaction.atomic():
        ids = [
            run_create(actor=user, version=v, variables={"design": f"p {i}"}, provider="echo",
                       model="echo-1", enqueue=False).run.pk
            for i in range(ROWS) for v in versions
        ]
    for run_id in ids:
        run_execute(run_id=run_id)


def cells():
    evaluation = evaluation_create(
        actor=user, prompt=Prompt.objects.get(pk=FIXTURE["prompt"]), role=Role.OWNER,
        revision=TestSetRevision.objects.get(pk=FIXTURE["testset"]),
        versions=FIXTURE["versions"], models=[{"provider": "echo", "model": "echo-1"}],
        graders=[{"type": "contains"}, {"type": "max-output-tokens", "limit": 1000}],
    )
    # As the cell task calls it: the close hands over the account's next cells (the fair feed).
    for cell_id in EvalCell.objects.filter(evaluation=evaluation).values_list("pk", flat=True):
        cell_execute(cell_id=cell_id, feed=NextCells(user_id=user.pk))


out = {}
bare()  # warm-up
for name, job in (("bare", bare), ("cells", cells)):
    profiler = cProfile.Profile()
    with CaptureQueriesContext(connection) as queries:
        started, cpu = time.perf_counter(), time.process_time()
        profiler.enable()
        job()
        profiler.disable()
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats("cumulative").print_stats(25)
    out[name] = {"ms_each": 1000 * elapsed / N, "cpu_ms_each": 1000 * cpu / N,
                 "queries_each": len(queries) / N,
                 "profile": text.getvalue()}
print(json.dumps(out))
"""


def profile(env: dict[str, str], prefix: str) -> None:
    """Cells and bare runs executed in this process (no broker hop) under cProfile: time and
    statements per cell against per bare run, and where the time goes."""
    # The evaluation's tasks go to the broker, where no worker takes them: this process runs
    # every cell itself.
    result = json.loads(django_script(env, prefix + PROFILE).splitlines()[-1])
    for name in ("bare", "cells"):
        print(result[name]["profile"])
    bare, cells = result["bare"], result["cells"]
    # The CPU time is this process's alone (profiler included): on a busy machine it moves
    # less than the elapsed time, which also waits for the database and the CPU.
    print(
        f"in-process: a bare run {bare['ms_each']:.2f} ms ({bare['cpu_ms_each']:.2f} ms CPU),"
        f" {bare['queries_each']:.1f} statements; a cell {cells['ms_each']:.2f} ms"
        f" ({cells['cpu_ms_each']:.2f} ms CPU), {cells['queries_each']:.1f} statements"
        f" ({cells['ms_each'] / bare['ms_each']:.2f}× the bare run,"
        f" {cells['cpu_ms_each'] / bare['cpu_ms_each']:.2f}× its CPU)"
    )


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


def session(env: dict[str, str], processes: int, prefix: str, in_flight: int | None) -> dict:
    # The account's in-flight cap (EVAL_USER_CELLS_IN_FLIGHT, issue #31's fairness) is set to
    # the process count unless --in-flight names one: the bench's one account would otherwise
    # hold its evaluation to the cap's processes by design while the bare runs use them all,
    # and the ratio would measure the fairness rule, not a cell's cost.
    env = {**env, "EVAL_USER_CELLS_IN_FLIGHT": str(in_flight or processes)}
    process = worker(env, processes)
    try:
        return json.loads(
            django_script(env, prefix + f"PROCESSES = {processes}\n" + SESSION).splitlines()[-1]
        )
    finally:
        process.terminate()
        process.wait(timeout=60)


PROMPTFOO_SYSTEMS = ["You are a senior reviewer."] + [
    f"You are a senior reviewer, take {n}." for n in (2, 3)
]


def promptfoo_command() -> tuple[list[str] | None, str]:
    """How to run promptfoo (`npx --no-install promptfoo`), or None and why not: promptfoo
    needs Node ≥ 22 and a promptfoo npx can find (installed, or on PATH)."""
    node = shutil.which("node")
    if node is None:
        return None, "no node on PATH"
    version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip()
    major = int(version.lstrip("v").split(".")[0] or 0)
    if major < 22:
        return None, f"node {version} on PATH; promptfoo needs Node ≥ 22"
    found = shutil.which("promptfoo")
    command = [found] if found else ["npx", "--no-install", "promptfoo"]
    check = subprocess.run([*command, "--version"], capture_output=True, text=True, timeout=120)
    if check.returncode != 0:
        return None, "npx cannot find promptfoo (npm install promptfoo, or put it on PATH)"
    return command, f"promptfoo {check.stdout.strip()} on node {version}"


def promptfoo_rate(rows: int) -> dict[str, Any] | str:
    """The same matrix on promptfoo's echo provider — 3 prompts × 2 providers × `rows` tests ×
    2 repeats, graded by `contains` and `latency` — timed from the command's start to its end
    (Node's start-up included) and by promptfoo's own "Duration"; or why it was skipped."""
    command, why = promptfoo_command()
    if command is None:
        return why
    with tempfile.TemporaryDirectory(prefix="redline-bench-promptfoo-") as here:
        prompts = [
            json.dumps(
                [
                    {"role": "system", "content": s},
                    {"role": "user", "content": "Review: {{design}}"},
                ]
            )
            for s in PROMPTFOO_SYSTEMS
        ]
        tests = [
            {
                "vars": {"design": f"design number {i}"},
                "assert": [
                    {"type": "contains", "value": "Review" if i % 4 else "absent"},
                    {"type": "latency", "threshold": 1000},
                ],
            }
            for i in range(rows)
        ]
        config = {
            "prompts": prompts,
            "providers": [{"id": "echo", "label": "echo-1"}, {"id": "echo", "label": "echo-2"}],
            "tests": tests,
        }
        path = Path(here) / "promptfooconfig.yaml"
        path.write_text(json.dumps(config))  # JSON is YAML
        env = {
            **os.environ,
            "PROMPTFOO_CONFIG_DIR": here,
            "PROMPTFOO_DISABLE_TELEMETRY": "1",
            "PROMPTFOO_DISABLE_UPDATE": "1",
        }
        started = time.perf_counter()
        done = subprocess.run(
            [*command, "eval", "-c", str(path), "--repeat", "2", "--no-cache", "--no-table"]
            + ["--no-progress-bar", "-o", str(Path(here) / "out.json")],
            cwd=here,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        wall = time.perf_counter() - started
        results = json.loads((Path(here) / "out.json").read_text())["results"]["results"]
    own = re.search(r"Duration: (?:(\d+)m )?(\d+(?:\.\d+)?)s", done.stdout + done.stderr)
    duration = (int(own.group(1) or 0) * 60 + float(own.group(2))) if own else wall
    return {
        "cells": len(results),
        "wall_s": wall,
        "duration_s": duration,
        "passed": sum(1 for r in results if r.get("success")),
        "version": why,
    }


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=50)
    parser.add_argument("--processes", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument(
        "--in-flight",
        type=int,
        default=None,
        help="the account's in-flight cap (EVAL_USER_CELLS_IN_FLIGHT); default: the process count",
    )
    parser.add_argument(
        "--profile", action="store_true", help="profile cells and bare runs in-process, then stop"
    )
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
        RUN_FAIR_QUEUE="0",  # a bare run's task executes its own run, as a cell's does
        LOG_LEVEL="WARNING",
        EVAL_PROVIDER_CONCURRENCY="echo=64",
    )
    subprocess.run(["redis-cli", "-u", broker, "flushdb"], check=False, capture_output=True)
    migrate(env)
    fixture = json.loads(django_script(env, f"ROWS = {args.rows}\n" + SETUP).splitlines()[-1])
    prefix = f"FIXTURE = {json.dumps(fixture)}\nROWS = {args.rows}\n"
    if args.profile:
        profile(env, prefix)
        return
    print(f"load average before: {load()} ({os.cpu_count()} CPUs)")
    figures: dict[str, float] = {}
    for processes in args.processes:
        result = session(env, processes, prefix, args.in_flight)
        bare = result["bare"]
        rate = result["graded"] / result["total_s"]
        bare_rate = bare["runs"] / bare["total_s"]
        overhead_ms = 1000 * (result["total_s"] - bare["total_s"]) / result["cells"]
        ratio = result["total_s"] / bare["total_s"]
        print(
            f"{processes} worker process(es), in-flight cap {args.in_flight or processes}:"
            f" evaluation {result['graded']}/{result['cells']}"
            f" cells graded, status {result['status']}, {result['total_s']:.2f} s"
            f" (creating the cells {result['create_s']:.2f} s): {rate:.1f} cells/s;"
            f" bare {bare['runs']} runs {bare['total_s']:.2f} s"
            f" (creating them {bare['create_s']:.2f} s): {bare_rate:.1f} runs/s;"
            f" overhead {overhead_ms:+.1f} ms a cell, {ratio:.2f}× the bare time"
            f" [load {load()}]"
        )
        figures[f"cells_per_s_{processes}"] = rate
        figures[f"bare_runs_per_s_{processes}"] = bare_rate
        figures[f"overhead_ms_{processes}"] = overhead_ms
        figures[f"overhead_ratio_{processes}"] = ratio
    if 1 in args.processes:
        for processes in args.processes:
            if processes != 1:
                figures[f"scaling_{processes}_vs_1"] = (
                    figures[f"cells_per_s_{processes}"] / figures["cells_per_s_1"]
                )
    print(f"load average after: {load()}")
    promptfoo = promptfoo_rate(args.rows)
    if isinstance(promptfoo, str):
        print(f"promptfoo: skipped ({promptfoo})")
    else:
        best = max(v for k, v in figures.items() if k.startswith("cells_per_s_"))
        wall_rate = promptfoo["cells"] / promptfoo["wall_s"]
        own_rate = promptfoo["cells"] / max(promptfoo["duration_s"], 0.001)
        print(
            f"promptfoo ({promptfoo['version']}), echo, the same {promptfoo['cells']:.0f} cells:"
            f" {promptfoo['wall_s']:.2f} s from the command's start ({wall_rate:.1f} cells/s),"
            f" {promptfoo['duration_s']:.1f} s by its own Duration ({own_rate:.1f} cells/s);"
            f" Redline's best {best:.1f} cells/s [load {load()}]"
        )
        figures["promptfoo_cells_per_s"] = wall_rate
        figures["promptfoo_cells_per_s_own_duration"] = own_rate
    print(" ".join(f"{k}={v:.3f}" for k, v in figures.items()))


if __name__ == "__main__":
    main()
