"""Benchmark re-anchoring (reviews/anchoring) on a ~50 KB design document.

Builds a Markdown design document of ~50 KB with 200 annotations spread over it, applies a
realistic revision (new paragraphs, light rewordings, heavy rewrites, a moved paragraph, a deleted
paragraph and sentences, renamed headings; and revisions that move a whole section, alone or with
those edits elsewhere), then times `anchors_locate` over several runs and
`anchor_locate` per annotation on a shared diff. Every landing is checked against the ground
truth the generator keeps (which sentence each annotation is on), so the output also counts
mis-anchors.

Run: `.venv/bin/python bench/reanchor.py [--runs N] [--seed S]` (no Django needed);
`--check-seeds N` skips the timing and totals the verdicts over N generated revisions (the
templated prose is full of look-alikes, which makes it a hard accuracy test).
`--corpus DIR [--placement-seed S] [--verbose]` runs on the real-text corpus instead
(bench/reanchor_corpus.py builds it): p50/p95 per annotation and correct / wrong /
orphaned-although-present against its ground truth.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from reviews.anchoring import (  # noqa: E402
    Anchor,
    Selector,
    anchor_diff_compute,
    anchor_locate,
    anchors_locate,
    selector_from_position,
)
from reviews.anchoring import text as anchoring_text  # noqa: E402 - needs the project root first

COMPONENTS = [
    "router",
    "scheduler",
    "tokenizer service",
    "KV-cache manager",
    "quota service",
    "billing exporter",
    "model loader",
    "prompt cache",
    "gateway",
    "metrics agent",
    "admission controller",
    "batching engine",
    "weights store",
    "config service",
]
RESOURCES = ["GPU memory", "queue depth", "p99 latency", "CPU time", "network egress", "disk I/O"]
METRICS = [
    "queue depth",
    "KV-cache occupancy",
    "tokens per second",
    "request rate",
    "GPU utilisation",
]
STORES = ["S3", "the config database", "Redis", "the local SSD", "the object store"]
ARTIFACTS = ["snapshots", "checkpoints", "usage records", "routing tables", "audit events"]
HARDWARE = ["H100", "A100", "L40S", "H200"]
REACTIONS = [
    "retries with jittered backoff",
    "serves from its last good copy",
    "sheds new requests with HTTP 503",
    "fails closed and rejects new work",
    "falls back to the previous model version",
]
CONDITIONS = [
    "a tenant exceeds its budget",
    "a zone loses half its replicas",
    "the weights store is slow",
    "a model version is rolled back",
    "prompts exceed 32k tokens",
]
TEMPLATES = [
    "The {c} keeps {r} under {n}% so that a burst from one tenant cannot starve the others.",
    "{C} replicas scale on {m}, with a floor of {k} replicas per zone.",
    "If the {c} loses its connection to {s}, it {x} and pages the on-call after {k} minutes.",
    "We measured {n0} requests per second per {h} with batch size {k}0 and 4k-token prompts.",
    "Each {c} writes {a} to {s} every {k}0 seconds and keeps the last {k} of them.",
    "Rollback restores the previous {a} within {k} minutes by flipping the {c} flag.",
    "The {c} rejects requests larger than {n} KB with HTTP 413 before any GPU work starts.",
    "Open question: should the {c} pause admissions when {d}?",
    "During the canary, the {c} handles {k}% of traffic for {k}0 minutes before we widen it.",
    "Alerts fire when {r} stays above {n}% for five minutes on the {c}.",
    "The {c} is stateless, so a crash costs at most the requests it was holding.",
    "We chose {s} over a bespoke store because the team already runs it at this scale.",
    "Capacity planning assumes {n}0 concurrent streams per {h} at an average of 25 tokens"
    " per second.",
    "Tenants see their spend within {k} minutes because the {c} exports usage every minute.",
    "When {d}, the {c} {x} instead of queueing indefinitely.",
    "Keys for the {c} rotate every {k}0 days and old keys stay valid for one day.",
]
SECTIONS = {
    "Context": 3,
    "Goals and non-goals": 2,
    "Architecture": 0,
    "API": 2,
    "Data model": 2,
    "Capacity and cost": 3,
    "Failure modes": 3,
    "Rollout and rollback": 2,
    "Observability": 2,
    "Security": 2,
    "Migration": 2,
    "Alternatives considered": 3,
    "Open questions": 1,
}
SUBSECTIONS = ["Router", "Scheduler", "KV cache", "Model loading", "Tokenizer", "Quota service"]
WORD_SWAPS = {
    "keeps": "holds",
    "rejects": "refuses",
    "writes": "uploads",
    "restores": "brings back",
    "handles": "serves",
    "stateless": "state-free",
    "chose": "picked",
    "every": "once every",
    "before": "prior to",
    "previous": "last",
    "connection": "link",
    "measured": "observed",
}


# --------------------------------------------------------------------------- document model


@dataclass
class Sentence:
    sid: int
    text: str


@dataclass
class Block:
    kind: str  # heading | para | list | code
    text: str = ""  # heading / code text
    sentences: list[Sentence] = field(default_factory=list)


class Writer:
    """Writes templated sentences, never the same one twice (so the ground truth is sound:
    a verbatim copy of a deleted sentence would be indistinguishable from a move)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.count = 0
        self.used: set[str] = set()

    def sentence(self) -> Sentence:
        rng = self.rng
        while True:
            component = rng.choice(COMPONENTS)
            text = rng.choice(TEMPLATES).format(
                c=component,
                C=component[0].upper() + component[1:],
                r=rng.choice(RESOURCES),
                m=rng.choice(METRICS),
                s=rng.choice(STORES),
                a=rng.choice(ARTIFACTS),
                h=rng.choice(HARDWARE),
                x=rng.choice(REACTIONS),
                d=rng.choice(CONDITIONS),
                n=rng.randint(10, 95),
                n0=rng.randint(100, 4000),
                k=rng.randint(2, 9),
            )
            if text not in self.used:
                break
        self.used.add(text)
        self.count += 1
        return Sentence(self.count, text)

    def paragraph(self) -> Block:
        return Block("para", sentences=[self.sentence() for _ in range(self.rng.randint(3, 6))])


