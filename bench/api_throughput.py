"""Version fetch API throughput on gunicorn + PostgreSQL, against a bare Django view.

DESIGN.md §9: `GET /api/v1/versions/{id}/` should serve at least 50% of the requests per second
of a bare Django view returning a constant JSON body, measured in the same run on the same server.

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
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/redline_bench"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def ensure_database(url: str) -> None:
    import psycopg

    parts = urlparse(url)
    name = parts.path.lstrip("/")
    admin = parts._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')


def prepare(env: dict[str, str]) -> tuple[int, str]:
    """Migrate and create one prompt with a realistic version; return its id and an API key."""
    migrate = [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"]
    subprocess.run(migrate, cwd=ROOT, env=env, check=True)
    script = textwrap.dedent(
        """
        import django
        django.setup()
        from django.contrib.auth import get_user_model
        from accounts.services import api_token_create, user_create
        from playground.services import prompt_create

        user = get_user_model().objects.filter(username="bench").first()
        user = user or user_create(username="bench", password="bench-pass-123")
        content = {
            "provider": "anthropic",
            "model": "claude-sonnet-4-5",
            "system": "You are a senior reviewer.\\n" * 80,
            "messages": [
                {"role": "user", "content": "Review: {{design}}"},
                {"role": "assistant", "content": "Sure."},
                {"role": "user", "content": "Rank the risks."},
            ],
            "variables": {"design": "a cache"},
        }
        prompt, version = prompt_create(actor=user, title="bench", content=content)
        _, key = api_token_create(actor=user)
        print(version.pk, key)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return int(out[-2]), out[-1]


def client_loop(port: int, path: str, headers: dict[str, str], seconds: float, queue) -> None:
    done = errors = 0
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        try:
            conn.request("GET", path, headers=headers)
            response = conn.getresponse()
            response.read()
            if response.status == 200:
                done += 1
            else:
                errors += 1
        except OSError:
            errors += 1
        finally:
            conn.close()
    queue.put((done, errors))


def measure(port: int, path: str, headers: dict[str, str], seconds: float, clients: int) -> float:
    queue: multiprocessing.Queue = multiprocessing.Queue()
    procs = [
        multiprocessing.Process(target=client_loop, args=(port, path, headers, seconds, queue))
        for _ in range(clients)
    ]
    start = time.perf_counter()
    for proc in procs:
        proc.start()
    results = [queue.get() for _ in procs]
    for proc in procs:
        proc.join()
    elapsed = time.perf_counter() - start
    done = sum(r[0] for r in results)
    errors = sum(r[1] for r in results)
    if errors:
        raise SystemExit(f"{errors} failed requests on {path}")
    return done / elapsed


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
    version_id, key = prepare(env)
    port = free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "config.wsgi",
            "-w",
            str(args.workers),
            "-b",
            f"127.0.0.1:{port}",
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env=env,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        version_path = f"/api/v1/versions/{version_id}/"
        auth = {"Authorization": f"Token {key}"}
        measure(port, version_path, auth, 1.0, 2)  # warm-up: connections, caches, imports
        measure(port, "/bench/constant/", {}, 1.0, 2)
        bare, api = [], []
        for _ in range(args.rounds):
            bare.append(measure(port, "/bench/constant/", {}, args.seconds, args.clients))
            api.append(measure(port, version_path, auth, args.seconds, args.clients))
        bare_rps, api_rps = sorted(bare)[len(bare) // 2], sorted(api)[len(api) // 2]
        print(
            f"# gunicorn sync workers={args.workers}, clients={args.clients}, "
            f"{args.rounds} rounds x {args.seconds:.0f} s per endpoint, PostgreSQL"
        )
        print("bare_view_rps=" + " ".join(f"{r:.0f}" for r in bare) + f" median={bare_rps:.0f}")
        print("version_api_rps=" + " ".join(f"{r:.0f}" for r in api) + f" median={api_rps:.0f}")
        print("target: version_api_rps >= 0.5 x bare_view_rps")
        print(f"ratio_vs_bare={api_rps / bare_rps:.3f}")
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=20)


if __name__ == "__main__":
    main()
