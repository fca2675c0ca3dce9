"""Verdicts of Redline's graders beside promptfoo's on the same outputs.

    .venv/bin/python bench/promptfoo_parity.py

Every assertion below is graded on every output twice: by the Redline grader its import maps
it to (evals/promptfoo.py, evals/graders.py), and by promptfoo itself in its standalone mode
(`promptfoo eval --assertions … --model-outputs …`, no provider call). Prints the agreement
and each disagreement, which should be only the differences docs/evals.md lists as on purpose
(Unicode case folding). promptfoo's standalone loader drops an output's trailing whitespace,
so the trailing-newline cases (`equals`) are in tests/evals/test_promptfoo.py instead. promptfoo
needs Node ≥ 22 and a promptfoo npx can find (or on PATH);
without one the script says why and stops.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.evals import promptfoo_command  # noqa: E402

ASSERTIONS: list[dict[str, Any]] = [
    {"type": "equals", "value": "Paris"},
    {"type": "not-equals", "value": "Paris"},
    {"type": "contains", "value": "cache"},
    {"type": "not-contains", "value": "TODO"},
    {"type": "icontains", "value": "POSTGRESQL"},
    {"type": "icontains", "value": "STRASSE"},
    {"type": "not-icontains", "value": "as an ai"},
    {"type": "starts-with", "value": "Review"},
    {"type": "not-starts-with", "value": "Sorry"},
    {"type": "contains-any", "value": ["cdn", "cache"]},
    {"type": "contains-all", "value": ["a", "cache"]},
    {"type": "icontains-any", "value": ["CACHE", "QUEUE"]},
    {"type": "icontains-all", "value": ["REVIEW", "CACHE"]},
    {"type": "regex", "value": "\\d{3} ms"},
    {"type": "not-regex", "value": "\\bTODO\\b"},
    {"type": "is-json"},
    {"type": "not-is-json"},
    {"type": "is-json", "value": {"type": "object", "required": ["a"]}},
    {"type": "contains-json"},
    {"type": "contains-json", "value": {"type": "object", "required": ["b"]}},
    {"type": "levenshtein", "value": "Paris"},
    {"type": "levenshtein", "value": "kitten", "threshold": 2},
    {"type": "not-levenshtein", "value": "kitten", "threshold": 2},
]
OUTPUTS = [
    "Paris",
    " paris",
    "Review: a cache in front of PostgreSQL",
    "Sorry, as an AI I cannot",
    "a TODO remains",
    "die Straße",
    "p99 is 250 ms",
    '{"a": 1}',
    '{"a": NaN}',
    "[1, Infinity]",
    'Here: {"a": [1, 2]} and {"b": 2} done',
    "no json {here",
    "sitting",
    "kitten",
    "ＲＥＶＩＥＷ of the CACHE",
    "",
]


def redline_verdicts() -> list[list[bool]]:
    """verdicts[i][j]: assertion j on output i, by the grader the import maps it to."""
    from bench._django import setup_django

    setup_django(Path(tempfile.mkdtemp(prefix="redline-parity-")))
    import yaml

    from evals.graders import CellOutcome, grade, grader_spec_load
    from evals.promptfoo import promptfoo_parse

    config = {"tests": [{"vars": {}, "assert": [a]} for a in ASSERTIONS]}
    rows = promptfoo_parse(
        data=yaml.safe_dump(config).encode(), filename="p.yaml", judge_version=None
    ).rows
    specs = [grader_spec_load(row.graders[0]) for row in rows]
    return [[grade(spec, CellOutcome(output=o)).passed for spec in specs] for o in OUTPUTS]


def promptfoo_verdicts(command: list[str]) -> list[list[bool]]:
    with tempfile.TemporaryDirectory(prefix="redline-parity-promptfoo-") as here:
        (Path(here) / "asserts.json").write_text(json.dumps(ASSERTIONS))
        (Path(here) / "outputs.json").write_text(json.dumps(OUTPUTS))
        env = {
            **os.environ,
            "PROMPTFOO_CONFIG_DIR": here,
            "PROMPTFOO_DISABLE_TELEMETRY": "1",
            "PROMPTFOO_DISABLE_UPDATE": "1",
        }
        subprocess.run(
            [*command, "eval", "--assertions", "asserts.json", "--model-outputs", "outputs.json"]
            + ["-o", "out.json", "--no-table", "--no-progress-bar"],
            cwd=here,
            env=env,
            capture_output=True,
            timeout=600,
        )
        results = json.loads((Path(here) / "out.json").read_text())["results"]["results"]
    # Each output is one "prompt" of promptfoo's standalone mode (whose loader drops trailing
    # whitespace, so no output here ends with any).
    by_output: dict[str, list[bool]] = {}
    for result in results:
        parts = result["gradingResult"]["componentResults"]
        by_output[result["response"]["output"]] = [bool(p["pass"]) for p in parts]
    return [by_output[o] for o in OUTPUTS]


def main() -> None:
    command, why = promptfoo_command()
    if command is None:
        print(f"promptfoo: skipped ({why})")
        return
    ours = redline_verdicts()
    theirs = promptfoo_verdicts(command)
    total = len(OUTPUTS) * len(ASSERTIONS)
    differ = [
        (ASSERTIONS[j], OUTPUTS[i], ours[i][j], theirs[i][j])
        for i in range(len(OUTPUTS))
        for j in range(len(ASSERTIONS))
        if ours[i][j] != theirs[i][j]
    ]
    print(f"{why}: {total - len(differ)}/{total} verdicts agree ({len(ASSERTIONS)} assertions ×")
    print(f"{len(OUTPUTS)} outputs)")
    for assertion, output, mine, other in differ:
        print(f"  {json.dumps(assertion)} on {output!r}: Redline {mine}, promptfoo {other}")
    print(f"verdicts={total} agree={total - len(differ)} differ={len(differ)}")


if __name__ == "__main__":
    main()
