"""A real-text corpus for re-anchoring: revision pairs of public Markdown design documents.

The documents are other people's text, so none of it is in this repository. What is here:

- ``bench/reanchor_corpus.json``, the manifest: for each revision pair, the public repository
  (owner/name on GitHub), the file's path and the old and new commit;
- this builder, which reads those blobs from local clones (``--repo PATH`` repeated, or
  ``REANCHOR_CORPUS_REPOS``: paths separated by the OS path separator; ``NAME=PATH`` pins a
  clone to a manifest name, a bare ``PATH`` is matched by the commits it holds) and writes them
  under ``var/reanchor_corpus/`` (gitignored), one directory per pair (``old.md``, ``new.md``,
  ``pair.json``);
- the annotations and their ground truth (``corpus_load``), computed from the two texts alone,
  never from the anchoring engine; ``bench/reanchor.py --corpus DIR`` runs the engine on them.

Commands::

    git clone --bare https://github.com/rust-lang/rfcs          # and the others in the manifest
    .venv/bin/python bench/reanchor_corpus.py build --repo rfcs.git --repo proposal.git ...
    .venv/bin/python bench/reanchor.py --corpus var/reanchor_corpus
    # choosing pairs anew (rewrites the manifest):
    .venv/bin/python bench/reanchor_corpus.py select --repo rust-lang/rfcs=rfcs.git ...

Choosing pairs (``select``): in each repository, the Markdown files with the most non-merge
commits; each file's history is walked oldest first and cut into revisions, a revision ending at
the first commit whose line diff from the revision's start changes at least MIN_CHANGED_LINES
lines while keeping at least MIN_KEPT of them (a review round, not a rewrite); two pairs a file
(the middle and the last such revision) and, when the file has three or more, one long-range
pair (from the revision a third into its history to the last: several review rounds at once,
which is where templated look-alikes replace rewritten passages), PAIRS_PER_REPO pairs a
repository. Only files in
design-document folders (``text/``, ``design/``, ``keps/``, ``proposals/``, ``rfcs/``) count, and
python/peps's Standards Track PEPs (``pep-NNNN.txt``/``peps/pep-NNNN.rst``, see ``_design_file``).
Generated look-alike pairs (bench/reanchor_lookalikes.py; manifest key ``generated``) are
written by ``build`` too, with the generator's own ground truth.

Annotations (``annotations_place``, seeded by the pair): on the old revision's prose only
(fenced code, HTML comments and tables skipped), a mix of whole sentences, word-aligned phrases
of 3-10 words, headings, and look-alikes: phrases of 4-8 words that occur more than once in the
document and sentences sharing most of their 4-word shingles with another sentence (templated
sections: "Drawbacks", "Alternatives", the KEP production-readiness questions). Half of each
kind start within NEAR_LINES lines of a line the revision changes (reviewers comment on what then
gets revised; placed away from changes, nearly every passage is trivially kept).

Ground truth (``truth_compute``), from a line diff of the two revisions (difflib, lines
compared with whitespace folded: re-indenting or re-wrapping is no change) and exact search of
the passage with whitespace folded. An occurrence in the new text on a line the diff keeps from
a line holding another old copy of the passage is that copy, never the annotated passage.

1. ``kept``: every line of the passage is an equal line of the diff, mapped to consecutive new
   lines: the same occurrence there. If the passage occurs more than once in either text, the
   equal block holding it must also hold at least CREDIBLE_LINES lines beyond it, else
   ``ambiguous`` (a lone repeated line the diff matched may be a coincidence).
2. Otherwise the region is the new lines of the diff operations touching the passage's lines.
   The passage occurring exactly once in the region (other copies aside): ``kept`` there.
3. Not in the region, exactly once in each text: ``moved`` there. For a passage of fewer than
   SHORT_WORDS words, 2 and 3 become: the one occurrence on new lines holding at least
   EDITED_CONTAINMENT of the words of the passage's old lines is it (``kept`` in the region,
   ``moved`` elsewhere, unless the region is itself recognisably its lines, edited: then
   ``ambiguous``); several such, or an unrecognisable one in the region: ``ambiguous``; any
   others are the phrase reused in other sentences, and 4 applies.
4. Nowhere in the new text but as other copies: ``edited`` if at least EDITED_CONTAINMENT of its
   words (its words of 4+ letters, when it has two: function words say nothing) are in the
   stretch of changed lines holding the region (up to the nearest unchanged non-blank lines
   around it): the passage was reworded in place, and a landing must overlap that stretch
   (orphaning it is also right). But if a paragraph away from that stretch holds
   MOVED_EDITED_CONTAINMENT of them (either way): ``uncertain`` (moved and edited, or a line
   diff that paired the wrong lines; excluded). Else ``gone``: the truth is orphaned.
5. Anything else (several copies, none or several in the region): ``ambiguous``, excluded from
   the counts but reported. So is a passage that occurs more often in the old text than in the
   new one when its paragraph, with the one before or after it, occurs twice in the old text: a
   duplicated block lost a copy, and which copy went is a choice of the diff, not a fact.

Verdicts (``verdict``): a truth span (``kept``/``moved``) is ``correct`` if the landing is the
span, ``overlap`` if it overlaps it (boundary off: not wrong), ``orphaned although present`` if
orphaned, ``WRONG`` if it lands anywhere else; ``gone`` is ``correct`` if orphaned, else
``WRONG``; ``edited`` is ``edited, attached`` or ``edited, orphaned`` (both acceptable) or
``WRONG`` if it lands outside the region.
"""

