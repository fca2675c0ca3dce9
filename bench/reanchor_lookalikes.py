"""Generated revision pairs full of look-alikes, for the re-anchoring corpus (issue #36).

Real design documents have some templated prose; these have little else. Each generated pair is
a KEP-like document (one section a component, every section built from the same boilerplate:
a "Drawbacks" paragraph, the production-readiness questions with the same answers, a table of
thresholds whose rows differ in one cell, and a list of bullets that differ in one word or
figure) and a revision of it that does what makes a look-alike win:

- deletes one whole section (its passages are gone; their twins in other sections stay);
- inserts a new section built from the same boilerplate where the deleted one was;
- changes one figure in several near-identical bullets and one cell in several table rows;
- inserts table rows and bullets that are near-copies of existing ones;
- reorders the bullets of one list and moves one section below another;
- rewrites one "Drawbacks" paragraph with a different component's words.

Nothing here is real text and nothing is fetched: ``pairs_generate(seed)`` is deterministic, and
the manifest (``bench/reanchor_corpus.json``, key ``generated``) says how many pairs and with
which seeds; ``bench/reanchor_corpus.py build`` writes them beside the fetched pairs. The ground
truth is the generator's own record of every line (``Generated.truth``), not a line diff: with
whole sections of look-alikes a line diff is free to pair a deleted section's lines with the
twin lines of another, and no rule over two texts alone can tell which copy went.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

REPO = "generated/look-alikes"

COMPONENTS = [
    "scheduler",
    "kubelet",
    "apiserver",
    "controller manager",
    "cloud controller",
    "kube-proxy",
    "device plugin",
    "CSI driver",
    "admission webhook",
    "metrics server",
    "node problem detector",
    "cluster autoscaler",
    "ingress controller",
    "DNS add-on",
]
METRICS = [
    "request latency",
    "queue depth",
    "error rate",
    "memory usage",
    "CPU throttling",
    "restart count",
]
DRAWBACK = (
    "This adds a new field to the {c} API, so clients that do not know it drop it on update. "
    "Operators who never set the field see no change in the {c}."
)
ENABLEMENT = [
    "###### How can this feature be enabled / disabled in a live cluster?",
    "",
    "- [x] Feature gate (also fill in values in `kep.yaml`)",
    "  - Feature gate name: {gate}",
    "  - Components depending on the feature gate: {c}, kube-apiserver",
    "",
    "###### Does enabling the feature change any default behavior?",
    "",
    "No. The {c} keeps its current behavior until the field is set.",
    "",
    "###### Can the feature be disabled once it has been enabled (i.e. can we roll back?)",
    "",
    "Yes. Disabling the gate makes the {c} ignore the field; objects that set it keep it.",
    "",
]
BULLET = "The {c} retries after {n} seconds when the API server is unavailable."
BULLET_ALT = "The {c} gives up after {n} attempts when the API server is unavailable."


Line = tuple[int, str]  # (identity, text): a line keeps its identity through the revision


class _Ids:
    def __init__(self) -> None:
        self.count = 0

    def lines(self, texts: list[str]) -> list[Line]:
        out = []
        for text in texts:
            self.count += 1
            out.append((self.count, text))
        return out


def _gate(component: str) -> str:
    return "".join(word.capitalize() for word in component.replace("-", " ").split()) + "Fields"


def _section(
    rng: random.Random, ids: _Ids, component: str, *, rows: int, bullets: int
) -> list[Line]:
    lines = [f"## The {component}", ""]
    lines += [f"Summary: the {component} learns the new field in two releases.", ""]
    lines += ["### Drawbacks", "", DRAWBACK.format(c=component), ""]
    lines += [line.format(c=component, gate=_gate(component)) for line in ENABLEMENT]
    lines += ["### Thresholds", "", "| Metric | Threshold | Component |", "| --- | --- | --- |"]
    for i in range(rows):
        metric = METRICS[i % len(METRICS)]
        lines.append(f"| {metric} | {rng.choice([50, 75, 90, 95, 99])}% | {component} |")
    lines += ["", "### Retries", ""]
    written: set[str] = set()
    while len(written) < bullets:  # near-identical, never identical: which copy is a guess
        template = BULLET if rng.random() < 0.7 else BULLET_ALT
        bullet = "- " + template.format(c=component, n=rng.randint(2, 9))
        if bullet not in written:
            written.add(bullet)
            lines.append(bullet)
    lines.append("")
    return ids.lines(lines)


def _join(sections: list[list[Line]]) -> tuple[str, list[tuple[int, int, int]]]:
    """The text, and each line's (identity, start, end)."""
    parts, spans, pos = [], [], 0
    for section in sections:
        for ident, text in section:
            parts.append(text + "\n")
            spans.append((ident, pos, pos + len(text)))
            pos += len(text) + 1
    return "".join(parts), spans


