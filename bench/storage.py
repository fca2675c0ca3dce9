"""textstore against git on the same history (docs/design.md, Targets).

Run: `.venv/bin/python bench/storage.py` (Django is set up here on a throwaway SQLite database
and a throwaway local object store; nothing outside a temporary directory is touched).

1. A ~100 KB prompt edited 1,000 times (1-3 small edits per version) is stored in textstore,
   each version with the previous one as its base, and in a git repository (one commit per
   version, written with `git fast-import`, then `git gc --aggressive`). Printed: stored bytes
   for each, their ratio, and median / p99 / worst time to read the latest version and random
   old versions.
   - textstore bytes: every payload it stored (deltas and snapshots, compressed, plus chunk
     indexes). Row metadata (keys, counters) is left out, as git's .idx file is.
   - git bytes: the whole pack, and the part of it holding blobs (`objectsize:disk`); the pack
     also holds the 1,000 commit and tree objects that textstore does not store, so the
     blobs-only figure is the like-for-like one and `ratio_vs_git` uses it.
   - reads: textstore with its cache of read texts cleared before every read, so each read is a
     rebuild from the database (one query for the run of deltas down to the nearest snapshot)
     starting from its cache of decoded snapshots and checkpoints, warm as in a running
     server — the counterpart of git's delta-base cache; `cold` rows clear that too. git
     through one long-lived `git cat-file --batch` (no process start-up per read, and with its
     delta-base cache warm). `read_latest` and
     `read_random_old` are single timed reads; `read_every_version` reads each of the 1,000
     versions and keeps its best of 3, so its max is the slowest version to rebuild rather than
     a pause of the (shared) machine.
2. A 10 MB text edited 20 times: stored bytes, write and read times.

The last line is `ratio_vs_git=<textstore bytes / git blob bytes in the pack>`.
"""

import hashlib
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._django import setup_django  # noqa: E402

VERSIONS = 1000
PROMPT_CHARS = 100_000
BIG_CHARS = 10_000_000
BIG_EDITS = 20
SEED = 20241021

WORDS = """
the a an of to in and or for with on at by from as is are be was were been it this that these
those which who what when where why how not no all any each every some many more most less few
model prompt system user assistant message response request token tokens context window cache
latency throughput batch queue worker server client service api endpoint region replica shard
partition index table column row query write read storage object bucket blob snapshot delta
chain version branch label diff review design document revision annotation risk failure mode
rollback rollout migration observability metric trace log alert budget cost scale load peak
average percentile p99 median second minute hour day request per user tenant quota limit rate
retry backoff timeout deadline idempotent consistent eventual strong leader follower consensus
election lease lock transaction commit abort isolation snapshot serializable conflict merge
must should may never always only also then else while until before after during between
answer question explain describe compare estimate measure verify assume constraint tradeoff
option alternative choose prefer avoid keep reduce increase bound limit cap grow shrink split
join route balance forward stream upload download compress encrypt sign hash verify expire
clear concise careful exact complete short long small large fast slow safe unsafe cheap
expensive simple complex first second third final next previous current new old same other
""".split()


def words_line(rng: random.Random, count: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(count))


def make_text(rng: random.Random, size: int) -> str:
    """Prompt-like Markdown: headings, paragraphs, bullet lists, the odd code line."""
    lines: list[str] = []
    total = 0
    section = 0
    while total < size:
        roll = rng.random()
        if roll < 0.04:
            section += 1
            line = f"\n## {section}. {words_line(rng, rng.randint(2, 5)).capitalize()}\n"
        elif roll < 0.30:
            line = f"- {words_line(rng, rng.randint(4, 12))}."
        elif roll < 0.33:
            line = f"    {rng.choice(WORDS)}_{rng.randint(1, 99)} = {rng.randint(1, 10_000)}"
        else:
            line = f"{words_line(rng, rng.randint(10, 22)).capitalize()}."
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)[:size]


def edit(rng: random.Random, text: str) -> str:
    """1-3 small edits: insert a phrase, delete a few words, replace a word, or add a line."""
    for _ in range(rng.randint(1, 3)):
        pos = text.rfind(" ", 0, rng.randrange(1, len(text))) + 1
        roll = rng.random()
        if roll < 0.35:
            text = text[:pos] + words_line(rng, rng.randint(1, 5)) + " " + text[pos:]
        elif roll < 0.65:
            end = pos
            for _ in range(rng.randint(1, 4)):
                nxt = text.find(" ", end + 1)
                end = nxt if nxt != -1 else end
            text = text[:pos] + text[end + 1 :]
        elif roll < 0.90:
            end = text.find(" ", pos)
            end = end if end != -1 else pos
            text = text[:pos] + rng.choice(WORDS) + text[end:]
        else:
            eol = text.find("\n", pos)
            eol = eol if eol != -1 else len(text)
            text = text[:eol] + "\n- " + words_line(rng, rng.randint(3, 8)) + "." + text[eol:]
    return text


