"""Re-anchoring through the database: what a new revision costs end to end.

`bench/reanchor.py` times the algorithm alone; this one times `revision_anchors_write` (the
`reviews.revision_reanchor` task's body: load annotations and their latest anchors, read both
texts from textstore, diff once, locate each, bulk-insert) and the review page that shows the
result, on a throwaway SQLite database.

Run: `.venv/bin/python bench/reanchor_db.py [--annotations N] [--runs R]`. Prints per run the
time and query count of re-anchoring, the anchor statuses, and the review page's time and query
count (which must not grow with N).
"""

import argparse
import random
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._django import setup_django  # noqa: E402


def document() -> str:
    """The two practice documents, repeated with numbered sections to ~40 KB."""
    data = ROOT / "reviews" / "data"
    parts = [p.read_text(encoding="utf-8") for p in sorted(data.glob("*.md"))]
    chunks = []
    for copy in range(6):
        for part in parts:
            chunks.append(re.sub(r"^(#+) (.*)$", rf"\1 \2 ({copy + 1})", part, flags=re.M))
    return "\n".join(chunks)


def revise(text: str, rng: random.Random) -> str:
    """A realistic revision: reword some sentences, delete a few, move a section, add prose."""
    paragraphs = text.split("\n\n")
    for _ in range(len(paragraphs) // 12):
        i = rng.randrange(len(paragraphs))
        paragraphs[i] = paragraphs[i].replace(" the ", " this ", 2)
    for _ in range(len(paragraphs) // 25):
        del paragraphs[rng.randrange(len(paragraphs))]
    moved = paragraphs.pop(rng.randrange(len(paragraphs)))
    paragraphs.insert(rng.randrange(len(paragraphs)), moved)
    for _ in range(5):
        paragraphs.insert(rng.randrange(len(paragraphs)), "A new paragraph added in review.")
    return "\n\n".join(paragraphs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--annotations", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        setup_django(Path(tmp))
        from django.db import connection
        from django.test import Client
        from django.test.utils import CaptureQueriesContext

        from accounts.services import user_create
        from reviews.models import AnnotationAnchor
        from reviews.services import (
            annotation_create,
            doc_create,
            doc_revision_create,
            review_create,
        )
        from reviews.services.anchors import revision_anchors_write

        rng = random.Random(args.seed)
        author = user_create(username="author", password="bench-password-123")
        reviewer = user_create(username="reviewer", password="bench-password-123")
        text = document()
        doc, r1 = doc_create(actor=author, title="Bench", body=text)
        review, _ = review_create(actor=reviewer, revision=r1)
        spans = [m.span() for m in re.finditer(r"[A-Za-z][^.\n]{20,80}", text)]
        for index in range(args.annotations):
            start, end = spans[rng.randrange(len(spans))]
            annotation_create(
                actor=reviewer,
                review=review,
                start=start,
                end=end,
                area="failure-modes",
                kind="question",
                severity="minor",
                body=f"note {index}",
            )
        r2, _ = doc_revision_create(actor=author, doc=doc, body=revise(text, rng))
        print(f"document_chars={len(text)} annotations={args.annotations}")

        times = []
        for run in range(args.runs):
            AnnotationAnchor.objects.filter(revision=r2).delete()
            with CaptureQueriesContext(connection) as queries:
                started = time.perf_counter()
                stored = revision_anchors_write(revision=r2)
                times.append(time.perf_counter() - started)
            print(
                f"run {run + 1}: reanchor_ms={times[-1] * 1000:.1f} stored={stored} "
                f"queries={len(queries.captured_queries)}"
            )
        statuses = Counter(
            AnnotationAnchor.objects.filter(revision=r2).values_list("status", flat=True)
        )
        print("statuses:", dict(sorted(statuses.items())))
        print(
            f"reanchor_median_ms={statistics.median(times) * 1000:.1f} "
            f"per_annotation_ms={statistics.median(times) * 1000 / args.annotations:.2f}"
        )

        client = Client()
        client.force_login(reviewer)
        url = f"/reviews/r/{review.pk}/?rev={r2.pk}"
        client.get(url)
        page_times = []
        for _ in range(args.runs):
            with CaptureQueriesContext(connection) as queries:
                started = time.perf_counter()
                response = client.get(url)
                page_times.append(time.perf_counter() - started)
            assert response.status_code == 200
        print(
            f"review_page_median_ms={statistics.median(page_times) * 1000:.1f} "
            f"queries={len(queries.captured_queries)}"
        )


if __name__ == "__main__":
    main()
