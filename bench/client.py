"""The Python client's cost per `get_prompt`, on gunicorn + PostgreSQL.

Modes, measured on one prompt whose `production` version has a ~100 KB system prompt, one
caller, calls back to back, alternated in rounds so drift hits all alike:

- `raw_304`: a bare httpx GET of the label URL with the ETag in `If-None-Match` (the floor: one
  round trip the server answers 304);
- `client_revalidating`: `Redline.get_prompt` as shipped (every call revalidates; 304s);
- `client_no_cache`: `Redline(cache_entries=0)`, so every call gets, parses and hash-checks the
  whole body (what a client without revalidation pays).

Prints calls per second, p50 latency and bytes of body received per call for each, then the
client's 304 path against the raw 304 (`overhead_ratio`) and against full bodies
(`speedup_vs_full`). The last line is `speedup_vs_full=<float>`.

    .venv/bin/python bench/client.py [--seconds 3] [--rounds 3]

Needs PostgreSQL (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/redline_bench;
created if missing) and the client installed (`make install`).
"""

import argparse
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx
import redline

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._servers import django_script, free_port, gunicorn, migrate, wait_for_port  # noqa: E402
from bench.api_throughput import DEFAULT_DB, ensure_database  # noqa: E402


@dataclass(frozen=True)
class Figures:
    calls_per_s: float
    p50_ms: float


def prepare(env: dict[str, str]) -> tuple[int, str]:
    migrate(env)
    out = django_script(
        env,
        """
        from django.contrib.auth import get_user_model
        from accounts.services import api_token_create, user_create
        from playground.services import label_move, prompt_create

        user = get_user_model().objects.filter(username="bench-client").first()
        user = user or user_create(username="bench-client", password="bench-pass-123")
        line = "Rule: name the failure mode, its blast radius and the rollback, in that order.\\n"
        content = {
            "provider": "anthropic",
            "model": "claude-sonnet-4-6",
            "system": line * (100_000 // len(line)),
            "messages": [{"role": "user", "content": "Review: {{design}}"}],
            "variables": {"design": "a cache"},
        }
        prompt, version = prompt_create(actor=user, title="bench client", content=content)
        label_move(actor=user, prompt=prompt, name="production", version=version)
        _, key = api_token_create(actor=user)
        print(prompt.pk, key)
        """,
    ).split()
    return int(out[-2]), out[-1]


def run(call: Callable[[], object], seconds: float) -> Figures:
    latencies: list[float] = []
    deadline = time.perf_counter() + seconds
    start = time.perf_counter()
    while time.perf_counter() < deadline:
        t0 = time.perf_counter()
        call()
        latencies.append(time.perf_counter() - t0)
    elapsed = time.perf_counter() - start
    latencies.sort()
    return Figures(len(latencies) / elapsed, latencies[len(latencies) // 2] * 1e3)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=3.0, help="per round and mode")
    parser.add_argument("--rounds", type=int, default=3)
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
    prompt_id, key = prepare(env)
    port = free_port()
    server = gunicorn(port, env, "-w", "2", "--log-level", "warning", quiet=False)
    try:
        wait_for_port(port)
        base = f"http://127.0.0.1:{port}"
        url = f"{base}/api/v1/prompts/{prompt_id}/labels/production/version/?full=1"
        auth = {"Authorization": f"Token {key}"}
        raw = httpx.Client(headers=auth, timeout=60)
        first = raw.get(url)
        first.raise_for_status()
        etag = first.headers["ETag"]
        revalidating = redline.Redline(base_url=base, api_key=key, timeout=60)
        no_cache = redline.Redline(base_url=base, api_key=key, timeout=60, cache_entries=0)
        version = revalidating.get_prompt(prompt_id)
        assert no_cache.get_prompt(prompt_id) == version

        def raw_304() -> None:
            if raw.get(url, headers={"If-None-Match": etag}).status_code != 304:
                raise SystemExit("the raw revalidation did not answer 304")

        modes: dict[str, tuple[Callable[[], object], int]] = {
            "raw_304": (raw_304, 0),
            "client_revalidating": (lambda: revalidating.get_prompt(prompt_id), 0),
            "client_no_cache": (lambda: no_cache.get_prompt(prompt_id), len(first.content)),
        }
        for call, _ in modes.values():  # warm-up
            run(call, 0.5)
        rounds: dict[str, list[Figures]] = {name: [] for name in modes}
        for _ in range(args.rounds):
            for name, (call, _) in modes.items():
                rounds[name].append(run(call, args.seconds))
        print(f"version: {len(version.content.system):,} characters of system prompt")
        result: dict[str, Figures] = {}
        for name, (_, body) in modes.items():
            figures = sorted(rounds[name], key=lambda f: f.calls_per_s)[len(rounds[name]) // 2]
            result[name] = figures
            print(
                f"{name:20} {figures.calls_per_s:8.1f} calls/s  p50 {figures.p50_ms:6.2f} ms"
                f"  body {body:,} bytes/call"
            )
        overhead = result["raw_304"].calls_per_s / result["client_revalidating"].calls_per_s
        speedup = result["client_revalidating"].calls_per_s / result["client_no_cache"].calls_per_s
        print(f"overhead_ratio={overhead:.3f}  (raw 304 calls/s over the client's)")
        print(f"speedup_vs_full={speedup:.3f}")
        revalidating.close()
        no_cache.close()
        raw.close()
    finally:
        server.terminate()
        server.wait(timeout=20)


if __name__ == "__main__":
    main()