def document(writer: Writer, target: int) -> list[Block]:
    rng = writer.rng
    blocks = [Block("heading", "# Design: multi-tenant LLM inference platform")]
    blocks.append(writer.paragraph())
    size = 0
    while size < target:
        for title, paragraphs in SECTIONS.items():
            blocks.append(Block("heading", f"## {title}"))
            if title == "Architecture":
                for sub in SUBSECTIONS:
                    blocks.append(Block("heading", f"### {sub}"))
                    blocks.extend(writer.paragraph() for _ in range(2))
            else:
                blocks.extend(writer.paragraph() for _ in range(paragraphs))
            if title in ("Goals and non-goals", "Failure modes", "Migration"):
                items = [writer.sentence() for _ in range(rng.randint(3, 6))]
                blocks.append(Block("list", sentences=items))
            if title == "Observability":
                blocks.append(Block("code", "```yaml\nalerts:\n  ttft_p95_ms: 400\n```"))
        size = len(render(blocks)[0])
    return blocks


def wrap(line: str, width: int = 96) -> str:
    """Hard-wrap like an editor: replace spaces by newlines (length-preserving)."""
    chars = list(line)
    column = last_space = 0
    for i, ch in enumerate(chars):
        column += 1
        if ch == " ":
            last_space = i
        if column > width and last_space:
            chars[last_space] = "\n"
            column = i - last_space
            last_space = 0
    return "".join(chars)


def render(blocks: list[Block]) -> tuple[str, dict[int, tuple[int, int]]]:
    """Markdown text and where each sentence is in it."""
    parts: list[str] = []
    spans: dict[int, tuple[int, int]] = {}
    pos = 0
    for block in blocks:
        if block.kind in ("heading", "code"):
            chunk = block.text
        elif block.kind == "para":
            offsets, pieces, at = [], [], 0
            for s in block.sentences:
                offsets.append((s.sid, at))
                pieces.append(s.text)
                at += len(s.text) + 1
            chunk = wrap(" ".join(pieces))
            for sid, at in offsets:
                spans[sid] = (
                    pos + at,
                    pos + at + len(next(s.text for s in block.sentences if s.sid == sid)),
                )
        else:
            chunk, at = "", 0
            for s in block.sentences:
                spans[s.sid] = (pos + at + 2, pos + at + 2 + len(s.text))
                chunk += f"- {s.text}\n"
                at += len(s.text) + 3
            chunk = chunk.rstrip("\n")
        parts.append(chunk + "\n\n")
        pos += len(chunk) + 2
    return "".join(parts), spans


