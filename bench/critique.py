"""Time from "Draft" to the first suggestion, on the offline fixture provider.

    .venv/bin/python bench/critique.py [--drafts 20] [--delay-ms 15]

In-process on the embedded default (a throwaway SQLite database; the run executes on a thread
of the process, as under `make run`): a reviewer POSTs `/api/v1/reviews/{id}/drafts/` and polls
`GET /api/v1/review-drafts/{id}/` every 5 ms, as the review page does (every 200 ms there),
timing the first suggestion and the finished draft (8 suggestions for the ML config document);
the first draft warms the process up and is not counted.
`--delay-ms` paces the fixture's pieces (RUN_FIXTURE_DELAY_MS); 0 shows Redline's own cost.
The last line is `name=value` pairs.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._django import setup_django  # noqa: E402


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--drafts", type=int, default=20)
    parser.add_argument("--delay-ms", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        setup_django(Path(workdir))
        from django.conf import settings
        from django.test import Client

        from reviews.models import DesignDoc
        from reviews.services import review_create
        from tests.factories import make_user

        settings.RUN_FIXTURE_DELAY_MS = args.delay_ms
        settings.RUN_EAGER_MODE = "thread"
        settings.ALLOWED_HOSTS = ["*"]
        doc = DesignDoc.objects.get(title="Layered YAML configuration for training runs")
        first: list[float] = []
        done: list[float] = []
        for index in range(args.drafts + 1):  # the first warms the process up, untimed
            user = make_user(f"bench-{index}")
            review, _ = review_create(actor=user, revision=doc.revisions.order_by("-number")[0])
            client = Client()
            client.force_login(user)
            started = time.perf_counter()
            created = client.post(
                f"/api/v1/reviews/{review.pk}/drafts/",
                {"provider": "fixture"},
                content_type="application/json",
            )
            assert created.status_code == 201, created.content
            url = f"/api/v1/review-drafts/{created.json()['id']}/"
            seen_first = None
            while True:
                body = client.get(url).json()
                now = time.perf_counter() - started
                if body["suggestions"] and seen_first is None:
                    seen_first = now
                if body["status"] in ("done", "failed"):
                    assert body["status"] == "done", body["error"]
                    break
                time.sleep(0.005)
            if index:
                first.append((seen_first or now) * 1000)
                done.append(now * 1000)
        print(
            f"fixture provider, {args.delay_ms} ms between pieces, {args.drafts} drafts"
            " (8 suggestions each):"
        )
        print(
            f"  Draft → first suggestion: p50 {statistics.median(first):.0f} ms,"
            f" p95 {_percentile(first, 0.95):.0f} ms"
        )
        print(
            f"  Draft → all suggestions:  p50 {statistics.median(done):.0f} ms,"
            f" p95 {_percentile(done, 0.95):.0f} ms"
        )
        print(
            f"first_p50_ms={statistics.median(first):.1f}"
            f" first_p95_ms={_percentile(first, 0.95):.1f}"
            f" done_p50_ms={statistics.median(done):.1f} delay_ms={args.delay_ms}"
        )


if __name__ == "__main__":
    main()
