"""Pages stay fast as data grows: server time and queries of the main pages at two data sizes.

Run: `.venv/bin/python bench/pages.py [--requests 40]` (a throwaway SQLite database and object
store in a temporary folder; nothing else is touched).

For each page, at a small and a large size of the data it shows, this prints the server time
(p50 and p99 over `--requests` requests through Django's handler, after warm-up), the number of
SQL queries of one request and the response size:

- prompt page (`/playground/p/<id>/`, owner): 10 vs 1,000 versions;
- shared page (`/s/<token>`, anonymous, pinned version): a prompt of 10 vs 1,000 versions;
- review page (`/reviews/r/<id>/`, reviewer): the same 205-section document with 10 annotations
  and 1 revision vs 200 annotations and 5 revisions;
- question page (`/questions/<slug>/`, signed in): 10 vs 200 prompts and documents tied to it.

The figures to read: `queries` equal at both sizes, and `ratio` (large p50 / small p50) within
1.5. The last line is `worst_time_ratio=<float>` over the four pages. On a shared machine the
times are noisy; `calls` (Python function calls of one request, counted by cProfile) is the
same figure without the noise, and `calls_ratio` its large / small ratio.
"""

import argparse
import cProfile
import pstats
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._django import setup_django  # noqa: E402


@dataclass(frozen=True)
class PageFigures:
    p50_ms: float
    p99_ms: float
    queries: int
    size: int
    calls: int


def measure(client, path: str, requests: int) -> PageFigures:
    from django.db import connection, reset_queries
    from django.test.utils import CaptureQueriesContext

    for _ in range(3):
        response = client.get(path)
        assert response.status_code == 200, (path, response.status_code)
    # The handler clears the query log when a request starts; start the capture from empty.
    reset_queries()
    with CaptureQueriesContext(connection) as captured:
        response = client.get(path)
    queries = len(captured)  # now: the log is cleared again by the next request
    profile = cProfile.Profile()
    profile.enable()
    client.get(path)
    profile.disable()
    calls = pstats.Stats(profile).total_calls  # type: ignore[attr-defined]
    times = []
    for _ in range(requests):
        start = time.perf_counter()
        client.get(path)
        times.append(time.perf_counter() - start)
    times.sort()
    return PageFigures(
        p50_ms=statistics.median(times) * 1e3,
        p99_ms=times[min(len(times) - 1, int(len(times) * 0.99))] * 1e3,
        queries=queries,
        size=len(response.content),
        calls=calls,
    )


def build_prompt(owner, versions: int, question=None):
    from playground.services import prompt_create, prompt_version_create

    system = "You are a careful reviewer of system designs.\n" * 40
    content = {
        "provider": "anthropic",
        "model": "claude-sonnet-4-6",
        "system": system,
        "messages": [{"role": "user", "content": "Review: {{design}}"}],
        "variables": {"design": "a cache"},
    }
    prompt, version = prompt_create(
        actor=owner, title=f"Prompt of {versions}", content=content, question=question
    )
    parent = version
    for number in range(1, versions):
        content = {**content, "system": system + f"Rule {number}.\n"}
        # Every fifth save branches from an older version, so the tree has forks.
        base = parent if number % 5 else version
        parent = prompt_version_create(
            actor=owner, prompt=prompt, parent=base, content=content, message=f"edit {number}"
        ).version
    return prompt, parent


# Both sizes review the same document; only the annotations and revisions grow.
DOC_SECTIONS = 205


def build_review(reviewer, annotations: int, revisions: int):
    from reviews.selectors import revision_text
    from reviews.services import annotation_create, doc_create, doc_revision_create, review_create

    paragraphs = [
        f"## Section {n}\n\nThe gateway keeps tenant quotas in a local cache refreshed every "
        f"{n} seconds, and replica {n} answers heartbeats on port {8000 + n}.\n"
        for n in range(DOC_SECTIONS)
    ]
    body = "# Design\n\n" + "\n".join(paragraphs)
    doc, revision = doc_create(actor=reviewer, title=f"Doc of {annotations}", body=body)
    review, _ = review_create(actor=reviewer, revision=revision)
    text = revision_text(revision=revision)
    for n in range(annotations):
        passage = f"replica {n} answers heartbeats on port {8000 + n}"
        start = text.index(passage)
        annotation_create(
            actor=reviewer,
            review=review,
            area="failure-modes",
            kind="risk",
            severity="major",
            body=f"What happens when replica {n} misses a heartbeat?",
            start=start,
            end=start + len(passage),
        )
    for number in range(1, revisions):
        body = body.replace(f"Section {number}\n", f"Section {number} (revised)\n")
        doc_revision_create(actor=reviewer, doc=doc, body=body)
    return review


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="redline-pages-") as tmp:
        setup_django(Path(tmp))
        run(args.requests)


def run(requests: int) -> None:
    from django.test import Client

    from accounts.services import user_create
    from playground.services import share_link_create
    from questionbank.selectors import question_by_slug
    from reviews.services import doc_create

    owner = user_create(username="bench-owner", password="bench-pass-123")
    client = Client()
    client.force_login(owner)
    anonymous = Client()

    built: dict[str, dict[str, str]] = {}
    for label, versions, annotations, revisions, related in (
        ("small", 10, 10, 1, 10),
        ("large", 1000, 200, 5, 200),
    ):
        start = time.perf_counter()
        prompt, latest = build_prompt(owner, versions)
        _, token = share_link_create(actor=owner, prompt=prompt, access="public", version=latest)
        review = build_review(owner, annotations, revisions)
        slug = "llm-inference-api" if label == "small" else "checkpoint-distribution"
        question = question_by_slug(slug=slug)
        for number in range(related):
            build_prompt(owner, 1, question=question)
            doc_create(
                actor=owner, title=f"Related {number}", body="# Doc\n\nText.\n", question=question
            )
        built[label] = {
            "prompt": f"/playground/p/{prompt.pk}/",
            "shared": f"/s/{token}",
            "review": f"/reviews/r/{review.pk}/",
            "question": f"/questions/{slug}/",
        }
        print(f"# built {label} data in {time.perf_counter() - start:.0f} s")

    worst = 0.0
    for page in ("prompt", "shared", "review", "question"):
        viewer = anonymous if page == "shared" else client
        small = measure(viewer, built["small"][page], requests)
        large = measure(viewer, built["large"][page], requests)
        ratio = large.p50_ms / small.p50_ms
        worst = max(worst, ratio)
        same = "same" if small.queries == large.queries else "GROWS"
        print(
            f"{page}_page: small p50_ms={small.p50_ms:.1f} p99_ms={small.p99_ms:.1f} "
            f"queries={small.queries} bytes={small.size} calls={small.calls} | "
            f"large p50_ms={large.p50_ms:.1f} p99_ms={large.p99_ms:.1f} "
            f"queries={large.queries} bytes={large.size} calls={large.calls} | "
            f"queries {same}, ratio={ratio:.2f}, calls_ratio={large.calls / small.calls:.2f}"
        )
    print("target: queries the same at both sizes, ratio <= 1.5")
    print(f"worst_time_ratio={worst:.2f}")


if __name__ == "__main__":
    main()
