"""Memory and storage bounded in bytes (issue #21), against a real gunicorn worker on PostgreSQL.

    BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/redline_bench \\
        .venv/bin/python bench/abuse_memory.py [--mib 8] [--versions 24] [--runs 10]

The database named by BENCH_DATABASE_URL is migrated and emptied (`flush`: give the bench its
own); objects go to a temporary local store. The server is the production one, `make serve`'s
gunicorn with `gunicorn.conf.py` serving `config.asgi`.

1. Seeds a prompt whose versions are one-line edits of a `--mib` MiB text holding one emoji (so
   the worker's str of it takes 4 bytes a character), `--versions` distinct versions.
2. Reads every version as the red team did: `GET /api/v1/versions/{id}/`, its HTML page and
   its diff against the previous version (API), and prints the worker's RSS growth over its RSS
   after a warm-up (VmRSS, /proc). Target: ≤ PROCESS_CACHE_BYTES + 32 MB.
3. Seeds a version with a 4.2 MB text and, as a viewer, POSTs `--runs` runs of it (echo
   provider, run inline); prints the `playground_run` table's growth
   (`pg_total_relation_size`), the size of each POST answer and of a list of 3 runs. Target:
   growth independent of the text's size; answers of a few KB.

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


def row(measure: str, figure: str, target: str) -> None:
    print(f"abuse: {measure} | {figure} | {target}", flush=True)


SEED = """
import json
from accounts.services import api_token_create, user_create
from django.contrib.auth import get_user_model
from playground.services import grant_set, prompt_create, prompt_version_create

