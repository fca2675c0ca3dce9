"""Size and render time of a folded diff page against the same diff with every row shown.

A ~300 KB prompt edited at line 2,000 (and optionally at more places): the folded page keeps
three lines of context around each change and folds the rest behind expand controls, so its
size follows what changed; the baseline renders every row, as the page did before folding.

`--attach`: a short prompt replaced by a long text (issue 33: a 20 MB file attached). The page
compares the first PLAYGROUND_DIFF_LARGE_CHARS of the change (1 MiB, ~8,000 lines here) and
shows PLAYGROUND_DIFF_PAGE_ROWS of them; the baseline shows every compared row, as before.

Run: `.venv/bin/python bench/diff_page.py [--lines N] [--edits K] [--runs R] [--attach]`
(no database).
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
    parser.add_argument("--attach", action="store_true", help="a long text attached (issue 33)")
    args = parser.parse_args()

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.template.loader import render_to_string

    from playground.text.content import content_validate
    from playground.text.diffing import DiffBlock, content_diff

    if args.attach:
        attach(args.runs)
        return

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


def attach(runs: int) -> None:
    """The diff body after a short prompt is replaced by a long text, cut as the page cuts it."""
    from django.conf import settings
    from django.template.loader import render_to_string

    from playground.text.diffing import DiffBlock, text_diff

    cap = int(settings.PLAYGROUND_DIFF_LARGE_CHARS)
    line = "attached {:07d}: a paragraph of the reference document, pasted whole as context.\n"
    parts: list[str] = []
    size = 0
    while size < cap:
        parts.append(line.format(len(parts)))
        size += len(parts[-1])
    compared = "".join(parts[:-1])  # the cut ends at a line break
    diff = text_diff("system", "Answer from the attached document.\n", compared, limit=None)
    diff.cut = True
    context = {"changes": [], "expand_url": "/p/1/diff/rows/?a=1&b=2", "fold_step": 20}
    context |= {"fold_all_max": 2000, "page_rows": int(settings.PLAYGROUND_DIFF_PAGE_ROWS)}

    def render(items: list[Any]) -> tuple[int, float]:
        began = time.perf_counter()
        html = render_to_string("playground/_diff_body.html", {**context, "texts": items})
        return len(html.encode()), time.perf_counter() - began

    everything = _AllRows(
        diff.field,
        diff.added,
        diff.removed,
        0,
        [DiffBlock(rows=tuple(diff.rows), end=len(diff.rows))],
    )
    paged = [render([diff]) for _ in range(runs)]
    full = [render([everything]) for _ in range(runs)]
    paged_ms = statistics.median(r[1] for r in paged) * 1000
    full_ms = statistics.median(r[1] for r in full) * 1000
    print(f"attached text: {len(compared):,} characters compared, {len(diff.rows):,} rows")
    print(
        f"paged diff body ({context['page_rows']} rows): {paged[0][0]:,} bytes, {paged_ms:.1f} ms"
    )
    print(f"every compared row:      {full[0][0]:,} bytes, {full_ms:.1f} ms")
    print(f"paged / every row: size {paged[0][0] / full[0][0]:.3f}, time {paged_ms / full_ms:.3f}")


if __name__ == "__main__":
    main()