# --------------------------------------------------------------------------- the case


@dataclass
class Annotation:
    sid: int
    offset: int  # within the sentence
    length: int


@dataclass
class Case:
    old: str
    new: str
    selectors: list[Selector]
    annotations: list[Annotation]
    new_spans: dict[int, tuple[int, int]]
    fate: dict[int, str]  # sid -> kept | reworded | rewritten | deleted


def phrase(rng: random.Random, text: str) -> tuple[int, int]:
    """A word-aligned phrase of the sentence (or all of it)."""
    if rng.random() < 0.4:
        return 0, len(text)
    starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == " "]
    ends = [i for i, ch in enumerate(text) if ch == " "] + [len(text)]
    a = rng.randrange(len(starts))
    b = min(len(ends) - 1, a + rng.randint(2, 8))
    return starts[a], ends[b]


def build_case(
    seed: int = 7,
    target: int = 50_000,
    annotations: int = 200,
    *,
    edits: bool = True,
    section_move: bool = False,
) -> Case:
    """A document and its revision. `edits`: the realistic edits described at the top;
    `section_move`: also move one whole `##` section (heading and body, unchanged) above an
    earlier one, as an author reordering a document does."""
    rng = random.Random(seed)
    writer = Writer(rng)
    blocks = document(writer, target)
    old, old_spans = render(blocks)
    sentences = {s.sid: s for b in blocks for s in b.sentences}
    picked = sorted(rng.sample(sorted(sentences), annotations))
    notes = []
    for sid in picked:
        offset, end = phrase(rng, sentences[sid].text)
        notes.append(Annotation(sid, offset, end - offset))
    selectors = []
    for note in notes:
        start = old_spans[note.sid][0] + note.offset
        selectors.append(selector_from_position(text=old, start=start, end=start + note.length))

    fate = dict.fromkeys(sentences, "kept")
    if edits:
        paras = [i for i, b in enumerate(blocks) if b.kind == "para"]
        # light rewordings: swap one word (half of them in annotated sentences)
        annotated = list(dict.fromkeys(picked))
        for sid in rng.sample(annotated, 12) + rng.sample(sorted(sentences), 12):
            s = sentences[sid]
            words = [w for w in WORD_SWAPS if f" {w} " in s.text]
            if words and fate[sid] == "kept":
                w = rng.choice(words)
                s.text = s.text.replace(f" {w} ", f" {WORD_SWAPS[w]} ", 1)
                fate[sid] = "reworded"
        # heavy rewrites
        rewritten = set()
        for sid in rng.sample(annotated, 3):
            if fate[sid] == "kept":
                sentences[sid].text = writer.sentence().text
                fate[sid] = "rewritten"
                rewritten.add(sid)
        # a moved paragraph and a deleted one (both carrying annotations)
        with_notes = [i for i in paras if any(s.sid in set(picked) for s in blocks[i].sentences)]
        moved_at, deleted_at = rng.sample(with_notes, 2)
        moved, deleted = blocks[moved_at], blocks[deleted_at]
        touched = [moved, deleted]
        touched += [b for b in blocks if any(s.sid in rewritten for s in b.sentences)]
        for s in deleted.sentences:
            fate[s.sid] = "deleted"
        for sid in rng.sample(annotated, 3):  # and a few single sentences
            for b in blocks:
                if b.kind in ("para", "list") and len(b.sentences) > 1:
                    for s in list(b.sentences):
                        if s.sid == sid and fate[sid] == "kept":
                            b.sentences.remove(s)
                            fate[sid] = "deleted"
                            touched.append(b)
        # New paragraphs go elsewhere: one written exactly where a passage was deleted would be
        # a rewrite of it, and the truth "deleted" would be unfair.
        inserted = 0
        while inserted < 12:
            at = rng.randrange(1, len(blocks))
            if any(blocks[i] in touched for i in (at - 1, at) if i < len(blocks)):
                continue
            blocks.insert(at, writer.paragraph())
            inserted += 1
        blocks = [b for b in blocks if b is not moved and b is not deleted]
        blocks.insert(rng.randrange(len(blocks)), moved)
        for b in blocks:
            if b.text in ("## Capacity and cost", "### KV cache"):
                b.text = b.text.replace(" and ", " & ").replace("KV cache", "KV-cache management")
    if section_move:
        blocks = move_section(blocks, rng)
    new, new_spans = render(blocks)
    return Case(old, new, selectors, notes, new_spans, fate)