from __future__ import annotations

import argparse
import bisect
import difflib
import hashlib
import json
import os
import random
import re
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import reanchor_lookalikes as lookalikes  # noqa: E402 - run as a script, too

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = ROOT / "bench" / "reanchor_corpus.json"
DEFAULT_DIR = ROOT / "var" / "reanchor_corpus"
REPOS_ENV = "REANCHOR_CORPUS_REPOS"

# Choosing revision pairs
MIN_BYTES, MAX_BYTES = 6_000, 200_000
MIN_CHANGED_LINES = 20
MIN_KEPT = 0.5  # share of the old lines the new revision keeps
PAIRS_PER_FILE = 2
LONG_MIN_KEPT = 0.3  # a long-range pair (several review rounds at once) keeps this share...
LONG_MIN_CHANGED_LINES = 60  # ...and changes at least this many lines
PAIRS_PER_REPO = 18
MIN_COMMITS = 4
# Design documents live in such folders (rust-lang/rfcs text/, golang/proposal design/,
# kubernetes/enhancements keps/); release notes and READMEs elsewhere are not design prose.
_DESIGN_PATH = re.compile(r"^(?:text|design|keps|proposals?|rfcs?)/.+\.md$")
# python/peps: one reStructuredText file a PEP (``pep-NNNN.txt`` at the root until 2023, then
# ``peps/pep-NNNN.rst``; each path's history is taken as it is, renames not followed), and
# only Standards Track PEPs (by the header of the file's newest revision): informational and
# process PEPs are release schedules, indexes and module lists, not design prose.
_PEP_PATH = re.compile(r"^(?:peps/)?pep-\d{4}\.(?:rst|txt)$")
_PEP_TYPE = re.compile(r"^Type:\s*Standards Track\s*$", re.MULTILINE)


def _design_file(repo: str, path: str) -> bool:
    if _DESIGN_PATH.match(path):
        return "template" not in path.lower()
    if not _PEP_PATH.match(path):
        return False
    last = _git(repo, "log", "-1", "--format=%H", "HEAD", "--", path).strip()
    text = _blob(repo, f"{last}^", path) if last else None  # the last commit may delete it
    text = text if text is not None else (_blob(repo, last, path) if last else None)
    return text is not None and bool(_PEP_TYPE.search(text[:2000]))


# Annotations
ANNOTATIONS_PER_PAIR = 25
NEAR_SHARE = 0.5  # reviewers comment on what then gets revised: half of them near a change
NEAR_LINES = 2
MIX = {"sentence": 7, "phrase": 7, "heading": 2, "repeated phrase": 5, "look-alike sentence": 4}
TABLE_CELLS = 4  # generated look-alike pairs (bench/reanchor_lookalikes.py) also annotate cells

# Ground truth
CREDIBLE_LINES = 3
SHORT_WORDS = 6
EDITED_CONTAINMENT = 0.5
MOVED_EDITED_CONTAINMENT = 0.7


# --------------------------------------------------------------------------- git


def _git(repo: str, *args: str) -> str:
    out = subprocess.run(
        ["git", "--git-dir", repo, *args], check=True, capture_output=True, text=False
    ).stdout
    return out.decode("utf-8", "replace")


def _blob(repo: str, commit: str, path: str) -> str | None:
    try:
        return _git(repo, "show", f"{commit}:{path}")
    except subprocess.CalledProcessError:
        return None


def _has_commit(repo: str, commit: str) -> bool:
    probe = subprocess.run(
        ["git", "--git-dir", repo, "cat-file", "-e", f"{commit}^{{commit}}"],
        capture_output=True,
        check=False,
    )
    return probe.returncode == 0


def _git_dir(path: str) -> str:
    """A clone's git directory: ``path`` itself if bare, else ``path/.git``."""
    dotgit = Path(path) / ".git"
    return str(dotgit) if dotgit.exists() else path


def _repos_arg(values: list[str]) -> list[tuple[str | None, str]]:
    values = list(values)
    if not values and os.environ.get(REPOS_ENV):
        values = [v for v in os.environ[REPOS_ENV].split(os.pathsep) if v]
    repos: list[tuple[str | None, str]] = []
    for value in values:
        name, _, path = value.rpartition("=")
        repos.append((name or None, _git_dir(path)))
    return repos


