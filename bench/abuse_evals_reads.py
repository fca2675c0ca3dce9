"""Reading an evaluation whose rows carry 2 MB of undeclared variables (issue #31), against the
production server (gunicorn + uvicorn workers, `config.asgi`) on PostgreSQL.

    BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/redline_abuse_evals_reads \\
        .venv/bin/python bench/abuse_evals_reads.py [--rows 25] [--mib 2] [--rounds 3]

The database named by BENCH_DATABASE_URL is migrated and emptied (`flush`: give the bench its
own); objects go to a temporary local store.

1. Seeds two evaluations of the same 600 cells (`--rows` rows × 3 versions × 2 echo models ×
   4 repeats), run to the end on the echo provider: the *lean* one's rows hold only the
   variable the versions declare; the *heavy* one's rows hold the same plus `--mib` MiB of
   variables no version declares (20 values of 100,000 characters for 2 MiB).
2. Reads each as the red team did — the results page (all rows, failures only, a word diff),
   the results API (every page of 500) and both exports, `--rounds` times — lean first (the
   baseline of the same run), then heavy, and prints the worker's RSS growth (VmRSS, /proc)
   over its RSS after a warm-up, and its peak (VmHWM).

Prints one `abuse: <measure> | <figure> | <target>` line per row.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._servers import (  # noqa: E402
    asgi_server,
    django_script,
    ensure_database,
    free_port,
    migrate,
    wait_for_port,
)
from bench.large_prompt import Client, browser_session, status_kb, worker_pid  # noqa: E402

MIB = 1024 * 1024
PASSWORD = "red-team-password-1"
TARGET_MB = 64


def row(measure: str, figure: str, target: str) -> None:
    print(f"abuse: {measure} | {figure} | {target}", flush=True)


SEED = """
import json
from accounts.services import api_token_create, user_create
from evals.services.evaluations import evaluation_create, evaluation_dispatch
from evals.services.testsets import testset_create, testset_rows_parse
from playground.models import Role
from playground.services import prompt_create, prompt_version_create

owner = user_create(username="owner", password={password!r})

def content(system):
    return {{"provider": "echo", "model": "echo-1", "system": system,
            "variables": {{"design": "a cache"}},
            "messages": [{{"role": "user", "content": "Review this design: {{{{design}}}}"}}]}}

prompt, v1 = prompt_create(actor=owner, title="reads", content=content("Be careful."))
def child(parent, system):
    return prompt_version_create(
        actor=owner, prompt=prompt, parent=parent, content=content(system)
    ).version