def move_section(blocks: list[Block], rng: random.Random) -> list[Block]:
    """Move one `##` section (with its sub-sections) above an earlier `##` heading."""
    tops = [i for i, b in enumerate(blocks) if b.kind == "heading" and b.text.startswith("## ")]
    pick = rng.randrange(2, len(tops))
    lo = tops[pick]
    hi = tops[pick + 1] if pick + 1 < len(tops) else len(blocks)
    section, rest = blocks[lo:hi], blocks[:lo] + blocks[hi:]
    at = tops[rng.randrange(1, pick)]
    return rest[:at] + section + rest[at:]


def verdict(case: Case, note: Annotation, anchor: Anchor) -> str:
    """correct / orphaned-ok / orphaned-lost / MIS-ANCHOR against the generator's truth."""
    fate = case.fate[note.sid]
    if anchor.status == "orphaned":
        return "orphaned (passage gone)" if fate in ("deleted", "rewritten") else "orphaned (lost)"
    if fate == "deleted" or anchor.start is None or anchor.end is None:
        return "MIS-ANCHOR"
    lo, hi = case.new_spans[note.sid]
    if fate == "kept":
        start = lo + note.offset
        return (
            "correct"
            if (anchor.start, anchor.end) == (start, start + note.length)
            else ("MIS-ANCHOR")
        )
    return "correct" if lo <= anchor.start < anchor.end <= hi else "MIS-ANCHOR"


VARIANTS = {
    "realistic edits": {},
    "a section moved, nothing else": {"edits": False, "section_move": True},
    "a section moved, with the edits elsewhere": {"section_move": True},
}


def check(seeds: int) -> None:
    """Accuracy over many generated documents: the verdicts summed over seeds 1..N, for each
    kind of revision."""
    for name, options in VARIANTS.items():
        print(f"{name}:")
        check_variant(seeds, **options)


def check_variant(seeds: int, **options: bool) -> None:
    totals: Counter[str] = Counter()
    for seed in range(1, seeds + 1):
        case = build_case(seed=seed, **options)
        anchors = anchors_locate(selectors=case.selectors, old_text=case.old, new_text=case.new)
        found = Counter(verdict(case, n, a) for n, a in zip(case.annotations, anchors, strict=True))
        if found["MIS-ANCHOR"]:
            print(f"seed {seed}: {found['MIS-ANCHOR']} mis-anchored")
        totals.update(found)
    print(
        f"{seeds} revisions, {sum(totals.values())} annotations: "
        + ", ".join(f"{k} {v}" for k, v in totals.most_common())
    )


def forget_caches() -> None:
    """Drop the module's per-text caches so every timed run starts cold, as a fresh worker
    process would (the folded texts and heading index are cached per text)."""
    anchoring_text.anchor_caches_clear()


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def _present(truth_kind: str) -> bool:
    return truth_kind in ("kept", "moved")