# --------------------------------------------------------------------------- choosing pairs


def _line_stats(old: str, new: str) -> tuple[int, float]:
    """Lines changed (deleted + inserted) and the share of old lines kept."""
    a, b = old.splitlines(), new.splitlines()
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    kept = sum(block.size for block in matcher.get_matching_blocks())
    return (len(a) - kept) + (len(b) - kept), kept / max(1, len(a))


def _file_pairs(repo: str, path: str) -> tuple[list[tuple[str, str]], tuple[str, str] | None]:
    """The file's revisions as consecutive pairs, and one long-range pair (from the revision a
    third into its history to the last) if the last still keeps LONG_MIN_KEPT of its lines."""
    history = _git(repo, "log", "--no-merges", "--reverse", "--format=%H", "--", path).split()
    pairs: list[tuple[str, str]] = []
    texts: dict[str, str] = {}
    start: tuple[str, str] | None = None
    for commit in history:
        text = _blob(repo, commit, path)
        if text is None or not MIN_BYTES <= len(text.encode()) <= MAX_BYTES:
            start = None
            continue
        if start is None:
            start = (commit, text)
            continue
        changed, kept = _line_stats(start[1], text)
        if changed >= MIN_CHANGED_LINES:
            if kept >= MIN_KEPT:
                pairs.append((start[0], commit))
                texts[start[0]], texts[commit] = start[1], text
            start = (commit, text)
    long_range = None
    if len(pairs) >= 3:
        first, last = pairs[len(pairs) // 3][0], pairs[-1][1]
        changed, kept = _line_stats(texts[first], texts[last])
        if kept >= LONG_MIN_KEPT and changed >= LONG_MIN_CHANGED_LINES:
            long_range = (first, last)
    return pairs, long_range


def pairs_select(repos: list[tuple[str | None, str]]) -> list[dict[str, str]]:
    chosen: list[dict[str, str]] = []
    for name, repo in repos:
        if name is None:
            raise SystemExit(f"select needs NAME=PATH (owner/name on GitHub) for {repo}")
        counts: Counter[str] = Counter()
        log = _git(repo, "log", "--no-merges", "--format=", "--name-only", "HEAD")
        for line in log.splitlines():
            if _DESIGN_PATH.match(line) or _PEP_PATH.match(line):
                counts[line] += 1
        files = sorted(
            (p for p, n in counts.items() if n >= MIN_COMMITS), key=lambda p: (-counts[p], p)
        )
        files = [p for p in files if _design_file(repo, p)]
        taken = 0
        for path in files:
            if taken >= PAIRS_PER_REPO:
                break
            pairs, long_range = _file_pairs(repo, path)
            if not pairs:
                continue
            picks = [pairs[i] for i in sorted({len(pairs) // 2, len(pairs) - 1})]
            picks = picks[:PAIRS_PER_FILE] + ([long_range] if long_range else [])
            for old, new in picks[: PAIRS_PER_REPO - taken]:
                chosen.append({"repo": name, "path": path, "old": old, "new": new})
                taken += 1
            print(f"{name}: {path}: {len(pairs)} revisions, took {len(picks)}", file=sys.stderr)
    return chosen


# --------------------------------------------------------------------------- building


def _pair_id(entry: dict[str, str]) -> str:
    key = f"{entry['repo']}:{entry['path']}:{entry['old']}:{entry['new']}"
    slug = re.sub(r"[^A-Za-z0-9]+", "-", f"{entry['repo']}-{Path(entry['path']).stem}")[:60]
    return f"{slug}-{hashlib.sha1(key.encode()).hexdigest()[:8]}"


def corpus_build(repos: list[tuple[str | None, str]], out: Path, manifest: Path) -> int:
    data = json.loads(manifest.read_text())
    entries = data["pairs"]
    out.mkdir(parents=True, exist_ok=True)
    written = generated_build(out, data.get("generated", {}).get("seeds", []))
    for entry in entries:
        candidates = [repo for name, repo in repos if name in (None, entry["repo"])]
        repo = next((r for r in candidates if _has_commit(r, entry["new"])), None)
        if repo is None:
            print(f"skipped (no clone holds it): {entry['repo']} {entry['new']}", file=sys.stderr)
            continue
        old = _blob(repo, entry["old"], entry["path"])
        new = _blob(repo, entry["new"], entry["path"])
        if old is None or new is None:
            print(f"skipped (path missing): {entry}", file=sys.stderr)
            continue
        target = out / _pair_id(entry)
        target.mkdir(exist_ok=True)
        (target / "old.md").write_text(old, encoding="utf-8")
        (target / "new.md").write_text(new, encoding="utf-8")
        (target / "pair.json").write_text(json.dumps(entry, indent=1))
        written += 1
    return written


def generated_build(out: Path, seeds: list[int]) -> int:
    """Write the generated look-alike pairs (bench/reanchor_lookalikes.py) of ``seeds``."""
    for seed in seeds:
        generated = lookalikes.pair_generate(seed)
        old, new = generated.old, generated.new
        entry = {"repo": lookalikes.REPO, "path": f"kep-{seed}.md", "seed": str(seed)}
        target = out / f"generated-look-alikes-{seed:03d}"
        target.mkdir(exist_ok=True)
        (target / "old.md").write_text(old, encoding="utf-8")
        (target / "new.md").write_text(new, encoding="utf-8")
        (target / "pair.json").write_text(json.dumps(entry, indent=1))
    return len(seeds)


# --------------------------------------------------------------------------- folding


class _Fold:
    """Whitespace runs folded to one space, with the raw offset of every folded character."""

    def __init__(self, raw: str) -> None:
        parts: list[str] = []
        self.starts: list[int] = []
        self.ends: list[int] = []
        pos = 0
        for match in re.finditer(r"\s+", raw):
            for i in range(pos, match.start()):
                self.starts.append(i)
                self.ends.append(i + 1)
            parts.append(raw[pos : match.start()])
            parts.append(" ")
            self.starts.append(match.start())
            self.ends.append(match.end())
            pos = match.end()
        for i in range(pos, len(raw)):
            self.starts.append(i)
            self.ends.append(i + 1)
        parts.append(raw[pos:])
        self.text = "".join(parts)
        self.raw_len = len(raw)

    def raw(self, start: int, end: int) -> tuple[int, int]:
        return self.starts[start], self.ends[end - 1]

    def folded_at(self, raw: int) -> int:
        """Folded index of the first folded character at or after raw offset ``raw``."""
        return bisect.bisect_left(self.ends, raw + 1)


def _occurrences(haystack: str, needle: str) -> list[int]:
    found, pos = [], haystack.find(needle)
    while pos != -1:
        found.append(pos)
        pos = haystack.find(needle, pos + 1)
    return found


# --------------------------------------------------------------------------- annotations


@dataclass(frozen=True)
class Annotation:
    kind: str
    start: int  # raw offsets into the old text
    end: int


_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_LIST = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_SENT_END = re.compile(r"(?<=[.!?])[\"')\]*_]*\s+(?=[A-Z0-9`\"*_\[(])")
_WORD = re.compile(r"\S+")


_RST_RULE = re.compile(r"^([=\-~^\"'`#*+:.])\1{3,}\s*$")  # a section title's under/overline
_RST_TABLE_RULE = re.compile(r"^\s*=+(?:\s+=+)+\s*$")  # a simple table's rule


def _prose(text: str, *, rst: bool = False) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Sentences (raw spans, markers stripped) and heading titles of the prose.

    ``rst``: reStructuredText (PEPs): a line underlined by a rule is a heading; simple and grid
    tables, directives and comments (``..``), literal blocks (after ``::``) and the RFC 822
    header are skipped."""
    sentences: list[tuple[int, int]] = []
    headings: list[tuple[int, int]] = []
    block: list[tuple[int, int]] = []  # (line start, line end) of the current paragraph/item

    def flush() -> None:
        if block:
            lo, hi = block[0][0], block[-1][1]
            body = text[lo:hi]
            marker = _LIST.match(body)
            lo += marker.end() if marker else 0
            cuts = [lo] + [lo + m.end() for m in _SENT_END.finditer(text[lo:hi])] + [hi]
            for a, b in zip(cuts, cuts[1:], strict=False):
                seg = text[a:b]
                a += len(seg) - len(seg.lstrip())
                b -= len(seg) - len(seg.rstrip())
                if b - a >= 20 and len(text[a:b].split()) >= 4:
                    sentences.append((a, b))
        block.clear()

    fence = comment = False
    literal: int | None = None  # rst: the indent a literal block or directive body is under
    header, table, after_rule = rst, False, False
    pos = 0
    for line in text.splitlines(keepends=True):
        lo, pos = pos, pos + len(line)
        body = line.rstrip("\r\n")
        hi = lo + len(body)
        if rst:
            indent = len(body) - len(body.lstrip())
            if header:  # the PEP's "Key: value" header, up to the first blank line
                header = bool(body.strip())
                continue
            if literal is not None:
                if not body.strip() or indent > literal:
                    continue
                literal = None
            if _RST_TABLE_RULE.match(body):
                flush()
                table = after_rule = True
                continue
            if table:  # up to the blank line after a rule
                table = bool(body.strip()) or not after_rule
                after_rule = False
                continue
            if _RST_RULE.match(body):
                if len(block) == 1:  # the title above its underline
                    a, b = block.pop()
                    title = text[a:b].strip()
                    if len(title) >= 4:
                        start = a + text[a:b].index(title)
                        headings.append((start, start + len(title)))
                flush()
                continue
            if body.lstrip().startswith(("..", "+")):
                flush()
                literal = indent
                continue
            if body.rstrip().endswith("::"):
                literal = indent
                block.append((lo, hi))
                flush()
                continue
        if _FENCE.match(body):
            flush()
            fence = not fence
            continue
        if fence:
            continue
        if comment or body.lstrip().startswith("<!--"):
            flush()
            comment = "-->" not in body
            continue
        if not body.strip() or body.lstrip().startswith(("|", "<", "[")):
            flush()
            continue
        heading = _HEADING.match(body)
        if heading:
            flush()
            title = heading.group(2)
            if len(title) >= 4:
                start = lo + body.index(title)
                headings.append((start, start + len(title)))
            continue
        if _LIST.match(body):
            flush()
        block.append((lo, hi))
    flush()
    return sentences, headings


def _phrase(
    rng: random.Random, text: str, span: tuple[int, int], lo: int, hi: int
) -> tuple[int, int]:
    words = [
        (span[0] + m.start(), span[0] + m.end()) for m in _WORD.finditer(text[span[0] : span[1]])
    ]
    size = min(len(words), rng.randint(lo, hi))
    first = rng.randrange(len(words) - size + 1)
    return words[first][0], words[first + size - 1][1]


def _repeated_phrases(text: str, sentences: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Word-aligned phrases of 4-8 words found more than once in the document (folded)."""
    fold = _Fold(text)
    found: list[tuple[int, int]] = []
    seen: set[str] = set()
    for lo, hi in sentences:
        words = [(lo + m.start(), lo + m.end()) for m in _WORD.finditer(text[lo:hi])]
        for size in (8, 6, 4):
            for i in range(0, len(words) - size + 1, 2):
                a, b = words[i][0], words[i + size - 1][1]
                phrase = re.sub(r"\s+", " ", text[a:b])
                if phrase in seen or len(phrase) < 16:
                    continue
                if len(_occurrences(fold.text, phrase)) >= 2:
                    seen.add(phrase)
                    found.append((a, b))
    return found


def _look_alike_sentences(text: str, sentences: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sentences sharing at least half of their 4-word shingles with one other sentence."""
    shingles: list[set[str]] = []
    owners: dict[str, set[int]] = {}
    for n, (lo, hi) in enumerate(sentences):
        words = text[lo:hi].lower().split()
        grams = {" ".join(words[i : i + 4]) for i in range(len(words) - 3)}
        shingles.append(grams)
        for gram in grams:
            owners.setdefault(gram, set()).add(n)
    found = []
    for n, grams in enumerate(shingles):
        if not grams:
            continue
        shared: Counter[int] = Counter()
        for gram in grams:
            for other in owners[gram] - {n}:
                shared[other] += 1
        if shared and shared.most_common(1)[0][1] * 2 >= len(grams):
            found.append(sentences[n])
    return found


def _table_cells(text: str) -> list[tuple[int, int]]:
    """Cells of Markdown table rows (not the ``---`` rule), at least 3 characters, stripped."""
    cells = []
    pos = 0
    for line in text.splitlines(keepends=True):
        lo, pos = pos, pos + len(line)
        if not line.lstrip().startswith("|") or "---" in line:
            continue
        for match in re.finditer(r"[^|\n]+", line):
            cell = match.group()
            if len(cell.strip()) >= 3:
                a = lo + match.start() + len(cell) - len(cell.lstrip())
                b = lo + match.end() - (len(cell) - len(cell.rstrip()))
                cells.append((a, b))
    return cells


def annotations_place(
    text: str,
    seed: str,
    count: int = ANNOTATIONS_PER_PAIR,
    near: set[int] | None = None,
    *,
    rst: bool = False,
    tables: bool = False,
) -> list[Annotation]:
    """``count`` annotations on ``text``; NEAR_SHARE of each kind on spans starting on a line
    in ``near`` (the lines the revision changes, and their neighbours), when there are any."""
    rng = random.Random(seed)
    line_starts = _offsets(text.splitlines(keepends=True))
    sentences, headings = _prose(text, rst=rst)
    if not sentences:
        return []
    pools = {
        "sentence": sentences,
        "phrase": sentences,
        "heading": headings,
        "repeated phrase": _repeated_phrases(text, sentences),
        "look-alike sentence": _look_alike_sentences(text, sentences),
        "table cell": _table_cells(text) if tables else [],
    }
    mix = MIX | ({"table cell": TABLE_CELLS} if tables else {})
    wanted = {kind: n * count // sum(mix.values()) for kind, n in mix.items()}
    wanted["sentence"] += count - sum(wanted.values())
    placed: list[Annotation] = []
    taken: set[tuple[int, int]] = set()
    for kind, n in wanted.items():
        pool = pools[kind]
        close = [sp for sp in pool if bisect.bisect_right(line_starts, sp[0]) - 1 in (near or ())]
        n_close = min(len(close), round(n * NEAR_SHARE))
        picks = rng.sample(close, n_close)
        rest = [sp for sp in pool if sp not in set(picks)]
        picks += rng.sample(rest, min(n - n_close, len(rest)))
        while len(picks) < n:  # too few look-alikes or headings: plain sentences instead
            picks.append(rng.choice(sentences))
        for span in picks:
            if kind == "phrase":
                span = _phrase(rng, text, span, 3, 10)
            if span in taken or span[1] <= span[0]:
                continue
            taken.add(span)
            placed.append(Annotation(kind, *span))
    return placed


# --------------------------------------------------------------------------- ground truth


@dataclass(frozen=True)
class Truth:
    kind: str  # kept | moved | edited | gone | uncertain | ambiguous
    start: int | None = None  # raw offsets into the new text (the region, for edited)
    end: int | None = None


class _LineDiff:
    """A line diff of two revisions (difflib), lines compared with whitespace folded and
    stripped, so that re-indenting or re-wrapping a line is no change."""

    def __init__(self, old: str, new: str) -> None:
        self.old_lines = old.splitlines(keepends=True)
        self.new_lines = new.splitlines(keepends=True)
        self.old_offsets = _offsets(self.old_lines)
        self.new_offsets = _offsets(self.new_lines)
        keys_old = [re.sub(r"\s+", " ", line).strip() for line in self.old_lines]
        keys_new = [re.sub(r"\s+", " ", line).strip() for line in self.new_lines]
        matcher = difflib.SequenceMatcher(None, keys_old, keys_new, autojunk=False)
        self.opcodes = matcher.get_opcodes()
        self.op_starts = [op[1] for op in self.opcodes]
        self.op_new_starts = [op[3] for op in self.opcodes]

    def changed_stretch(self, first: int, last: int) -> tuple[int, int]:
        """The new text of operations ``first..last`` widened to the nearest unchanged
        non-blank lines on each side (blank lines do not end a stretch of edits)."""

        def blank(i: int) -> bool:
            tag, i1, i2, _, _ = self.opcodes[i]
            return tag == "equal" and not "".join(self.old_lines[i1:i2]).strip()

        while first > 0 and (self.opcodes[first - 1][0] != "equal" or blank(first - 1)):
            first -= 1
        while last + 1 < len(self.opcodes) and (
            self.opcodes[last + 1][0] != "equal" or blank(last + 1)
        ):
            last += 1
        lo, hi = self.opcodes[first][3], self.opcodes[last][4]
        return self.new_offsets[lo], self.new_offsets[hi]

    def new_line(self, pos: int) -> int:
        return bisect.bisect_right(self.new_offsets, pos) - 1

    def old_of_new(self, line: int) -> int | None:
        """The old line an equal new line stands for (None if the line is new or changed)."""
        i = bisect.bisect_right(self.op_new_starts, line) - 1
        while i >= 0:
            tag, i1, _, j1, j2 = self.opcodes[i]
            if j1 <= line < j2:
                return i1 + line - j1 if tag == "equal" else None
            i -= 1
        return None

    def near_changes(self) -> set[int]:
        """Old lines within NEAR_LINES of a line the revision deletes or replaces, or of a
        place where it inserts lines."""
        near: set[int] = set()
        for tag, i1, i2, _, _ in self.opcodes:
            if tag != "equal":
                near.update(range(max(0, i1 - NEAR_LINES), i2 + NEAR_LINES))
        return near

    def old_line(self, pos: int) -> int:
        return bisect.bisect_right(self.old_offsets, pos) - 1

    def op_of(self, line: int) -> int:
        i = bisect.bisect_right(self.op_starts, line) - 1
        while self.opcodes[i][1] == self.opcodes[i][2] and i + 1 < len(self.opcodes):
            i += 1  # skip pure insertions starting at this line
        return i


def _offsets(lines: list[str]) -> list[int]:
    out, pos = [], 0
    for line in lines:
        out.append(pos)
        pos += len(line)
    out.append(pos)
    return out


def _words(text: str) -> list[str]:
    words = re.findall(r"\w+", text.lower())
    long = [w for w in words if len(w) >= 4]
    return long if len(long) >= 2 else words


def _containment(passage: str, region: str) -> float:
    want = Counter(_words(passage))
    if not want:
        return 0.0
    have = Counter(re.findall(r"\w+", region.lower()))
    return sum(min(n, have[w]) for w, n in want.items()) / sum(want.values())


def truth_compute(old: str, new: str, diff: _LineDiff, start: int, end: int) -> Truth:
    passage = old[start:end]
    first, last = diff.old_line(start), diff.old_line(end - 1)
    folded_passage = re.sub(r"\s+", " ", passage)
    size = len(folded_passage)
    old_fold, new_fold = _fold_cached(old), _fold_cached(new)
    in_old = _occurrences(old_fold.text, folded_passage)
    in_new = _occurrences(new_fold.text, folded_passage)
    own = old_fold.folded_at(start)
    if 1 < len(in_old) and len(in_new) < len(in_old) and _in_duplicated_block(old, start, end):
        return Truth("ambiguous")  # a repeated block lost a copy: which one is a diff's choice
    # Occurrences in the new text that are another old copy, kept on an unchanged line.
    other_lines = {diff.old_line(old_fold.starts[p]) for p in in_old if p != own}
    others = {
        p for p in in_new if diff.old_of_new(diff.new_line(new_fold.starts[p])) in other_lines
    }
    # 1. every line an equal line, mapped to consecutive lines: the same occurrence there
    ops = [diff.opcodes[diff.op_of(line)] for line in range(first, last + 1)]
    if all(op[0] == "equal" for op in ops):
        lines = range(first, last + 1)
        mapped = [op[3] + line - op[1] for op, line in zip(ops, lines, strict=True)]
        if mapped == list(range(mapped[0], mapped[0] + len(mapped))):
            op = ops[0]
            credible = len(in_old) == 1 and len(in_new) == 1
            if not credible:
                credible = (first - op[1]) + (op[2] - 1 - last) >= CREDIBLE_LINES
            old_span = (
                old_fold.folded_at(diff.old_offsets[first]),
                old_fold.folded_at(diff.old_offsets[last + 1]),
            )
            new_span = (
                new_fold.folded_at(diff.new_offsets[mapped[0]]),
                new_fold.folded_at(diff.new_offsets[mapped[-1] + 1]),
            )
            here_old = [p for p in in_old if old_span[0] <= p and p + size <= old_span[1] + 1]
            here_new = [p for p in in_new if new_span[0] <= p and p + size <= new_span[1] + 1]
            if not credible or len(here_old) != len(here_new) or own not in here_old:
                return Truth("ambiguous")
            at = here_new[here_old.index(own)]
            return Truth("kept", *new_fold.raw(at, at + size))
    # 2. once in the region the diff gives the passage's lines (other copies left out)
    touched = {diff.op_of(line) for line in range(first, last + 1)}
    new_lo = min(diff.opcodes[i][3] for i in touched)
    new_hi = max(diff.opcodes[i][4] for i in touched)
    region = (diff.new_offsets[new_lo], diff.new_offsets[new_hi])
    folded_region = (new_fold.folded_at(region[0]), new_fold.folded_at(region[1]))
    candidates = [p for p in in_new if p not in others]
    inside = [p for p in candidates if folded_region[0] <= p and p + size <= folded_region[1] + 1]
    if len(passage.split()) < SHORT_WORDS:
        # A short phrase recurs in unrelated sentences: only an occurrence on lines that are
        # recognisably the passage's lines is it.
        old_lines = old[diff.old_offsets[first] : diff.old_offsets[last + 1]]

        def recognisable(p: int) -> bool:
            lo, hi = new_fold.raw(p, p + size)
            a, b = diff.new_line(lo), diff.new_line(hi - 1)
            text = new[diff.new_offsets[a] : diff.new_offsets[b + 1]]
            return _containment(old_lines, text) >= EDITED_CONTAINMENT

        good = [p for p in candidates if recognisable(p)]
        if len(good) == 1:
            kind = "kept" if good[0] in inside else "moved"
            if kind == "moved" and (
                _containment(old_lines, new[region[0] : region[1]]) >= EDITED_CONTAINMENT
            ):
                return Truth("ambiguous")  # its lines were edited in place, it recurs elsewhere
            return Truth(kind, *new_fold.raw(good[0], good[0] + size))
        if good or inside:
            return Truth("ambiguous")
        candidates = []
    elif len(inside) == 1:
        return Truth("kept", *new_fold.raw(inside[0], inside[0] + size))
    elif not inside and len(in_new) == 1 and len(in_old) == 1:
        return Truth("moved", *new_fold.raw(in_new[0], in_new[0] + size))
    if not candidates:
        stretch = diff.changed_stretch(min(touched), max(touched))
        # A paragraph away from the stretch holding most of its words may be the passage,
        # moved and edited: then which of the two it became is not a line diff's to say.
        elsewhere = any(
            _containment(passage, new[lo:hi]) >= MOVED_EDITED_CONTAINMENT
            for lo, hi in _paragraphs(new)
            if hi <= stretch[0] or stretch[1] <= lo
        )
        if _containment(passage, new[stretch[0] : stretch[1]]) >= EDITED_CONTAINMENT:
            return Truth("uncertain" if elsewhere else "edited", *stretch)
        if elsewhere:
            return Truth("uncertain")
        return Truth("gone")
    return Truth("ambiguous")


def _paragraphs(text: str) -> list[tuple[int, int]]:
    bounds = [0]
    for match in re.finditer(r"\n\s*\n", text):
        bounds += [match.start(), match.end()]
    bounds.append(len(text))
    return list(zip(bounds[::2], bounds[1::2], strict=True))


def _in_duplicated_block(text: str, start: int, end: int) -> bool:
    """Whether the paragraph holding ``text[start:end]``, together with the paragraph before
    or after it, occurs more than once in ``text`` (whitespace folded): a copied block."""
    bounds = [0]
    for match in re.finditer(r"\n[ \t]*\n", text):
        bounds.append(match.end())
    bounds.append(len(text))
    i = bisect.bisect_right(bounds, start) - 1
    folded = _fold_cached(text).text
    for lo, hi in ((i - 1, i + 1), (i, i + 2)):
        if lo < 0 or hi >= len(bounds):
            continue
        block = re.sub(r"\s+", " ", text[bounds[lo] : bounds[hi]]).strip()
        if len(_occurrences(folded, block)) > 1:
            return True
    return False


_FOLDS: dict[str, _Fold] = {}


def _fold_cached(text: str) -> _Fold:
    key = hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()
    if key not in _FOLDS:
        if len(_FOLDS) > 8:
            _FOLDS.clear()
        _FOLDS[key] = _Fold(text)
    return _FOLDS[key]


def verdict(truth: Truth, start: int | None, end: int | None) -> str:
    attached = start is not None and end is not None
    if truth.kind in ("ambiguous", "uncertain"):
        return f"excluded ({truth.kind})"
    if truth.kind == "gone":
        return "WRONG" if attached else "correct"
    assert truth.start is not None and truth.end is not None
    if not attached:
        return "edited, orphaned" if truth.kind == "edited" else "orphaned although present"
    assert start is not None and end is not None
    overlaps = start < truth.end and truth.start < end
    if truth.kind == "edited":
        return "edited, attached" if overlaps else "WRONG"
    if (start, end) == (truth.start, truth.end):
        return "correct"
    return "overlap" if overlaps else "WRONG"


# --------------------------------------------------------------------------- loading


@dataclass
class Pair:
    name: str
    entry: dict[str, str]
    old: str
    new: str
    annotations: list[Annotation]
    truths: list[Truth]


def corpus_load(
    directory: Path, *, seed: str = "1", count: int = ANNOTATIONS_PER_PAIR
) -> list[Pair]:
    pairs = []
    for folder in sorted(p for p in directory.iterdir() if (p / "pair.json").exists()):
        old = (folder / "old.md").read_text(encoding="utf-8")
        new = (folder / "new.md").read_text(encoding="utf-8")
        diff = _LineDiff(old, new)
        entry = json.loads((folder / "pair.json").read_text())
        rst = entry["path"].endswith((".rst", ".txt"))
        notes = annotations_place(
            old,
            f"{seed}:{folder.name}",
            count,
            diff.near_changes(),
            rst=rst,
            tables=entry["repo"] == lookalikes.REPO,
        )
        if entry["repo"] == lookalikes.REPO:  # the generator knows where every line went
            generated = lookalikes.pair_generate(int(entry["seed"]))
            truths = [Truth(*generated.truth(n.start, n.end)) for n in notes]
        else:
            truths = [truth_compute(old, new, diff, n.start, n.end) for n in notes]
        pairs.append(Pair(folder.name, entry, old, new, notes, truths))
    return pairs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["build", "select", "show"])
    parser.add_argument("--repo", action="append", default=[], metavar="[NAME=]PATH")
    parser.add_argument("--manifest", type=Path, default=MANIFEST)
    parser.add_argument("--out", type=Path, default=DEFAULT_DIR)
    args = parser.parse_args()
    if args.command == "show":
        pairs = corpus_load(args.out)
        kinds = Counter(t.kind for p in pairs for t in p.truths)
        notes = Counter(n.kind for p in pairs for n in p.annotations)
        print(
            f"{len(pairs)} pairs, {sum(notes.values())} annotations: {dict(notes)}; {dict(kinds)}"
        )
        return
    repos = _repos_arg(args.repo)
    if not repos:
        raise SystemExit(f"give --repo [NAME=]PATH (repeated) or set {REPOS_ENV}")
    if args.command == "select":
        chosen = pairs_select(repos)
        # Pairs of repositories not selected anew are kept (a repository can be added alone).
        names = {entry["repo"] for entry in chosen}
        kept = [e for e in json.loads(args.manifest.read_text())["pairs"] if e["repo"] not in names]
        chosen = kept + chosen
        args.manifest.write_text(json.dumps({"pairs": chosen}, indent=1) + "\n")
        print(f"{len(chosen)} pairs written to {args.manifest}")
    written = corpus_build(repos, args.out, args.manifest)
    print(f"{written} pairs written under {args.out}")


if __name__ == "__main__":
    main()