@dataclass(frozen=True)
class Generated:
    old: str
    new: str
    old_lines: list[tuple[int, int, int]]
    new_lines: list[tuple[int, int, int]]
    changed: frozenset[int]  # identities of lines the revision rewrote in place

    def truth(self, start: int, end: int) -> tuple[str, int | None, int | None]:
        """What became of ``old[start:end]`` (within one line): ``kept``/``moved`` with its new
        span, ``edited`` with its line's new span (rewritten in place), or ``gone``."""
        line = next(s for s in self.old_lines if s[1] <= start < s[2] + 1)
        ident, lo, _ = line
        where = {s[0]: s for s in self.new_lines}
        if ident not in where:
            return "gone", None, None
        _, new_lo, new_hi = where[ident]
        if ident in self.changed:
            passage = self.old[start:end]
            found = self.new.find(passage, new_lo, new_hi)
            if found != -1 and self.new.find(passage, found + 1, new_hi) == -1:
                return "kept", found, found + len(passage)
            return "edited", new_lo, new_hi
        return "kept", new_lo + start - lo, new_lo + end - lo


def pair_generate(seed: int) -> Generated:
    """Generated pair ``seed``: both texts and where every old line went."""
    rng = random.Random(f"look-alikes:{seed}")
    ids = _Ids()
    names = rng.sample(COMPONENTS, rng.randint(8, 12))
    used, spare = names[:-1], names[-1]
    head = ids.lines(
        [
            f"# KEP-{1000 + seed}: Structured fields for every component",
            "",
            "## Summary",
            "",
            "Every component below gains the same field; each section answers the same questions.",
            "",
        ]
    )
    sections = [
        _section(rng, ids, c, rows=rng.randint(6, 14), bullets=rng.randint(4, 9)) for c in used
    ]
    old, old_lines = _join([head, *sections])

    new_sections = [list(section) for section in sections]
    changed: set[int] = set()

    def change(section: list[Line], i: int, text: str) -> None:
        section[i] = (section[i][0], text)
        changed.add(section[i][0])

    # a section deleted, and a new one from the same boilerplate written where it was
    gone = rng.randrange(len(new_sections))
    new_sections[gone] = _section(
        rng, ids, spare, rows=rng.randint(6, 14), bullets=rng.randint(4, 9)
    )
    # figures changed in near-identical bullets and table cells; near-copies inserted
    for section in rng.sample(new_sections, min(4, len(new_sections))):
        bullets = [i for i, (_, line) in enumerate(section) if line.startswith("- The ")]
        for i in rng.sample(bullets, min(2, len(bullets))):
            change(section, i, section[i][1].replace(" after ", " after at most ", 1))
        rows = [i for i, (_, line) in enumerate(section) if line.startswith("| ") and "%" in line]
        for i in rng.sample(rows, min(2, len(rows))):
            cells = section[i][1].split(" | ")
            cells[1] = f"{rng.choice([60, 80, 85, 97])}%"
            change(section, i, " | ".join(cells))
        if rows:
            at = rng.choice(rows)
            section.insert(at + 1, ids.lines([section[at][1].replace("%", ".5%", 1)])[0])
        if bullets:
            at = rng.choice(bullets)
            copy = section[at][1].replace(" when ", " at first when ", 1)
            section.insert(at + 1, ids.lines([copy])[0])
    # a list reordered
    section = rng.choice(new_sections)
    bullets = [i for i, (_, line) in enumerate(section) if line.startswith("- The ")]
    reordered = [section[i] for i in bullets][::-1]
    for i, entry in zip(bullets, reordered, strict=True):
        section[i] = entry
    # a "Drawbacks" paragraph rewritten with another component's words
    section = rng.choice(new_sections)
    for i, (_, line) in enumerate(section):
        if line.startswith("This adds a new field"):
            other = rng.choice([c for c in used if c not in line])
            change(section, i, DRAWBACK.format(c=other).replace("drop it", "silently drop it"))
    # a section moved below another
    if len(new_sections) > 3:
        moved = new_sections.pop(rng.randrange(len(new_sections) - 1))
        new_sections.insert(rng.randrange(len(new_sections) + 1), moved)
    new, new_lines = _join([head, *new_sections])
    return Generated(old, new, old_lines, new_lines, frozenset(changed))