def run_corpus(directory: Path, *, seed: str, runs: int, verbose: bool) -> None:
    """Re-anchor the real-text corpus (bench/reanchor_corpus.py): time each annotation
    (anchor_locate on the pair's shared diff, caches cold at each pair's start, as a worker
    re-anchoring a new revision would be) and judge every landing against the ground truth.

    Wall time (perf_counter) and CPU time of this thread (thread_time) are both printed: on a
    machine shared with other work the wall time includes waiting for a core, the CPU time
    does not. One row a repository, then the totals."""
    from bench.reanchor_corpus import corpus_load
    from bench.reanchor_corpus import verdict as corpus_verdict

    pairs = corpus_load(directory, seed=seed)
    if not pairs:
        raise SystemExit(f"no pairs under {directory} (bench/reanchor_corpus.py build)")
    repos = Counter(p.entry["repo"] for p in pairs)
    count = sum(len(p.annotations) for p in pairs)
    print(
        f"corpus: {len(pairs)} revision pairs from {len(repos)} repositories "
        f"({', '.join(f'{k} {v}' for k, v in sorted(repos.items()))}), {count} annotations "
        f"(placement seed {seed}, {runs} timed runs)"
    )
    truths = Counter(t.kind for p in pairs for t in p.truths)
    print("  truth: " + ", ".join(f"{k} {v}" for k, v in truths.most_common()))
    wall: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}
    batch: list[float] = []
    verdicts: dict[str, Counter[str]] = {}
    by_kind: Counter[tuple[str, str]] = Counter()
    for run in range(runs):
        for pair in pairs:
            repo = pair.entry["repo"]
            selectors = [
                selector_from_position(text=pair.old, start=n.start, end=n.end)
                for n in pair.annotations
            ]
            forget_caches()
            began = time.perf_counter()
            anchors = anchors_locate(selectors=selectors, old_text=pair.old, new_text=pair.new)
            batch.append((time.perf_counter() - began) / max(1, len(selectors)))
            forget_caches()
            diffs = anchor_diff_compute(old_text=pair.old, new_text=pair.new)
            for selector in selectors:
                began, began_cpu = time.perf_counter(), time.thread_time()
                anchor_locate(selector=selector, old_text=pair.old, new_text=pair.new, diffs=diffs)
                cpu.setdefault(repo, []).append(time.thread_time() - began_cpu)
                wall.setdefault(repo, []).append(time.perf_counter() - began)
            if run:
                continue
            for note, truth, anchor in zip(pair.annotations, pair.truths, anchors, strict=True):
                found = corpus_verdict(truth, anchor.start, anchor.end)
                verdicts.setdefault(repo, Counter())[found] += 1
                if _present(truth.kind):
                    verdicts[repo]["present"] += 1
                    if found == "WRONG":
                        verdicts[repo]["WRONG present"] += 1
                by_kind[(note.kind, found)] += 1
                if verbose and found in ("WRONG", "orphaned although present", "overlap"):
                    quote = pair.old[note.start : note.end].replace("\n", " ")[:70]
                    landed = (
                        pair.new[anchor.start : anchor.end].replace("\n", " ")[:70]
                        if anchor.start is not None
                        else "-"
                    )
                    print(
                        f"  {found}: {pair.name} [{note.kind}, truth {truth.kind} "
                        f"{truth.start}:{truth.end}] {quote!r} -> {anchor.status} "
                        f"{anchor.start}:{anchor.end} {landed!r}"
                    )
    ms = 1000.0
    total: Counter[str] = Counter()
    for counts in verdicts.values():
        total.update(counts)
    rows: list[tuple[str, ...]] = [
        (
            "repository",
            "annotations",
            "present",
            "correct (present)",
            "WRONG",
            "orphaned although present",
            "edited att/orph",
            "excluded",
            "wall p50/p95 ms",
            "CPU p50/p95 ms",
        )
    ]

    def row(name: str, found: Counter[str], w: list[float], c: list[float]) -> tuple[str, ...]:
        present = found["present"]
        # a present passage is correct when the landing is its span (kept/moved truths)
        correct_present = present - found["orphaned although present"] - found["overlap"]
        correct_present -= found["WRONG present"]
        share = 100.0 * correct_present / present if present else 100.0
        return (
            name,
            str(sum(v for k, v in found.items() if k not in ("present", "WRONG present"))),
            str(present),
            f"{correct_present} ({share:.2f}%)",
            str(found["WRONG"]),
            str(found["orphaned although present"]),
            f"{found['edited, attached']}/{found['edited, orphaned']}",
            str(sum(v for k, v in found.items() if k.startswith("excluded"))),
            f"{_percentile(w, 0.5) * ms:.2f} / {_percentile(w, 0.95) * ms:.2f}",
            f"{_percentile(c, 0.5) * ms:.2f} / {_percentile(c, 0.95) * ms:.2f}",
        )

    for name in sorted(verdicts):
        rows.append(row(name, verdicts[name], wall[name], cpu[name]))
    all_wall = [t for times in wall.values() for t in times]
    all_cpu = [t for times in cpu.values() for t in times]
    rows.append(row("all", total, all_wall, all_cpu))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  " + "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(r)))
    print(
        f"  per annotation (anchor_locate on the pair's shared diff, {len(all_wall)} calls): "
        f"wall p50 {_percentile(all_wall, 0.5) * ms:.2f} ms, "
        f"p95 {_percentile(all_wall, 0.95) * ms:.2f} ms, max {max(all_wall) * ms:.1f} ms; "
        f"CPU p50 {_percentile(all_cpu, 0.5) * ms:.2f} ms, "
        f"p95 {_percentile(all_cpu, 0.95) * ms:.2f} ms, max {max(all_cpu) * ms:.1f} ms"
    )
    print(
        f"  anchors_locate per pair, diff included, per annotation: "
        f"p50 {_percentile(batch, 0.5) * ms:.2f} ms, p95 {_percentile(batch, 0.95) * ms:.2f} ms"
    )
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"  load average (1 min) at the end: {load:.1f}")
    kinds = sorted({kind for kind, _ in by_kind})
    for kind in kinds:
        found_row = {found: n for (k, found), n in by_kind.items() if k == kind}
        print(f"    {kind}: " + ", ".join(f"{k} {v}" for k, v in sorted(found_row.items())))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--check-seeds",
        type=int,
        default=0,
        metavar="N",
        help="instead of timing, re-anchor N generated revisions and total the verdicts",
    )
    parser.add_argument(
        "--corpus",
        type=Path,
        metavar="DIR",
        help="re-anchor the real-text corpus built by bench/reanchor_corpus.py in DIR instead",
    )
    parser.add_argument(
        "--placement-seed", default="1", help="annotation placement seed for --corpus"
    )
    parser.add_argument("--verbose", action="store_true", help="with --corpus: list misses")
    args = parser.parse_args()
    if args.corpus:
        run_corpus(args.corpus, seed=args.placement_seed, runs=args.runs, verbose=args.verbose)
        return
    if args.check_seeds:
        check(args.check_seeds)
        return

    case = build_case(seed=args.seed)
    fates = Counter(case.fate[n.sid] for n in case.annotations)
    print(
        f"document: {len(case.old):,} chars old, {len(case.new):,} chars new; "
        f"{len(case.selectors)} annotations on sentences "
        f"({', '.join(f'{k} {v}' for k, v in fates.most_common())} by the revision)"
    )

    totals, diff_times, per_annotation = [], [], []
    anchors: list[Anchor] = []
    for _ in range(args.runs):
        forget_caches()
        began = time.perf_counter()
        anchors = anchors_locate(selectors=case.selectors, old_text=case.old, new_text=case.new)
        totals.append(time.perf_counter() - began)

        forget_caches()
        began = time.perf_counter()
        diffs = anchor_diff_compute(old_text=case.old, new_text=case.new)
        diff_times.append(time.perf_counter() - began)
        for selector in case.selectors:  # one at a time on the shared diff, as a task would
            began = time.perf_counter()
            anchor_locate(selector=selector, old_text=case.old, new_text=case.new, diffs=diffs)
            per_annotation.append(time.perf_counter() - began)

    ms = 1000.0
    count = len(case.selectors)
    print(
        f"anchors_locate, {count} annotations, diff included, cold caches, {args.runs} runs: "
        f"median {statistics.median(totals) * ms:.1f} ms, max {max(totals) * ms:.1f} ms "
        f"({statistics.median(totals) / count * ms:.2f} ms per annotation)"
    )
    print(
        f"  revision diff alone: median {statistics.median(diff_times) * ms:.1f} ms, "
        f"max {max(diff_times) * ms:.1f} ms"
    )
    print(
        f"  per annotation (anchor_locate on the shared diff, {len(per_annotation)} calls): "
        f"median {statistics.median(per_annotation) * ms:.3f} ms, "
        f"max {max(per_annotation) * ms:.1f} ms"
    )
    statuses = Counter(a.status for a in anchors)
    print("  status counts: " + ", ".join(f"{k} {v}" for k, v in statuses.most_common()))
    verdicts = Counter(verdict(case, n, a) for n, a in zip(case.annotations, anchors, strict=True))
    print("  against ground truth: " + ", ".join(f"{k} {v}" for k, v in verdicts.most_common()))
    for name, options in list(VARIANTS.items())[1:]:
        moved = build_case(seed=args.seed, **options)
        found = anchors_locate(selectors=moved.selectors, old_text=moved.old, new_text=moved.new)
        verdicts = Counter(
            verdict(moved, n, a) for n, a in zip(moved.annotations, found, strict=True)
        )
        print(f"  {name}: " + ", ".join(f"{k} {v}" for k, v in verdicts.most_common()))


if __name__ == "__main__":
    main()