def quantiles(samples: list[float]) -> tuple[float, float, float]:
    """(median, p99, max) in milliseconds."""
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return statistics.median(ordered) * 1e3, p99 * 1e3, ordered[-1] * 1e3


def timed(function: Callable[[], object]) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def best_of(runs: int, read: Callable[[int], float], index: int) -> float:
    """The cost of reading one version, without the scheduler's noise (this machine is shared):
    its fastest of `runs` cold reads."""
    return min(read(index) for _ in range(runs))


def report(label: str, samples: list[float]) -> None:
    median, p99, worst = quantiles(samples)
    print(f"{label}: median_ms={median:.2f} p99_ms={p99:.2f} max_ms={worst:.2f} n={len(samples)}")


class GitHistory:
    """The same versions as commits of one file in a bare-bones git repository."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.env = {
            **os.environ,
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_CONFIG_NOSYSTEM": "1",
        }
        self.git("init", "--quiet", str(path), cwd=path.parent)

    def git(self, *args: str, cwd: Path | None = None, data: bytes | None = None) -> bytes:
        result = subprocess.run(
            ["git", *args],
            cwd=cwd or self.path,
            env=self.env,
            input=data,
            capture_output=True,
            check=True,
        )
        return result.stdout

    def build(self, versions: list[str]) -> list[str]:
        stream: list[bytes] = []
        shas = []
        for number, text in enumerate(versions):
            body = text.encode("utf-8")
            shas.append(hashlib.sha1(b"blob %d\0" % len(body) + body).hexdigest())  # noqa: S324
            message = f"version {number}".encode()
            stream.append(
                b"commit refs/heads/main\ncommitter Bench <bench@example.invalid> %d +0000\n"
                b"data %d\n%s\nM 100644 inline prompt.md\ndata %d\n%s\n"
                % (1_700_000_000 + number, len(message), message, len(body), body)
            )
        self.git("fast-import", "--quiet", data=b"".join(stream))
        self.git("gc", "--aggressive", "--prune=now", "--quiet")
        return shas

    def pack_bytes(self) -> int:
        pack_dir = self.path / ".git" / "objects" / "pack"
        return sum(p.stat().st_size for p in pack_dir.glob("*.pack"))

    def blob_bytes(self) -> int:
        out = self.git(
            "cat-file", "--batch-all-objects", "--batch-check=%(objecttype) %(objectsize:disk)"
        ).decode()
        return sum(
            int(size)
            for kind, size in (line.split() for line in out.splitlines())
            if kind == "blob"
        )

    def reader(self) -> Callable[[str], bytes]:
        proc = subprocess.Popen(
            ["git", "cat-file", "--batch"],
            cwd=self.path,
            env=self.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert proc.stdin and proc.stdout
        stdin, stdout = proc.stdin, proc.stdout

        def read(sha: str) -> bytes:
            stdin.write(sha.encode() + b"\n")
            stdin.flush()
            header = stdout.readline().split()
            body = stdout.read(int(header[2]) + 1)
            return body[:-1]

        self._proc = proc
        return read

    def close(self) -> None:
        proc = getattr(self, "_proc", None)
        if proc is not None:
            proc.stdin.close()
            proc.wait(timeout=10)


def bench_history(workdir: Path) -> float:
    from textstore.cache import caches_clear, text_cache
    from textstore.models import Blob
    from textstore.selectors import blob_read
    from textstore.services import blob_put

    rng = random.Random(SEED)
    versions = [make_text(rng, PROMPT_CHARS)]
    for _ in range(VERSIONS - 1):
        versions.append(edit(rng, versions[-1]))
    print(
        f"# history: {VERSIONS} versions, first {len(versions[0])} chars, "
        f"last {len(versions[-1])} chars"
    )

    shas: list[str] = []
    write_times: list[float] = []
    base = None
    for text in versions:
        start = time.perf_counter()
        blob = blob_put(text=text, base=base)
        write_times.append(time.perf_counter() - start)
        shas.append(blob.sha256)
        base = blob
    rows = Blob.objects.filter(sha256__in=shas)
    ours = sum(rows.values_list("stored_size", flat=True))
    fulls = rows.filter(kind=Blob.Kind.FULL).count()
    levels = rows.filter(kind=Blob.Kind.DELTA, snapshot_level__isnull=False).count()
    max_depth = max(rows.values_list("depth", flat=True))
    print(
        f"textstore_full_snapshots={fulls} intermediate_snapshots={levels} "
        f"plain_deltas={len(shas) - fulls - levels} max_chain={max_depth}"
    )
    report("textstore_write", write_times)

    git = GitHistory(workdir / "git")
    git_shas = git.build(versions)
    pack, blobs = git.pack_bytes(), git.blob_bytes()
    print(f"textstore_bytes={ours}")
    print(f"git_pack_bytes={pack} git_pack_blob_bytes={blobs}")
    print(f"ratio_vs_git_pack={ours / pack:.3f} ratio_vs_git_blobs={ours / blobs:.3f}")

    def ours_read(index: int) -> float:
        text_cache.clear()
        start = time.perf_counter()
        text = blob_read(sha=shas[index])
        elapsed = time.perf_counter() - start
        assert text == versions[index]
        return elapsed

    def ours_read_cold(index: int) -> float:
        caches_clear()
        start = time.perf_counter()
        text = blob_read(sha=shas[index])
        elapsed = time.perf_counter() - start
        assert text == versions[index]
        return elapsed

    read_git = git.reader()

    def git_read(index: int) -> float:
        start = time.perf_counter()
        body = read_git(git_shas[index])
        elapsed = time.perf_counter() - start
        assert body == versions[index].encode("utf-8")
        return elapsed

    picks = random.Random(SEED + 1)
    old = [picks.randrange(VERSIONS - 1) for _ in range(200)]
    latest = [VERSIONS - 1] * 100
    report("textstore_read_latest_cold", [ours_read_cold(i) for i in latest])
    report("textstore_read_random_old_cold", [ours_read_cold(i) for i in old])
    for index in range(VERSIONS):  # a running server has read its history before
        ours_read(index)
    read_latest = [ours_read(i) for i in latest]
    read_old = [ours_read(i) for i in old]
    read_every = [best_of(3, ours_read, i) for i in range(VERSIONS)]
    report("textstore_read_latest", read_latest)
    report("textstore_read_random_old", read_old)
    report("textstore_read_every_version", read_every)
    print(f"read_latest_median_ms={quantiles(read_latest)[0]:.3f}")
    print(f"read_any_median_ms={quantiles(read_every)[0]:.3f}")
    print(f"read_any_max_ms={quantiles(read_every)[2]:.3f}")
    report("git_read_latest", [git_read(i) for i in latest])
    report("git_read_random_old", [git_read(i) for i in old])
    report("git_read_every_version", [best_of(3, git_read, i) for i in range(VERSIONS)])
    git.close()
    return ours / blobs


def bench_big() -> None:
    from textstore.cache import caches_clear
    from textstore.models import Blob
    from textstore.selectors import blob_read, blob_read_range
    from textstore.services import blob_put

    rng = random.Random(SEED + 2)
    versions = [make_text(rng, BIG_CHARS)]
    for _ in range(BIG_EDITS):
        versions.append(edit(rng, versions[-1]))
    print(f"# big text: {len(versions[0])} chars, {BIG_EDITS} edited versions")
    shas: list[str] = []
    write_times: list[float] = []
    base = None
    for text in versions:
        start = time.perf_counter()
        blob = blob_put(text=text, base=base)
        write_times.append(time.perf_counter() - start)
        shas.append(blob.sha256)
        base = blob
    rows = Blob.objects.filter(sha256__in=shas)
    stored = sum(rows.values_list("stored_size", flat=True))
    print(
        f"big_bytes_stored={stored} big_text_bytes={len(versions[0].encode())} "
        f"full_snapshots={rows.filter(kind=Blob.Kind.FULL).count()} "
        f"max_chain={max(rows.values_list('depth', flat=True))}"
    )
    print(f"big_write_first_ms={write_times[0] * 1e3:.0f}")
    report("big_write_edits", write_times[1:])

    def read(index: int) -> float:
        caches_clear()
        start = time.perf_counter()
        text = blob_read(sha=shas[index])
        elapsed = time.perf_counter() - start
        assert text == versions[index]
        return elapsed

    report("big_read_latest", [read(len(shas) - 1) for _ in range(3)])
    report("big_read_every_version", [read(i) for i in range(len(shas))])

    def first_screen() -> float:
        caches_clear()
        start = time.perf_counter()
        blob_read_range(sha=shas[0], offset=len(versions[0]) // 2, length=4000)
        return time.perf_counter() - start

    report("big_read_range_snapshot", [first_screen() for _ in range(5)])


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="redline-bench-") as tmp:
        workdir = Path(tmp)
        setup_django(workdir)
        started = time.perf_counter()
        ratio = bench_history(workdir)
        bench_big()
        print(f"# total {time.perf_counter() - started:.0f} s")
        print(f"ratio_vs_git={ratio:.3f}")


if __name__ == "__main__":
    main()
