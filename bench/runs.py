"""What Redline adds to a run: POST → first streamed token and POST → final event, on `echo`
with zero delay (so the provider costs nothing), p50/p99 over N runs.

    .venv/bin/python bench/runs.py [--runs 200] [--modes embedded,redis]

Two deployments, each started fresh by this script on loopback:

- `embedded`: SQLite file, no broker (runs execute on a thread of the web process), gunicorn
  with gthread workers.
- `redis`: PostgreSQL (BENCH_DATABASE_URL, default
  postgres://postgres@127.0.0.1:5432/redline_runs_bench, created if missing), Redis broker
  (BENCH_REDIS_URL, default redis://127.0.0.1:6379/13) and a separate Celery worker process.

A client POSTs a run, opens its SSE stream and times the first `token` event and the `done`
event. The baseline, measured in the same run against the same server, is a plain
`GET /api/v1/runs/{id}/` round trip; the overhead is also printed as a multiple of it.
The last line is `name=value` pairs.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._servers import django_script, free_port, gunicorn, migrate  # noqa: E402
from bench.api_throughput import ensure_database  # noqa: E402

DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/redline_runs_bench"
DEFAULT_REDIS = "redis://127.0.0.1:6379/13"


def prepare(env: dict[str, str]) -> tuple[int, str]:
    migrate(env)
    out = django_script(
        env,
        """
        from django.contrib.auth import get_user_model
        from accounts.services import api_token_create, user_create
        from playground.services import prompt_create

        user = get_user_model().objects.filter(username="bench").first()
        user = user or user_create(username="bench", password="bench-pass-123")
        content = {
            "provider": "echo",
            "system": "You are a senior reviewer.",
            "messages": [{"role": "user", "content": "Review: {{design}}"}],
            "variables": {"design": "a cache in front of PostgreSQL"},
        }
        prompt, version = prompt_create(actor=user, title="bench runs", content=content)
        _, key = api_token_create(actor=user)
        print(version.pk, key)
        """,
    )
    version, key = out.split()[-2:]
    return int(version), key


def one_run(port: int, version: int, headers: dict[str, str]) -> tuple[float, float, int]:
    """Seconds from the POST to the first token and to the done event; the run id."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    start = time.perf_counter()
    body = json.dumps({}).encode()
    conn.request(
        "POST",
        f"/api/v1/versions/{version}/runs/",
        body=body,
        headers={**headers, "Content-Type": "application/json"},
    )
    response = conn.getresponse()
    created = json.loads(response.read())
    if response.status != 201:
        raise RuntimeError(f"POST answered {response.status}: {created}")
    conn.request("GET", created["stream_url"], headers={**headers, "Accept": "text/event-stream"})
    stream = conn.getresponse()
    first = final = None
    while True:
        line = stream.fp.readline()
        if not line:
            break
        if line.startswith(b"event: token") and first is None:
            first = time.perf_counter() - start
        if line.startswith(b"event: done"):
            final = time.perf_counter() - start
            break
    conn.close()
    if first is None or final is None:
        raise RuntimeError("the stream ended without a token and a done event")
    return first, final, created["id"]


def plain_get(port: int, run_id: int, headers: dict[str, str]) -> float:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    start = time.perf_counter()
    conn.request("GET", f"/api/v1/runs/{run_id}/", headers=headers)
    conn.getresponse().read()
    conn.close()
    return time.perf_counter() - start


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] * 1000


def wait_ready(port: int, path: str, headers: dict[str, str]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", path, headers=headers)
            conn.getresponse().read()
            return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError("gunicorn did not start")


def bench_mode(mode: str, runs: int) -> dict[str, float]:
    data_dir = Path(tempfile.mkdtemp(prefix=f"redline-bench-runs-{mode}-"))
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "CELERY_BROKER_URL", "CELERY_RESULT_BACKEND", "REDIS_URL")
    }
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        REDLINE_DATA_DIR=str(data_dir),
        RUN_ECHO_DELAY_MS="0",
        LOG_LEVEL="WARNING",
        # One account sends every run of the bench: the per-account rate limit (60 a minute by
        # default) measures the limit, not a run's overhead.
        RUN_USER_RATE_LIMIT=str(10 * runs + 100),
    )
    worker = None
    if mode == "redis":
        db = os.environ.get("BENCH_DATABASE_URL", DEFAULT_DB)
        ensure_database(db)
        broker = os.environ.get("BENCH_REDIS_URL", DEFAULT_REDIS)
        env.update(DATABASE_URL=db, CELERY_BROKER_URL=broker, REDIS_URL=broker)
    version, key = prepare(env)
    headers = {"Authorization": f"Token {key}"}
    if mode == "redis":
        worker = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "config",
                "worker",
                "--pool=threads",
                "--concurrency=4",
                "--loglevel=WARNING",
                "--without-gossip",
                "--without-mingle",
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    port = free_port()
    server = gunicorn(
        port, env, "-k", "gthread", "--threads", "8", "-w", "1", "--log-level", "warning"
    )
    try:
        wait_ready(port, "/api/v1/questions/", headers)
        for _ in range(10):  # warm up imports, connections, the worker
            one_run(port, version, headers)
        firsts, finals, gets = [], [], []
        for _ in range(runs):
            first, final, run_id = one_run(port, version, headers)
            firsts.append(first)
            finals.append(final)
            gets.append(plain_get(port, run_id, headers))
    finally:
        server.terminate()
        server.wait(timeout=20)
        if worker is not None:
            worker.terminate()
            worker.wait(timeout=20)
    return {
        "first_p50": pct(firsts, 0.5),
        "first_p99": pct(firsts, 0.99),
        "final_p50": pct(finals, 0.5),
        "final_p99": pct(finals, 0.99),
        "get_p50": pct(gets, 0.5),
        "get_p99": pct(gets, 0.99),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--modes", default="embedded,redis")
    args = parser.parse_args()
    summary = []
    for mode in args.modes.split(","):
        r = bench_mode(mode, args.runs)
        print(f"# {mode}: {args.runs} runs on echo with zero delay, gunicorn gthread")
        print(f"  POST → first token   p50 {r['first_p50']:7.1f} ms   p99 {r['first_p99']:7.1f} ms")
        print(f"  POST → final event   p50 {r['final_p50']:7.1f} ms   p99 {r['final_p99']:7.1f} ms")
        print(f"  baseline GET run     p50 {r['get_p50']:7.1f} ms   p99 {r['get_p99']:7.1f} ms")
        print(f"  first token p50 = {r['first_p50'] / r['get_p50']:.1f}× a plain GET")
        summary += [
            f"{mode}_first_p50_ms={r['first_p50']:.1f}",
            f"{mode}_first_p99_ms={r['first_p99']:.1f}",
            f"{mode}_final_p50_ms={r['final_p50']:.1f}",
            f"{mode}_final_p99_ms={r['final_p99']:.1f}",
        ]
    print(" ".join(summary))


if __name__ == "__main__":
    main()
