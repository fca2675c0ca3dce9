"""The snapshot policy: when a new text may be stored as a delta, and against what.

After Mercurial's revlog (deltas only while the data read to rebuild stays near one full text)
and git's bounded delta depth, with Mercurial's sparse-revlog idea of intermediate snapshots.

Every chain starts at one full snapshot. On it hang *intermediate snapshots* (a delta against
the previous snapshot of the chain) and *plain deltas* (a delta against the previous version).
For a text of `n` characters, with `cap = chain_cap(n)` and `run = run_cap(cap)`:

- a plain delta is stored only if its chain stays within `cap` deltas, holds at most `run`
  plain deltas since its nearest snapshot, and the compressed deltas on the chain since the
  full snapshot total at most that full snapshot's compressed size;
- otherwise an intermediate snapshot is stored, under the same bytes rule, provided it sits at
  depth at most `cap - run` (so the plain deltas after it still fit under `cap`);
- otherwise a full snapshot.

Hence any read costs one full snapshot plus at most `cap` deltas, and reads at most twice the
full snapshot's compressed size. The run limit is what makes a long history cheap: without it
the chain would hit `cap` and need a new full snapshot every `cap` versions; with it, a new
full snapshot is needed only when the deltas since the last one outweigh it.

`cap` is `TEXTSTORE_MAX_CHAIN`, lowered for multi-megabyte texts so that the characters
copied while applying deltas (about `n` per delta) stay within `TEXTSTORE_REBUILD_BUDGET_CHARS`:
that keeps a read of a 10 MB text well under a second.
"""

from dataclasses import dataclass

from django.conf import settings


@dataclass(frozen=True)
class ChainState:
    """Where a stored blob sits in its chain (the accounting columns of `Blob`)."""

    depth: int  # deltas applied after the full snapshot to rebuild this blob
    run: int  # plain deltas since the nearest snapshot (0 for a snapshot)
    delta_bytes: int  # compressed bytes of every delta on the chain since the full snapshot
    snapshot_bytes: int  # compressed bytes of the chain's full snapshot


def chain_cap(*, char_length: int) -> int:
    """The most deltas a text of this length may sit behind (≥ 1)."""
    max_chain = int(settings.TEXTSTORE_MAX_CHAIN)
    budget = int(settings.TEXTSTORE_REBUILD_BUDGET_CHARS)
    return max(1, min(max_chain, budget // max(char_length, 1)))


def run_cap(cap: int) -> int:
    """The most plain deltas in a row after a snapshot (≥ 1)."""
    return max(1, cap // 2)


def plain_delta_fits(*, base: ChainState, delta_size: int, cap: int) -> bool:
    return (
        base.depth + 1 <= cap
        and base.run + 1 <= run_cap(cap)
        and base.delta_bytes + delta_size <= base.snapshot_bytes
    )


def snapshot_delta_fits(*, anchor: ChainState, delta_size: int, cap: int) -> bool:
    """May a delta against the snapshot `anchor` be stored as an intermediate snapshot?"""
    return (
        anchor.run == 0
        and anchor.depth + 1 <= cap - run_cap(cap)
        and anchor.delta_bytes + delta_size <= anchor.snapshot_bytes
    )
