"""One careless or hostile account against the production set-up: every part, one table.

Runs each `bench/abuse_*.py` part in its own process (each starts the servers it needs and
stops them), collects the rows they print as `abuse: <measure> | <figure> | <target>`, and
prints them as one Markdown table, the table docs/operations.md keeps. A part that fails is
reported as a row too, with its exit code, and makes this script exit non-zero.

    .venv/bin/python bench/abuse.py [--only streams,diffs,...]

The parts need PostgreSQL (BENCH_DATABASE_URL, each part's default is its own database on
127.0.0.1:5432) and some need Redis (REDIS_URL, default redis://127.0.0.1:6379/14).
"""

import argparse
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROW_PREFIX = "abuse:"


@dataclass(frozen=True)
class Row:
    part: str
    measure: str
    figure: str
    target: str


def parts_found() -> list[str]:
    return sorted(path.stem.removeprefix("abuse_") for path in BENCH.glob("abuse_*.py"))


def row_parse(part: str, line: str) -> Row | None:
    """A row a part printed, or None for any other line (progress, notes)."""
    if not line.startswith(ROW_PREFIX):
        return None
    cells = [cell.strip() for cell in line.removeprefix(ROW_PREFIX).split("|")]
    cells += [""] * (3 - len(cells))
    return Row(part=part, measure=cells[0], figure=cells[1], target=cells[2])


def part_run(part: str) -> tuple[list[Row], int, float]:
    started = time.monotonic()
    process = subprocess.run(
        [sys.executable, str(BENCH / f"abuse_{part}.py")],
        cwd=BENCH.parent,
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.monotonic() - started
    rows = [row for line in process.stdout.splitlines() if (row := row_parse(part, line))]
    if process.returncode != 0:
        tail = " / ".join(process.stderr.strip().splitlines()[-3:])
        rows.append(Row(part, "part failed", f"exit {process.returncode}", tail[:200]))
    return rows, process.returncode, elapsed


def table(rows: list[Row]) -> str:
    lines = ["| part | measure | figure | target |", "|---|---|---|---|"]
    lines += [f"| {r.part} | {r.measure} | {r.figure} | {r.target} |" for r in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated parts (default: all)")
    args = parser.parse_args()
    wanted = [p for p in args.only.split(",") if p] or parts_found()
    unknown = sorted(set(wanted) - set(parts_found()))
    if unknown:
        raise SystemExit(f"no such part: {', '.join(unknown)} (have: {', '.join(parts_found())})")
    rows: list[Row] = []
    failed = False
    for part in wanted:
        print(f"running abuse_{part}.py ...", file=sys.stderr, flush=True)
        part_rows, code, elapsed = part_run(part)
        print(f"  {len(part_rows)} rows in {elapsed:.0f} s (exit {code})", file=sys.stderr)
        rows += part_rows
        failed = failed or code != 0
    print(table(rows))
    if failed:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