User = get_user_model()
owner = User.objects.filter(username="owner").first() or user_create(
    username="owner", password={password!r}
)
viewer = User.objects.filter(username="viewer").first() or user_create(
    username="viewer", password={password!r}
)
size = {size}
line = "A line of a long prompt about caches, queues and budgets.\\n"
body = line * (size // len(line))
head = "🙂 emoji first, so every character of this text takes 4 bytes in a str\\n"

def content(text):
    return {{"provider": "echo", "model": "echo-1", "system": text, "variables": {{}},
            "messages": [{{"role": "user", "content": "Summarise the context."}}]}}

prompt, version = prompt_create(actor=owner, title="big", content=content(head + body))
ids = [version.pk]
cut = len(head) + len(line) * 1000
for n in range(1, {versions}):
    text = head + body[:cut] + f"Edited line number {{n}}.\\n" + body[cut + len(line):]
    version = prompt_version_create(
        actor=owner, prompt=prompt, parent=version, content=content(text)
    ).version
    ids.append(version.pk)
run_text = ("A 4.2 MB prompt for runs. " * 200 + "\\n") * (4_200_000 // 5_201)
_, run_version = prompt_create(
    actor=owner, title="runs", content=content(run_text)
)
grant_set(actor=owner, prompt=run_version.prompt, username="viewer", role="viewer")
_, key = api_token_create(actor=viewer)
print(json.dumps({{"prompt": prompt.pk, "ids": ids, "run_version": run_version.pk, "key": key}}))
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mib", type=int, default=8)
    parser.add_argument("--versions", type=int, default=24)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument(
        "--reads",
        default="api,page,diff",
        help="which reads of each version: api (GET /versions/{id}/), page, diff",
    )
    parser.add_argument("--verbose", action="store_true", help="show the server's log")
    args = parser.parse_args()
    reads = set(args.reads.split(","))
    database = os.environ.get(
        "BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/redline_abuse_memory_bench"
    )
    if not database.startswith("postgres"):
        raise SystemExit("set BENCH_DATABASE_URL to a PostgreSQL database of the bench's own")
    ensure_database(database)

    with tempfile.TemporaryDirectory(prefix="redline-abuse-memory-") as workdir:
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
            "RUN_ECHO_DELAY_MS": "0",
            "LOG_LEVEL": "WARNING",
            "GUNICORN_WORKERS": "1",
            "GUNICORN_THREADS": "4",
            "GUNICORN_TIMEOUT": "600",
            "GUNICORN_ACCESS_LOG": "/dev/null",
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
        }
        migrate(env)
        # The objects of an earlier run were in its temporary store: start from an empty
        # database too (this is the bench's own database).
        django_script(
            env,
            "from django.core.management import call_command\n"
            "call_command('flush', interactive=False)",
        )
        seeded = json.loads(
            django_script(
                env,
                SEED.format(password=PASSWORD, size=args.mib * MIB, versions=args.versions),
            ).splitlines()[-1]
        )
        budget = int(
            django_script(
                env, "from django.conf import settings\nprint(settings.PROCESS_CACHE_BYTES)"
            )
        )
        port = free_port()
        server = asgi_server(port, env, quiet=not args.verbose)
        try:
            wait_for_port(port)
            worker = worker_pid(server.pid)
            client = Client(port=port, key=seeded["key"])
            owner = browser_session(port, "owner", PASSWORD)
            base = f"http://127.0.0.1:{port}"
            owner_api = browser_session(port, "owner", PASSWORD)

            # Warm up: the first requests import and connect; measure from there.
            owner.open(f"{base}/playground/").read()
            owner_api.open(f"{base}/api/v1/prompts/").read()
            time.sleep(0.5)
            idle = status_kb(worker, "VmRSS") / 1024
            ids = seeded["ids"]
            prompt = seeded["prompt"]
            started = time.perf_counter()
            for n, version in enumerate(ids):
                if "api" in reads:
                    owner_api.open(f"{base}/api/v1/versions/{version}/").read()
                if "page" in reads:
                    owner.open(f"{base}/playground/p/{prompt}/?v={version}").read()
                if n and "diff" in reads:
                    owner_api.open(
                        f"{base}/api/v1/versions/{version}/diff/?against={ids[n - 1]}"
                    ).read()
            elapsed = time.perf_counter() - started
            after = status_kb(worker, "VmRSS") / 1024
            peak = status_kb(worker, "VmHWM") / 1024
            target = budget / MIB + 32
            row(
                f"worker RSS growth after reading {len(ids)} versions of a {args.mib} MiB text"
                f" with an emoji ({' + '.join(sorted(reads))}), MB",
                f"{after - idle:.1f} (idle {idle:.0f}, after {after:.0f}, peak {peak:.0f};"
                f" {elapsed:.0f} s)",
                f"≤ {target:.0f} (cache budget {budget / MIB:.0f} MB + 32)",
            )

            # Runs of a 4.2 MB version, as a viewer.
            def run_table() -> int:
                return int(
                    django_script(
                        env,
                        "from django.db import connection\n"
                        "with connection.cursor() as c:\n"
                        "    c.execute(\"SELECT pg_total_relation_size('playground_run')\")\n"
                        "    print(c.fetchone()[0])\n",
                    )
                )

            before = run_table()
            sizes = []
            for n in range(args.runs):
                status, body = client.request(
                    "POST",
                    f"/api/v1/versions/{seeded['run_version']}/runs/",
                    json.dumps({"idempotency_key": f"bench-{time.time()}-{n}"}).encode(),
                    {"Content-Type": "application/json"},
                )
                assert status == 201, (status, body[:300])
                sizes.append(len(body))
            growth = run_table() - before
            status, listing = client.request(
                "GET", f"/api/v1/versions/{seeded['run_version']}/runs/?page_size=3"
            )
            first = json.loads(listing)["results"][0]["id"]
            status, request = client.request("GET", f"/api/v1/runs/{first}/request/")
            row(
                f"playground_run growth for {args.runs} runs of a 4.2 MB version (viewer), bytes",
                f"{growth:,}",
                "independent of the text (was 43.5 MB)",
            )
            row(
                "run POST answer size, bytes (largest)",
                f"{max(sizes):,}",
                "a few KB (was 8.4 MB)",
            )
            row("list of runs answer size, bytes", f"{len(listing):,}", "a few KB (was 25 MB)")
            row(
                "GET /runs/{id}/request/ size, bytes (the prompt, on demand)",
                f"{len(request):,}",
                "the request, once",
            )
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)


if __name__ == "__main__":
    main()