v2 = child(v1, "Be brief.")
v3 = child(v2, "Be kind.")
values = max(1, {mib} * 1024 * 1024 // 100_000)
undeclared = {{f"blob{{i:02d}}": f"{{i:02d}}" + "x" * 99_998 for i in range(values)}}
ids = {{}}
for name, extra in (("lean", {{}}), ("heavy", undeclared)):
    rows = testset_rows_parse(
        [{{"variables": {{"design": f"design {{n}}", **extra}}, "expected": "design"}}
         for n in range({rows})]
    )
    revision = testset_create(
        actor=owner, prompt=prompt, role=Role.OWNER, name=name, rows=rows
    )
    evaluation = evaluation_create(
        actor=owner, prompt=prompt, role=Role.OWNER, revision=revision,
        versions=[v1.pk, v2.pk, v3.pk],
        models=[
            {{"provider": "echo", "model": "echo-1"}}, {{"provider": "echo", "model": "echo-2"}}
        ],
        graders=[{{"type": "contains"}}], repeat=4,
    )
    evaluation_dispatch(evaluation_id=evaluation.pk)
    evaluation.refresh_from_db()
    assert evaluation.status == "done", (evaluation.status, evaluation.cells_done)
    ids[name] = evaluation.pk
_, key = api_token_create(actor=owner)
print(json.dumps({{"ids": ids, "cells": evaluation.cells_total, "key": key}}))
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=25)
    parser.add_argument("--mib", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--verbose", action="store_true", help="show the server's log")
    args = parser.parse_args()
    database = os.environ.get(
        "BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/redline_abuse_evals_reads"
    )
    if not database.startswith("postgres"):
        raise SystemExit("set BENCH_DATABASE_URL to a PostgreSQL database of the bench's own")
    ensure_database(database)

    with tempfile.TemporaryDirectory(prefix="redline-abuse-evals-reads-") as workdir:
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATABASE_URL": database,
            "REDLINE_DATA_DIR": str(Path(workdir) / "data"),
            "OBJECT_STORE_DIR": str(Path(workdir) / "objects"),
            "S3_BUCKET": "",
            "REDIS_URL": "",
            "CELERY_BROKER_URL": "",
            "RUN_EAGER_MODE": "inline",
            "EVAL_EAGER_MODE": "inline",
            "RUN_ECHO_DELAY_MS": "0",
            # The heavy test set is rows × MiB of content: above the default quota on purpose.
            "EVAL_TESTSET_STORAGE_PER_USER": str((args.rows * args.mib + 64) * MIB),
            "LOG_LEVEL": "WARNING",
            "GUNICORN_WORKERS": "1",
            "GUNICORN_THREADS": "4",
            "GUNICORN_TIMEOUT": "600",
            "GUNICORN_ACCESS_LOG": "/dev/null",
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
        }
        migrate(env)
        django_script(
            env,
            "from django.core.management import call_command\n"
            "call_command('flush', interactive=False)",
        )
        started = time.perf_counter()
        seeded = json.loads(
            django_script(
                env, SEED.format(password=PASSWORD, rows=args.rows, mib=args.mib)
            ).splitlines()[-1]
        )
        print(f"seeded in {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
        port = free_port()
        server = asgi_server(port, env, quiet=not args.verbose)
        try:
            wait_for_port(port)
            worker = worker_pid(server.pid)
            base = f"http://127.0.0.1:{port}"
            page = browser_session(port, "owner", PASSWORD)
            api = Client(port=port, key=seeded["key"])
            cells = seeded["cells"]

            def read(evaluation: int) -> dict[str, int]:
                """Every read surface once; the bytes each answered."""
                sizes: dict[str, int] = {}
                for name, path in (
                    ("page", f"/evals/{evaluation}/"),
                    ("failures", f"/evals/{evaluation}/?show=failures"),
                    ("diff", f"/evals/{evaluation}/?a=0&b=1"),
                    ("export.csv", f"/evals/{evaluation}/export.csv"),
                    ("export.json", f"/evals/{evaluation}/export.json"),
                ):
                    sizes[name] = len(page.open(base + path).read())
                sizes["api"] = 0
                for offset in range(0, cells, 500):
                    status, body = api.request(
                        "GET", f"/api/v1/evals/{evaluation}/results/?limit=500&offset={offset}"
                    )
                    assert status == 200, (status, body[:300])
                    sizes["api"] += len(body)
                return sizes

            # Warm up: the first requests import and connect; measure from there.
            page.open(f"{base}/evals/{seeded['ids']['lean']}/?page=1").read()
            api.request("GET", f"/api/v1/evals/{seeded['ids']['lean']}/")
            time.sleep(0.5)
            idle = status_kb(worker, "VmRSS") / 1024
            figures = {}
            for name in ("lean", "heavy"):
                before = status_kb(worker, "VmRSS") / 1024
                began = time.perf_counter()
                for _ in range(args.rounds):
                    sizes = read(seeded["ids"][name])
                elapsed = time.perf_counter() - began
                after = status_kb(worker, "VmRSS") / 1024
                figures[name] = (before, after, elapsed, sizes)
            peak = status_kb(worker, "VmHWM") / 1024
            lean_before, lean_after, lean_s, lean_sizes = figures["lean"]
            heavy_before, heavy_after, heavy_s, heavy_sizes = figures["heavy"]
            reads = "page, failures, word diff, results API, export.csv, export.json"
            row(
                f"baseline: worker RSS growth reading an evaluation of {cells} cells whose rows"
                f" hold only declared variables ({reads}; {args.rounds} rounds), MB",
                f"{lean_after - idle:.1f} (idle {idle:.0f}, after {lean_after:.0f};"
                f" {lean_s:.1f} s)",
                "the baseline of this run",
            )
            row(
                f"worker RSS growth reading the same {cells} cells with {args.mib} MiB of"
                f" undeclared variables per row ({args.rounds} rounds), MB",
                f"{heavy_after - heavy_before:.1f} (over the baseline's {lean_after:.0f};"
                f" total over idle {heavy_after - idle:.1f}; peak {peak:.0f}; {heavy_s:.1f} s)",
                f"≤ {TARGET_MB} (was 1,906)",
            )
            row(
                "export.json size, heavy vs lean rows, bytes",
                f"{heavy_sizes['export.json']:,} vs {lean_sizes['export.json']:,}",
                "equal but for the ids' digits: no row variable in an export (was 2,291 MB)",
            )
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)


if __name__ == "__main__":
    main()
