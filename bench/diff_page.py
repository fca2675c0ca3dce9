"""Size and render time of a folded diff page against the same diff with every row shown.

A ~300 KB prompt edited at line 2,000 (and optionally at more places): the folded page keeps
three lines of context around each change and folds the rest behind expand controls, so its
size follows what changed; the baseline renders every row, as the page did before folding.

Run: `.venv/bin/python bench/diff_page.py [--lines N] [--edits K] [--runs R]` (no database).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


@dataclass(frozen=True)
class _AllRows:
    """A text diff that shows every row (the baseline page)."""

    field: str
    added: int
    removed: int
    more: int
    blocks: list[Any]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=5000)
    parser.add_argument("--edits", type=int, default=1)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.template.loader import render_to_string

    from playground.content import content_validate
    from playground.diffing import DiffBlock, content_diff

    before = "".join(
        f"Line {n:05d}: unchanged text of a long prompt, kept as it was.\n"
        for n in range(args.lines)
    )
    after = before
    for k in range(args.edits):
        line = 2000 + k * (args.lines - 2000) // max(args.edits, 1)
        after = after.replace(f"Line {line:05d}: unchanged", f"Line {line:05d}: EDITED", 1)
    base = content_validate({"provider": "echo", "model": "echo-1", "system": before})
    edited = content_validate({"provider": "echo", "model": "echo-1", "system": after})
    texts = [t for t in content_diff(base, edited, limit=None)["texts"] if t.changed]
    context = {"changes": [], "expand_url": "/p/1/diff/rows/?a=1&b=2", "fold_step": 20}

    def render(items: list[Any]) -> tuple[int, float]:
        began = time.perf_counter()
        html = render_to_string("playground/_diff_body.html", {**context, "texts": items})
        return len(html.encode()), time.perf_counter() - began

    everything = [
        _AllRows(t.field, t.added, t.removed, 0, [DiffBlock(rows=tuple(t.rows), end=len(t.rows))])
        for t in texts
    ]
    folded_runs = [render(texts) for _ in range(args.runs)]
    full_runs = [render(everything) for _ in range(args.runs)]
    folded_size, full_size = folded_runs[0][0], full_runs[0][0]
    folded_ms = statistics.median(r[1] for r in folded_runs) * 1000
    full_ms = statistics.median(r[1] for r in full_runs) * 1000
    print(f"prompt: {len(before.encode()):,} bytes, {args.lines:,} lines, {args.edits} edit(s)")
    print(f"folded diff body: {folded_size:,} bytes, render median {folded_ms:.1f} ms")
    print(f"every row shown:  {full_size:,} bytes, render median {full_ms:.1f} ms")
    print(
        f"folded / every row: size {folded_size / full_size:.3f}, "
        f"render time {folded_ms / full_ms:.3f}"
    )


if __name__ == "__main__":
    main()
