"""One account holding many open run streams while an anonymous visitor loads the home page.

Issue 21: on gthread workers, 40 streams of one user stopped the site. Here the production
server as `make serve` runs it (gunicorn with uvicorn workers over `config.asgi`) on PostgreSQL
(BENCH_DATABASE_URL, created if missing) and Redis (BENCH_REDIS_URL, default db 14; empty for
the polling fallback): the cache counts the stream cap across processes, pub/sub is the
notification channel. One account opens 0, 64 and 500
streams on its own run, left `running` so the streams stay open, while a probe fetches `/`
PROBES times per phase. Per phase: probe p50/p99 and timeouts, peak database connections
(pg_stat_activity) and the server's threads. The cap is raised for that measure; then a server
with the shipped cap is asked for 500 streams and the refusals are counted.

    .venv/bin/python bench/abuse_streams.py [--workers 2] [--probes 200]

Every figure is also printed as `abuse: <measure> | <figure> | <target>` (bench/abuse.py joins
those lines into one table). Bounded: at most 500 streams, each phase times out, and the servers
are stopped at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import os
import signal
import statistics
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

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

DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/redline_bench"
PHASES = (0, 64, 500, 0)  # idle again at the end: the idle figure pools both idle phases
PROBE_TIMEOUT = 5.0
OPEN_TIMEOUT = 120.0


def seed(env: dict[str, str]) -> tuple[str, int]:
    """The abusing account's API key and a run of its own left `running`."""
    out = django_script(
        env,
        """
        from django.contrib.auth import get_user_model
        from accounts.services import api_token_create, user_create
        from playground.models import Run
        from playground.services import prompt_create

        user = get_user_model().objects.filter(username="streamer").first()
        if user is None:
            user = user_create(username="streamer", password="correct-horse-battery-staple")
        _, version = prompt_create(actor=user, title="Streams", content={
            "provider": "echo", "model": "echo-1", "system": "Watch me.",
            "messages": [{"role": "user", "content": "Hello"}],
        })
        run = Run.objects.create(
            version=version, created_by=user, provider="echo", model="echo-1", variables={},
            status="running", output="Thinking",
        )
        print(api_token_create(actor=user)[1], run.pk)
        """,
    )
    key, run_id = out.splitlines()[-1].split()
    return key, int(run_id)


def finish_run(env: dict[str, str], run_id: int) -> None:
    django_script(
        env,
        f"""
        from playground.models import Run
        Run.objects.filter(pk={run_id}).update(status="cancelled")
        """,
    )


# --- the streams (asyncio, on a thread of their own) -------------------------------------------


class Streams:
    """Open HTTP streams held by one asyncio loop on a background thread."""

    def __init__(self, port: int, key: str, run_id: int) -> None:
        self.port, self.key, self.run_id = port, key, run_id
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.writers: list[asyncio.StreamWriter] = []
        self.readers: list[asyncio.Task] = []

    async def _open_one(self, gate: asyncio.Semaphore) -> int:
        async with gate:
            reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
            writer.write(
                (
                    f"GET /api/v1/runs/{self.run_id}/stream/ HTTP/1.1\r\n"
                    f"Host: 127.0.0.1\r\nAuthorization: Token {self.key}\r\n"
                    "Accept: text/event-stream\r\n\r\n"
                ).encode()
            )
            await writer.drain()
            status_line = await reader.readline()
            status = int(status_line.split()[1]) if status_line else 0
            if status != 200:
                writer.close()
                return status
            self.writers.append(writer)
            self.readers.append(asyncio.ensure_future(self._drain(reader)))
            return status

    @staticmethod
    async def _drain(reader: asyncio.StreamReader) -> None:
        while await reader.read(4096):
            pass

    def open(self, count: int) -> dict[int, int]:
        """Open `count` streams (20 at a time); how many got each status."""

        async def run() -> list[int]:
            gate = asyncio.Semaphore(20)
            return await asyncio.gather(*(self._open_one(gate) for _ in range(count)))

        statuses = asyncio.run_coroutine_threadsafe(run(), self.loop).result(OPEN_TIMEOUT)
        counted: dict[int, int] = {}
        for status in statuses:
            counted[status] = counted.get(status, 0) + 1
        return counted

    def close(self) -> None:
        async def run() -> None:
            for writer in self.writers:
                writer.close()
            for task in self.readers:
                task.cancel()
            self.writers, self.readers = [], []

        asyncio.run_coroutine_threadsafe(run(), self.loop).result(30)

    def stop(self) -> None:
        self.close()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


