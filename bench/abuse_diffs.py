"""Diffs under a budget (issue #21): the cost of the red team's diff, in one process.

    .venv/bin/python bench/abuse_diffs.py [--lines 8000] [--pairs 21 61]

Builds, in a throwaway SQLite database and object store, prompts whose two versions hold
`pairs` messages of `lines` random `a`/`b` lines each (a different draw on each side: the worst
input for a line diff), then asks, through Django's in-process test client (the same URL
routing, middleware, views and API code gunicorn runs; no network):

- `GET /api/v1/versions/{b}/diff/?against={a}` with an empty diff cache (cold), then again
  (warm: served from the cache by the two content hashes);
- the HTML diff page, cold and warm, and one fold of it (`.../diff/rows/`), warm.

Each row is CPU seconds of this process (`time.process_time`) and wall seconds. The baseline,
measured in the same run, is one message pair diffed with no budget (the pre-budget engine
path); the issue measured 23 s CPU for 21 pairs and 83 s for 61 before. Target: ≤ 2 s each.
Prints one `abuse: <measure> | <figure> | <target>` line per row.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._django import setup_django  # noqa: E402


def row(measure: str, figure: str, target: str) -> None:
    print(f"abuse: {measure} | {figure} | {target}", flush=True)


def measured(call: Callable[[], Any]) -> tuple[float, float, Any]:
    cpu, wall = time.process_time(), time.perf_counter()
    result = call()
    return time.process_time() - cpu, time.perf_counter() - wall, result


def random_lines(rng: random.Random, count: int) -> str:
    return "".join(rng.choice("ab") + "\n" for _ in range(count))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=8000)
    parser.add_argument("--pairs", type=int, nargs="+", default=[21, 61])
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="redline-abuse-diffs-") as workdir:
        setup_django(Path(workdir))
        from django.conf import settings
        from django.test import Client

        from accounts.services import user_create
        from playground.services import prompt_create, prompt_version_create
        from playground.text.diffing import DiffBudget, diff_cache, text_diff

        settings.ALLOWED_HOSTS = ["testserver"]
        user = user_create(username="red", password="red-team-password-1")
        client = Client()
        client.force_login(user)
        rng = random.Random(21)

        # Baseline: one pair through the engine with no budget (what every pair used to cost).
        a, b = random_lines(rng, args.lines), random_lines(rng, args.lines)
        unlimited = DiffBudget(lines=sys.maxsize, rows=sys.maxsize, seconds=3600.0)
        cpu, wall, _ = measured(lambda: text_diff("x", a, b, limit=None, budget=unlimited))
        row(
            f"diff baseline: one {args.lines:,}-line pair, no budget (CPU s / wall s)",
            f"{cpu:.2f} / {wall:.2f}",
            "(reference)",
        )

        for pairs in args.pairs:
            old = [{"role": "user", "content": random_lines(rng, args.lines)} for _ in range(pairs)]
            new = [{"role": "user", "content": random_lines(rng, args.lines)} for _ in range(pairs)]
            base = {"provider": "echo", "model": "echo-1", "system": "", "variables": {}}
            prompt, v1 = prompt_create(
                actor=user, title=f"{pairs} pairs", content={**base, "messages": old}
            )
            v2 = prompt_version_create(
                actor=user, prompt=prompt, parent=v1, content={**base, "messages": new}
            ).version
            name = f"{pairs}×{args.lines:,} random lines"
            api = f"/api/v1/versions/{v2.pk}/diff/?against={v1.pk}"
            page = f"/playground/p/{prompt.pk}/diff/?a={v1.pk}&b={v2.pk}"

            def get(url: str) -> Any:
                response = client.get(url)
                assert response.status_code == 200, (url, response.status_code)
                return response

            diff_cache.clear()
            cpu, wall, response = measured(partial(get, api))
            body = response.json()
            too_large = sum(1 for text in body["texts"] if text["too_large"])
            row(f"diff API {name}, cold (CPU s / wall s)", f"{cpu:.2f} / {wall:.2f}", "≤ 2 s")
            row(
                f"diff API {name}: texts answered too large / texts",
                f"{too_large} / {len(body['texts'])} ({len(response.content):,} bytes)",
                "a budget",
            )
            cpu, wall, _ = measured(partial(get, api))
            row(f"diff API {name}, warm (CPU s / wall s)", f"{cpu:.2f} / {wall:.2f}", "≤ 2 s")

            diff_cache.clear()
            cpu, wall, response = measured(partial(get, page))
            row(
                f"diff page {name}, cold (CPU s / wall s)",
                f"{cpu:.2f} / {wall:.2f} ({len(response.content):,} bytes)",
                "≤ 2 s",
            )
            cpu, wall, _ = measured(partial(get, page))
            row(f"diff page {name}, warm (CPU s / wall s)", f"{cpu:.2f} / {wall:.2f}", "≤ 2 s")
            field = next(t["field"] for t in body["texts"] if not t["too_large"])
            fold = (
                f"/playground/p/{prompt.pk}/diff/rows/?a={v1.pk}&b={v2.pk}&field={field}"
                "&start=0&end=200&dir=all"
            )
            cpu, wall, _ = measured(partial(get, fold))
            row(f"diff fold {name}, warm (CPU s / wall s)", f"{cpu:.2f} / {wall:.2f}", "≤ 2 s")


if __name__ == "__main__":
    main()
