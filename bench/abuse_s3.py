"""The object store hangs: how fast do requests that need it fail, and does anything else wait?
(issue #21)

    .venv/bin/python bench/abuse_s3.py [--parallel 36]

The production set-up, started fresh by this script on loopback: gunicorn with 2 uvicorn workers
(`make serve`) on PostgreSQL (BENCH_DATABASE_URL, default
postgres://postgres@127.0.0.1:5432/redline_abuse_bench, created if missing) with S3 on a moto
server process of this script's own, with the shipped S3 timeout and breaker settings.

40 prompts get a 300 KB system prompt each (over TEXTSTORE_INLINE_MAX: stored in S3). Then the
moto process is stopped with SIGSTOP (it accepts connections and never answers, like a hung
store) and `--parallel` clients each ask for a range of a different text (each needs S3; none
was read before, so no cache helps) while a probe asks for an unrelated page (the question
list, which needs no object storage) every 100 ms. Then a second wave once the breaker is open,
then SIGCONT and the first answer after the cooldown.

Prints `abuse: <measure> | <figure> | <target>` lines (bench/abuse.py joins them).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._servers import asgi_server, django_script, free_port, migrate, wait_for_port  # noqa: E402
from bench.api_throughput import ensure_database  # noqa: E402

DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/redline_abuse_bench"
TEXTS = 40


def get(port: int, path: str, key: str, timeout: float = 120) -> tuple[int, float, str]:
    start = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    conn.request("GET", path, headers={"Authorization": f"Token {key}"})
    response = conn.getresponse()
    response.read()
    conn.close()
    return response.status, time.perf_counter() - start, response.getheader("Retry-After") or ""


def wave(port: int, key: str, versions: list[int]) -> list[tuple[int, float, str]]:
    results: list[tuple[int, float, str]] = []
    lock = threading.Lock()

    def one(version: int) -> None:
        path = f"/api/v1/versions/{version}/text/?field=system&offset=1000&length=2000"
        outcome = get(port, path, key)
        with lock:
            results.append(outcome)

    threads = [threading.Thread(target=one, args=(v,)) for v in versions]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


class Probe(threading.Thread):
    """GET an unrelated page every 100 ms until stopped; keeps each latency."""

    def __init__(self, port: int, key: str) -> None:
        super().__init__(daemon=True)
        self.port, self.key = port, key
        self.latencies: list[float] = []
        self.statuses: Counter[int] = Counter()
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            status, took, _ = get(self.port, "/api/v1/questions/", self.key)
            self.latencies.append(took)
            self.statuses[status] += 1
            self.stop.wait(0.1)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


# The object-storage settings before issue #21, with the breaker and in-flight cap out of reach.
BEFORE = {
    "S3_CONNECT_TIMEOUT": "3",
    "S3_READ_TIMEOUT": "10",
    "S3_MAX_ATTEMPTS": "3",
    "S3_BREAKER_FAILURES": "1000000",
    "S3_MAX_IN_FLIGHT": "100000",
}


@dataclass(frozen=True)
class Storm:
    waves: list[list[tuple[int, float, str]]]
    probe: Probe
    idle: list[float]
    back: tuple[int, float, str]
    cooldown: float


def storm(
    env: dict[str, str],
    moto: subprocess.Popen,
    key: str,
    versions: list[int],
    parallel: int,
    verbose: bool,
    waves: int,
) -> Storm:
    """A fresh server with `env`: idle probes, then S3 stopped, `waves` waves of `parallel`
    requests with a probe running, S3 resumed; after the cooldown, one request needing S3."""
    port = free_port()
    server = asgi_server(port, env, "--workers", "2", "--log-level", "error", quiet=not verbose)
    try:
        wait_for_port(port)
        # warm up: imports, connections, each worker's S3 client (a text the waves do not use)
        for _ in range(10):
            get(port, "/api/v1/questions/", key)
            get(port, f"/api/v1/versions/{versions[-1]}/text/?field=system&offset=0&length=9", key)
        idle = [get(port, "/api/v1/questions/", key)[1] for _ in range(20)]
        os.kill(moto.pid, signal.SIGSTOP)
        probe = Probe(port, key)
        probe.start()
        results = [wave(port, key, versions[:parallel]) for _ in range(waves)]
        probe.stop.set()
        probe.join()
        os.kill(moto.pid, signal.SIGCONT)
        cooldown = float(env.get("S3_BREAKER_COOLDOWN", "15"))
        time.sleep(cooldown + 1)
        head = f"/api/v1/versions/{versions[0]}/text/?field=system&offset=0&length=10"
        back = get(port, head, key)
    finally:
        os.kill(moto.pid, signal.SIGCONT)
        server.terminate()
        server.wait(timeout=20)
    return Storm(waves=results, probe=probe, idle=idle, back=back, cooldown=cooldown)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parallel", type=int, default=36)
    parser.add_argument("--verbose", action="store_true", help="show the server's error log")
    parser.add_argument(
        "--no-before", dest="before", action="store_false", help="skip the baseline (slow)"
    )
    args = parser.parse_args()
    db = os.environ.get("BENCH_DATABASE_URL", DEFAULT_DB)
    ensure_database(db)
    s3_port = free_port()
    moto = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(s3_port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_for_port(s3_port)
        bucket = f"abuse-{uuid.uuid4().hex[:8]}"
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("DATABASE_URL", "CELERY_BROKER_URL", "CELERY_RESULT_BACKEND", "REDIS_URL")
        }
        env.update(
            DJANGO_SETTINGS_MODULE="config.settings",
            REDLINE_DATA_DIR=tempfile.mkdtemp(prefix="redline-bench-abuse-s3-"),
            DATABASE_URL=db,
            S3_ENDPOINT_URL=f"http://127.0.0.1:{s3_port}",
            S3_BUCKET=bucket,
            S3_ACCESS_KEY_ID="test",
            S3_SECRET_ACCESS_KEY="test",
            S3_REGION="us-east-1",
            LOG_LEVEL="ERROR",
        )
        migrate(env)
        out = django_script(
            env,
            f"""
            import json
            import boto3
            from django.conf import settings
            from accounts.services import api_token_create, user_create
            from playground.services import prompt_create

            boto3.client(
                "s3", endpoint_url=settings.S3_ENDPOINT_URL, aws_access_key_id="test",
                aws_secret_access_key="test", region_name="us-east-1",
            ).create_bucket(Bucket=settings.S3_BUCKET)
            tag = "{uuid.uuid4().hex[:8]}"
            user = user_create(username=f"s3-{{tag}}", password="bench-pass-123")
            versions = []
            for n in range({TEXTS}):
                # unique to this run: the bench database outlives the bucket, and a text
                # stored before would not be written to this bucket again
                text = "".join(f"prompt {{tag}} {{n}} line {{i}}: be precise and brief.\\n"
                               for i in range(8000))
                _, version = prompt_create(
                    actor=user, title=f"long {{n}}",
                    content={{"provider": "echo", "system": text,
                              "messages": [{{"role": "user", "content": "hi"}}]}},
                )
                versions.append(version.pk)
            _, key = api_token_create(actor=user)
            print(json.dumps({{"key": key, "versions": versions}}))
            """,
        )
        seeded = json.loads(out.splitlines()[-1])
        key, versions = seeded["key"], seeded["versions"]
        shipped = storm(env, moto, key, versions, args.parallel, args.verbose, waves=2)
        first, second = shipped.waves[0], shipped.waves[1]
        probe, idle = shipped.probe, shipped.idle
        statuses = Counter(status for status, _, _ in first)
        slow = max(took for _, took, _ in first)
        print(
            f"abuse: answer time of {args.parallel} parallel requests needing S3, S3 hung"
            f" (SIGSTOP), shipped settings | max {slow:.2f} s, p50"
            f" {pct([t for _, t, _ in first], 0.5):.2f} s; statuses {dict(statuses)} | ≤ 5 s",
            flush=True,
        )
        print(
            f"abuse: the same once the breaker is open | max"
            f" {max(t for _, t, _ in second) * 1000:.0f} ms;"
            f" statuses {dict(Counter(s for s, _, _ in second))} | ≤ 5 s",
            flush=True,
        )
        print(
            f"abuse: unrelated page (question list) while S3 hangs | p50"
            f" {statistics.median(probe.latencies) * 1000:.0f} ms, max"
            f" {max(probe.latencies) * 1000:.0f} ms over {len(probe.latencies)} probes"
            f" (idle p50 {statistics.median(idle) * 1000:.0f} ms, max {max(idle) * 1000:.0f} ms);"
            f" statuses {dict(probe.statuses)} | no wait on S3",
            flush=True,
        )
        back = shipped.back
        print(
            f"abuse: first request needing S3 after SIGCONT and the breaker's cooldown"
            f" ({shipped.cooldown:g} s) | {back[0]} in {back[1] * 1000:.0f} ms | 200",
            flush=True,
        )
        if args.before:
            old = storm({**env, **BEFORE}, moto, key, versions, args.parallel, args.verbose, 1)
            wave_old, probe_old = old.waves[0], old.probe
            print(
                f"abuse: the same {args.parallel} requests with the settings before #21"
                f" (3 s / 10 s timeouts, 3 attempts, no breaker) | max"
                f" {max(t for _, t, _ in wave_old):.2f} s, p50"
                f" {pct([t for _, t, _ in wave_old], 0.5):.2f} s; unrelated page max"
                f" {max(probe_old.latencies):.2f} s | baseline",
                flush=True,
            )
    finally:
        os.kill(moto.pid, signal.SIGCONT)
        moto.terminate()
        moto.wait(timeout=20)


if __name__ == "__main__":
    main()
