"""One account floods the run queue; how long does another account's run wait? (issue #21)

    .venv/bin/python bench/abuse_queue.py [--flood 150] [--scenarios defaults,fair,before]

The production set-up, started fresh by this script on loopback: gunicorn with uvicorn workers
(`make serve`) on
PostgreSQL (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/redline_abuse_bench,
created if missing), a Redis broker (BENCH_REDIS_URL, default redis://127.0.0.1:6379/8) and a
real Celery worker (threads pool, concurrency 4) on a queue of its own. Runs use the offline
`echo` provider with RUN_ECHO_DELAY_MS=25, so one run takes about a second of worker time.

For each scenario: a second account's run alone, POST → done (the baseline, "one run", median
of three); then the flooding account POSTs `--flood` runs as fast as four client threads can
(counting 201s and 429s), and at once the second account POSTs one run: its POST → done is the
delay. Scenarios:

- `defaults`: the shipped limits (RUN_USER_ACTIVE_MAX, RUN_USER_RATE_LIMIT) and the fair queue;
- `fair`: limits lifted, the fair queue alone (every flood run is queued);
- `before`: limits lifted and RUN_FAIR_QUEUE=0: first come, first served, as before issue #21.

Prints `abuse: <measure> | <figure> | <target>` lines (bench/abuse.py joins them).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._servers import asgi_server, django_script, free_port, migrate, services_env  # noqa: E402
from bench.api_throughput import ensure_database  # noqa: E402

DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/redline_abuse_bench"
DEFAULT_REDIS = "redis://127.0.0.1:6379/8"
ECHO_DELAY_MS = "25"
CONCURRENCY = 4

SCENARIOS: dict[str, dict[str, str]] = {
    "defaults": {},
    "fair": {"RUN_USER_ACTIVE_MAX": "100000", "RUN_USER_RATE_LIMIT": "100000"},
    "before": {
        "RUN_USER_ACTIVE_MAX": "100000",
        "RUN_USER_RATE_LIMIT": "100000",
        "RUN_FAIR_QUEUE": "0",
    },
}


def prepare(env: dict[str, str], tag: str) -> dict[str, dict[str, str]]:
    """Two fresh accounts (new ids, so no rate counter of an earlier run applies), each with
    an echo prompt and an API key."""
    out = django_script(
        env,
        f"""
        import json
        from accounts.services import api_token_create, user_create
        from playground.services import prompt_create

        content = {{
            "provider": "echo",
            "system": "You are a senior reviewer of system designs.",
            "messages": [{{"role": "user", "content": "Review this design: {{{{design}}}}"}}],
            "variables": {{"design": "a write-through cache in front of PostgreSQL, sharded"}},
        }}
        found = {{}}
        for who in ("flood", "other"):
            user = user_create(username=f"{{who}}-{tag}", password="bench-pass-123")
            _, version = prompt_create(actor=user, title=f"{{who}} runs", content=content)
            _, key = api_token_create(actor=user)
            found[who] = {{"version": str(version.pk), "key": key}}
        print(json.dumps(found))
        """,
    )
    return json.loads(out.splitlines()[-1])


def _request(port: int, method: str, path: str, key: str, body: dict | None = None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"Authorization": f"Token {key}", "Content-Type": "application/json"}
    conn.request(method, path, body=json.dumps(body or {}).encode(), headers=headers)
    response = conn.getresponse()
    data = response.read()
    conn.close()
    return response.status, (json.loads(data) if data else {})


def post_run(port: int, account: dict[str, str]) -> tuple[int, dict]:
    return _request(port, "POST", f"/api/v1/versions/{account['version']}/runs/", account["key"])


def wait_done(port: int, account: dict[str, str], run_id: int, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        _, run = _request(port, "GET", f"/api/v1/runs/{run_id}/", account["key"])
        if run.get("status") in ("done", "failed", "cancelled"):
            if run["status"] != "done":
                raise RuntimeError(f"run {run_id} ended {run['status']}: {run.get('error')}")
            return
        time.sleep(0.05)
    raise RuntimeError(f"run {run_id} not done within {timeout} s")


def timed_run(port: int, account: dict[str, str]) -> float:
    start = time.perf_counter()
    status, run = post_run(port, account)
    if status != 201:
        raise RuntimeError(f"POST answered {status}: {run}")
    wait_done(port, account, run["id"])
    return time.perf_counter() - start


def flood(port: int, account: dict[str, str], count: int) -> tuple[list[int], int, float]:
    """POST `count` runs from four threads; the ids created, the number refused, seconds."""
    created: list[int] = []
    refused = 0
    lock = threading.Lock()
    todo = iter(range(count))

    def client() -> None:
        nonlocal refused
        while True:
            with lock:
                if next(todo, None) is None:
                    return
            status, body = post_run(port, account)
            with lock:
                if status == 201:
                    created.append(body["id"])
                elif status == 429:
                    refused += 1
                else:
                    raise RuntimeError(f"flood POST answered {status}: {body}")

    start = time.perf_counter()
    threads = [threading.Thread(target=client) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return created, refused, time.perf_counter() - start


def scenario(name: str, flood_count: int, db: str, broker: str) -> dict[str, float]:
    data_dir = Path(tempfile.mkdtemp(prefix=f"redline-bench-abuse-{name}-"))
    queue = f"abuse-{uuid.uuid4().hex[:8]}"
    env = services_env(
        data_dir=data_dir,
        db=db,
        broker=broker,
        RUN_TASK_QUEUE=queue,
        RUN_ECHO_DELAY_MS=ECHO_DELAY_MS,
        LOG_LEVEL="WARNING",
        **SCENARIOS[name],
    )
    migrate(env)
    accounts = prepare(env, uuid.uuid4().hex[:8])
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
            f"{queue}@bench",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    port = free_port()
    server = asgi_server(port, env, "--workers", "2", "--log-level", "warning")
    created: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                _request(port, "GET", "/api/v1/questions/", accounts["other"]["key"])
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        timed_run(port, accounts["other"])  # warm up the worker and connections
        one = statistics.median(timed_run(port, accounts["other"]) for _ in range(3))
        created, refused, took = flood(port, accounts["flood"], flood_count)
        delay = timed_run(port, accounts["other"])
    finally:
        for run_id in created:  # leave nothing queued for the next scenario
            _request(port, "POST", f"/api/v1/runs/{run_id}/cancel/", accounts["flood"]["key"])
        server.terminate()
        server.wait(timeout=20)
        worker.terminate()
        worker.wait(timeout=30)
    return {
        "one": one,
        "delay": delay,
        "accepted": len(created),
        "refused": refused,
        "flood_seconds": took,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--flood", type=int, default=150)
    parser.add_argument("--scenarios", default="defaults,fair,before")
    args = parser.parse_args()
    db = os.environ.get("BENCH_DATABASE_URL", DEFAULT_DB)
    ensure_database(db)
    broker = os.environ.get("BENCH_REDIS_URL", DEFAULT_REDIS)
    for name in args.scenarios.split(","):
        r = scenario(name, args.flood, db, broker)
        ratio = r["delay"] / r["one"]
        label = {
            "defaults": "shipped limits + fair queue",
            "fair": "fair queue alone, limits lifted",
            "before": "limits lifted, FIFO (before #21)",
        }[name]
        print(
            f"abuse: another user's run while one queues {args.flood} ({label}) |"
            f" {r['delay']:.2f} s = {ratio:.1f}× one run ({r['one']:.2f} s) | ≤ 2× one run",
            flush=True,
        )
        print(
            f"abuse: the flood's {args.flood} POSTs in {r['flood_seconds']:.1f} s ({label}) |"
            f" {r['accepted']} queued, {r['refused']} refused with 429 |"
            f" RUN_USER_ACTIVE_MAX / RUN_USER_RATE_LIMIT",
            flush=True,
        )


if __name__ == "__main__":
    main()
