"""Benchmark the revision diff page's engine (reviews/revision_diff.py).

Uses bench/reanchor.py's generated design document (~50 KB, 200 annotations; and ~500 KB, the
largest body a revision may have) and its realistic revision. Times, per run:

- baseline: `anchors_locate`, the re-anchoring every new revision already pays for;
- `revision_diff_compute`: paragraph alignment, word diffs of changed paragraphs, placing the
  200 annotations, and `fold_unchanged` for the page.

Prints medians, the ratio to the baseline and what the diff found (rows, folds, marks).
Run: `.venv/bin/python bench/revision_diff.py [--runs N]` (no Django needed).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.reanchor import build_case, forget_caches  # noqa: E402
from common.textdiff import Fold, fold_unchanged  # noqa: E402
from reviews.anchoring import anchors_locate  # noqa: E402
from reviews.revision_diff import AnchorPair, revision_diff_compute  # noqa: E402

T = TypeVar("T")


def timed(fn: Callable[[], T], runs: int) -> tuple[float, T]:
    samples = []
    for _ in range(runs):
        forget_caches()
        started = time.perf_counter()
        result = fn()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1000, result


def measure(target: int, runs: int) -> float:
    case = build_case(target=target)
    locate_ms, anchors = timed(
        lambda: anchors_locate(selectors=case.selectors, old_text=case.old, new_text=case.new),
        runs,
    )
    pairs = [
        AnchorPair(
            annotation_id=index,
            review_id=1,
            old_span=(selector.start, selector.end),
            new_span=(
                (anchor.start, anchor.end)
                if anchor.start is not None and anchor.end is not None
                else None
            ),
            new_status=str(anchor.status),
            new_score=anchor.score,
        )
        for index, (selector, anchor) in enumerate(zip(case.selectors, anchors, strict=True))
    ]

    def diff_and_fold():
        diff = revision_diff_compute(old_text=case.old, new_text=case.new, anchors=pairs)
        folded = fold_unchanged(
            list(diff.rows),
            unchanged=lambda r: (
                r.unchanged and not any(m.status in ("fuzzy", "orphaned") for m in r.markers)
            ),
        )
        return diff, folded

    diff_ms, (diff, folded) = timed(diff_and_fold, runs)
    folds = [item for item in folded if isinstance(item, Fold)]
    statuses: dict[str, int] = {}
    for marker in diff.markers:
        statuses[marker.status] = statuses.get(marker.status, 0) + 1
    print(
        f"{len(case.old) / 1000:.0f} KB doc, {len(case.selectors)} annotations: "
        f"re-anchoring (baseline) {locate_ms:.1f} ms, revision diff + fold {diff_ms:.1f} ms "
        f"({diff_ms / locate_ms:.2f}x baseline)"
    )
    print(
        f"  rows {len(diff.rows)} (added {diff.added}, removed {diff.removed}, changed "
        f"{diff.changed}, unchanged {diff.unchanged}); page items {len(folded)} with "
        f"{len(folds)} folds; marks {sum(statuses.values())} {dict(sorted(statuses.items()))}"
    )
    return diff_ms / locate_ms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    ratios = [measure(target, args.runs) for target in (50_000, 500_000)]
    print(f"revision_diff_vs_reanchor_ratio_50kb={ratios[0]:.3f}")
    print(f"revision_diff_vs_reanchor_ratio_500kb={ratios[1]:.3f}")


if __name__ == "__main__":
    main()