# --- the probe and the gauges ----------------------------------------------------------------


@dataclass(frozen=True)
class Probe:
    samples_ms: tuple[float, ...]
    timeouts: int

    @property
    def p50_ms(self) -> float:
        return statistics.median(self.samples_ms or (PROBE_TIMEOUT * 1000,))

    @property
    def p99_ms(self) -> float:
        ordered = sorted(self.samples_ms) or [PROBE_TIMEOUT * 1000]
        return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]

    def __add__(self, other: Probe) -> Probe:
        return Probe(self.samples_ms + other.samples_ms, self.timeouts + other.timeouts)


def probe(port: int, count: int) -> Probe:
    """`GET /` as an anonymous visitor, `count` times one after another."""
    times: list[float] = []
    timeouts = 0
    for _ in range(count):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=PROBE_TIMEOUT)
        started = time.perf_counter()
        try:
            conn.request("GET", "/")
            response = conn.getresponse()
            response.read()
            if response.status != 200:
                raise SystemExit(f"home page answered {response.status}")
            times.append((time.perf_counter() - started) * 1000)
        except TimeoutError:
            timeouts += 1
        finally:
            conn.close()
        time.sleep(0.05)
    return Probe(tuple(times), timeouts)


class Gauge:
    """Database connections to the bench database, sampled every 100 ms: the peak, and the
    last sample (`now`)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.name = urlparse(url).path.lstrip("/")
        self.peak = 0
        self.now = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Gauge:
        self.peak = 0
        self._stop.clear()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        assert self._thread is not None
        self._thread.join(5)

    def _sample(self) -> None:
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            while not self._stop.is_set():
                row = conn.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND pid <>"
                    " pg_backend_pid()",
                    (self.name,),
                ).fetchone()
                self.now = int(row[0]) if row else 0
                self.peak = max(self.peak, self.now)
                time.sleep(0.1)


def _server_pids(pid: int) -> list[int]:
    children = Path(f"/proc/{pid}/task/{pid}/children")
    return [pid, *(int(p) for p in children.read_text().split())] if children.exists() else [pid]


def server_threads(pid: int) -> int:
    """Threads of the gunicorn master and its workers."""
    total = 0
    for each in _server_pids(pid):
        for line in Path(f"/proc/{each}/status").read_text().splitlines():
            if line.startswith("Threads:"):
                total += int(line.split()[1])
    return total


def server_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of the gunicorn master and its workers so far."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for each in _server_pids(pid):
        fields = Path(f"/proc/{each}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / ticks


def start(env: dict[str, str], workers: int) -> tuple[object, int]:
    port = free_port()
    proc = asgi_server(port, env, "--workers", str(workers))
    wait_for_port(port, timeout=120)
    probe(port, 3)  # warm both workers' imports and caches
    return proc, port


def stop(proc: object) -> None:
    os.killpg(proc.pid, signal.SIGTERM)  # type: ignore[attr-defined]
    proc.wait(timeout=60)  # type: ignore[attr-defined]


def row(measure: str, figure: str, target: str) -> None:
    print(f"abuse: {measure} | {figure} | {target}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--probes", type=int, default=200)
    args = parser.parse_args()
    db_url = os.environ.get("BENCH_DATABASE_URL", DEFAULT_DB)
    # Production has Redis (the streams' notification channel and the cap across processes);
    # BENCH_REDIS_URL="" measures the polling fallback instead.
    redis_url = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/14")
    ensure_database(db_url)
    base = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "S3_"))}
    for name in ("CELERY_BROKER_URL", "CELERY_RESULT_BACKEND"):
        base.pop(name, None)
    base.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DATABASE_URL=db_url,
        REDIS_URL=redis_url,
        DB_CONN_MAX_AGE="0",
        LOG_LEVEL="WARNING",
        GUNICORN_ACCESS_LOG="/dev/null",
    )
    migrate(base)
    key, run_id = seed(base)
    print(
        f"server: gunicorn + {args.workers} uvicorn workers, PostgreSQL, "
        f"{'Redis ' + redis_url if redis_url else 'no Redis (polling, per-process cap)'}"
    )

    results: dict[int, Probe] = {}
    raised = {**base, "RUN_STREAMS_PER_USER": "1000"}
    proc, port = start(raised, args.workers)
    streams = Streams(port, key, run_id)
    try:
        for phase, count in enumerate(PHASES):
            with Gauge(db_url) as gauge:
                opened = streams.open(count) if count else {}
                time.sleep(5)  # let the streams settle into waiting
                settled = gauge.now
                threads = server_threads(proc.pid)  # type: ignore[attr-defined]
                cpu = server_cpu_seconds(proc.pid)  # type: ignore[attr-defined]
                wall = time.monotonic()
                result = probe(port, args.probes)
                results[count] = results[count] + result if count in results else result
                # The server's CPU while streams wait, less what the probes themselves cost.
                cpu_share = (server_cpu_seconds(proc.pid) - cpu) / (time.monotonic() - wall)  # type: ignore[attr-defined]
            refused = count - opened.get(200, 0)
            label = f"{count} open streams" if count else ("idle" if phase == 0 else "idle again")
            print(
                f"{label}: opened {opened.get(200, 0)}/{count}, probe p50 {result.p50_ms:.1f} ms"
                f" p99 {result.p99_ms:.1f} ms, {result.timeouts} timeouts, DB connections peak"
                f" {gauge.peak} / settled {settled}, server threads {threads}, server CPU during"
                f" the probes {cpu_share:.0%} of a core"
            )
            target = "—" if count == 0 else "p99 ≤ 3× idle, 0 timeouts"
            row(
                f"streams: home page with {label} (p50 / p99, timeouts)",
                f"{result.p50_ms:.1f} / {result.p99_ms:.1f} ms, {result.timeouts} timeouts"
                + (f", {refused} not opened" if refused else ""),
                target,
            )
            row(
                f"streams: DB connections, {label} (peak while opening / settled)",
                f"{gauge.peak} / {settled}",
                "bounded: not one per stream",
            )
            row(
                f"streams: server with {label} (threads; CPU while probed)",
                f"{threads} threads; {cpu_share:.0%} of a core",
                "—",
            )
            streams.close()
            time.sleep(1)
    finally:
        streams.stop()
        stop(proc)
    idle = results[0]
    row(
        "streams: home page idle, both idle phases pooled (p50 / p99)",
        f"{idle.p50_ms:.1f} / {idle.p99_ms:.1f} ms ({len(idle.samples_ms)} probes)",
        "—",
    )
    ratio = results[500].p99_ms / idle.p99_ms
    row("streams: p99(500 streams) / p99(idle, pooled)", f"{ratio:.2f}×", "≤ 3×")

    proc, port = start(base, args.workers)
    streams = Streams(port, key, run_id)
    try:
        opened = streams.open(500)
    finally:
        streams.stop()
        stop(proc)
        finish_run(base, run_id)
    cap = "8 per account" if "RUN_STREAMS_PER_USER" not in os.environ else "as configured"
    row(
        f"streams: 500 asked with the shipped cap ({cap})",
        f"{opened.get(429, 0)} refused (429), {opened.get(200, 0)} opened",
        "429 past the cap",
    )
    print(f"p99_ratio_500_vs_idle={ratio:.2f}")


if __name__ == "__main__":
    main()
