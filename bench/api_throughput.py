"""Version fetch API throughput on gunicorn + PostgreSQL, against a bare Django view.

docs/design.md (Targets): `GET /api/v1/versions/{id}/` should serve at least 50% of the requests
per second
of a bare Django view returning a constant JSON body, measured in the same run on the same server.
Measured here: the bare view, `GET /api/v1/versions/{id}/`, the fetch by label
(`GET /api/v1/prompts/{id}/labels/production/version/`) and the same fetch answered 304 (the
client sends the ETag it holds). For each: requests per second, p50 and p99 latency. The ratio
is the worse of the two 200-fetches against the bare view.

    .venv/bin/python bench/api_throughput.py [--seconds 8] [--workers 2] [--clients 8]

Needs PostgreSQL (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/redline_bench;
the database is created if missing). Starts gunicorn on a free loopback port, drives it from
client processes with keep-alive-less HTTP/1.1 requests (gunicorn's sync workers close each
connection), alternates the two endpoints in rounds so drift hits both alike, and prints
requests per second for each and their ratio. The last line is `ratio_vs_bare=<float>`.
"""

import argparse
import http.client
import multiprocessing
import os
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._servers import (  # noqa: E402
    django_script,
    free_port,
    gunicorn,
    migrate,
    wait_for_port,
)

DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/redline_bench"


def ensure_database(url: str) -> None:
    import psycopg

    parts = urlparse(url)
    name = parts.path.lstrip("/")
    admin = parts._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')


@dataclass(frozen=True)
class Fixture:
    prompt_id: int
    version_id: int
    key: str


@dataclass(frozen=True)
class Figures:
    rps: float
    p50_ms: float
    p99_ms: float


def prepare(env: dict[str, str]) -> Fixture:
    """Migrate and create one prompt with a realistic version; return its id and an API key."""
    migrate(env)
    out = django_script(
        env,
        """
        from django.contrib.auth import get_user_model
        from accounts.services import api_token_create, user_create
        from playground.services import label_move, prompt_create

        user = get_user_model().objects.filter(username="bench").first()
        user = user or user_create(username="bench", password="bench-pass-123")
        content = {
            "provider": "anthropic",
            "model": "claude-sonnet-4-6",
            "system": "You are a senior reviewer.\\n" * 80,
            "messages": [
                {"role": "user", "content": "Review: {{design}}"},
                {"role": "assistant", "content": "Sure."},
                {"role": "user", "content": "Rank the risks."},
            ],
            "variables": {"design": "a cache"},
        }
        prompt, version = prompt_create(actor=user, title="bench", content=content)
        label_move(actor=user, prompt=prompt, name="production", version=version)
        _, key = api_token_create(actor=user)
        print(prompt.pk, version.pk, key)
        """,
    ).split()
    return Fixture(prompt_id=int(out[-3]), version_id=int(out[-2]), key=out[-1])


def etag_of(port: int, path: str, headers: dict[str, str]) -> str:
    """The ETag the server answers for `path` (what a client would send back); the first
    request may wait for a worker to finish starting."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        conn.request("GET", path, headers=headers)
        response = conn.getresponse()
        response.read()
        return response.getheader("ETag") or ""
    finally:
        conn.close()


def client_loop(
    port: int, path: str, headers: dict[str, str], expect: int, seconds: float, queue
) -> None:
    latencies: list[float] = []
    errors = 0
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        start = time.perf_counter()
        try:
            conn.request("GET", path, headers=headers)
            response = conn.getresponse()
            response.read()
            if response.status == expect:
                latencies.append(time.perf_counter() - start)
            else:
                errors += 1
        except OSError:
            errors += 1
        finally:
            conn.close()
    queue.put((latencies, errors))


def measure(
    port: int, path: str, headers: dict[str, str], seconds: float, clients: int, expect: int = 200
) -> Figures:
    queue: multiprocessing.Queue = multiprocessing.Queue()
    procs = [
        multiprocessing.Process(
            target=client_loop, args=(port, path, headers, expect, seconds, queue)
        )
        for _ in range(clients)
    ]
    start = time.perf_counter()
    for proc in procs:
        proc.start()
    results = [queue.get() for _ in procs]
    for proc in procs:
        proc.join()
    elapsed = time.perf_counter() - start
    latencies = sorted(x for r in results for x in r[0])
    errors = sum(r[1] for r in results)
    if errors or not latencies:
        raise SystemExit(f"{errors} requests on {path} did not answer {expect}")
    return Figures(
        rps=len(latencies) / elapsed,
        p50_ms=latencies[len(latencies) // 2] * 1e3,
        p99_ms=latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1e3,
    )


def median_figures(rounds: list[Figures]) -> Figures:
    def mid(values: list[float]) -> float:
        return sorted(values)[len(values) // 2]

    return Figures(
        rps=mid([r.rps for r in rounds]),
        p50_ms=mid([r.p50_ms for r in rounds]),
        p99_ms=mid([r.p99_ms for r in rounds]),
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=6.0, help="per round and endpoint")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--clients", type=int, default=6)
    args = parser.parse_args()

    db_url = os.environ.get("BENCH_DATABASE_URL", DEFAULT_DB)
    ensure_database(db_url)
    env = {
        **os.environ,
        "DATABASE_URL": db_url,
        "DJANGO_SETTINGS_MODULE": "bench.api_settings",
        "PYTHONPATH": str(ROOT),
        "CELERY_BROKER_URL": "",
    }
    fixture = prepare(env)
    port = free_port()
    server = gunicorn(port, env, "-w", str(args.workers), "--log-level", "warning", quiet=False)
    try:
        wait_for_port(port)
        auth = {"Authorization": f"Token {fixture.key}"}
        label_path = f"/api/v1/prompts/{fixture.prompt_id}/labels/production/version/"
        endpoints = {
            "bare_view": ("/bench/constant/", {}, 200),
            "version_api": (f"/api/v1/versions/{fixture.version_id}/", auth, 200),
            "label_fetch": (label_path, auth, 200),
            "label_fetch_304": (
                label_path,
                {**auth, "If-None-Match": etag_of(port, label_path, auth)},
                304,
            ),
        }
        for path, headers, expect in endpoints.values():  # warm-up: imports, caches
            measure(port, path, headers, 1.0, 2, expect)
        rounds: dict[str, list[Figures]] = {name: [] for name in endpoints}
        for _ in range(args.rounds):  # alternate, so drift of the machine hits all alike
            for name, (path, headers, expect) in endpoints.items():
                rounds[name].append(
                    measure(port, path, headers, args.seconds, args.clients, expect)
                )
        print(
            f"# gunicorn sync workers={args.workers}, clients={args.clients}, "
            f"{args.rounds} rounds x {args.seconds:.0f} s per endpoint, PostgreSQL"
        )
        result = {name: median_figures(figures) for name, figures in rounds.items()}
        for name, figures in result.items():
            each = " ".join(f"{r.rps:.0f}" for r in rounds[name])
            print(
                f"{name}: rps={figures.rps:.0f} (rounds {each}) "
                f"p50_ms={figures.p50_ms:.2f} p99_ms={figures.p99_ms:.2f}"
            )
        worse = min(result["version_api"].rps, result["label_fetch"].rps)
        print("target: the worse 200-fetch >= 0.5 x bare_view rps")
        print(f"ratio_304_vs_bare={result['label_fetch_304'].rps / result['bare_view'].rps:.3f}")
        print(f"ratio_vs_bare={worse / result['bare_view'].rps:.3f}")
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=20)


if __name__ == "__main__":
    main()
