"""Distributing one large checkpoint to many hosts (`checkpoint-distribution`).

Closed forms: every host must receive the whole file through its own link, so nothing beats
`size / bandwidth`; one source serving every host in turn takes `hosts` times that; a tree whose
nodes each send the whole file to `fanout` children in turn takes `fanout` times it per level.

Simulation: a chunked swarm in rounds of one chunk-time. Every live node, the source included,
uploads at most one chunk a round and downloads at most one; a host asks a few random peers and
takes the rarest chunk (fewest copies in the swarm) that they hold and it lacks. Hosts die at
random moments at `fail_fraction`; the survivors' last chunk sets the completion time. Seeded.
"""

import math
import random
from dataclasses import dataclass
from functools import lru_cache

GB = 1000**3
MB = 1000**2
SIM_DEFAULT_SEED = 17
# Rounds × hosts bounds the simulation's work; past it the simulated chunks get coarser (the
# result says which chunk size it simulated).
SIM_MAX_CHUNK_HOSTS = 12_000
SIM_MIN_CHUNKS = 16
SIM_MAX_CHUNKS = 400
# Bigger fleets get the closed forms only.
SIM_MAX_HOSTS = 500
PEERS_ASKED = 4


@dataclass(frozen=True)
class CheckpointEstimate:
    size_gb: float
    bandwidth_gbps: float
    hosts: int
    fanout: int
    chunk_mb: float
    bandwidth_gb_per_s: float
    lower_bound_s: float
    naive_s: float
    tree_levels: int
    tree_s: float
    chunks: int
    chunk_s: float
    pipeline_s: float  # chunks forwarded on arrival down the same tree
    swarm_s: float  # chunked swarm: every host uploads while it downloads


@dataclass(frozen=True)
class SwarmSimulation:
    completion_s: float
    rounds: int
    chunks: int
    chunk_mb: float
    hosts_failed: int
    hosts_completed: int
    source_chunks_sent: int
    seed: int


def tree_levels_for(*, hosts: int, fanout: int) -> int:
    """Levels of a `fanout`-ary tree below the source needed to hold `hosts` hosts."""
    levels, capacity, width = 0, 0, 1
    while capacity < hosts:
        width *= fanout
        capacity += width
        levels += 1
    return levels


def checkpoint_estimate(
    *, size_gb: float, bandwidth_gbps: float, hosts: int, fanout: int, chunk_mb: float
) -> CheckpointEstimate:
    """Lower bound, naive pull, whole-file tree, chunked tree pipeline and swarm, in seconds."""
    per_s = bandwidth_gbps / 8  # gigabits to gigabytes
    lower_bound_s = size_gb / per_s
    levels = tree_levels_for(hosts=hosts, fanout=fanout)
    chunk_s = (chunk_mb / 1000) / per_s
    chunks = math.ceil(size_gb * 1000 / chunk_mb)
    return CheckpointEstimate(
        size_gb=size_gb,
        bandwidth_gbps=bandwidth_gbps,
        hosts=hosts,
        fanout=fanout,
        chunk_mb=chunk_mb,
        bandwidth_gb_per_s=per_s,
        lower_bound_s=lower_bound_s,
        naive_s=hosts * lower_bound_s,
        tree_levels=levels,
        tree_s=levels * fanout * lower_bound_s,
        chunks=chunks,
        chunk_s=chunk_s,
        # A parent's uplink still carries `fanout` copies; depth adds one chunk-time per child.
        pipeline_s=fanout * lower_bound_s + levels * fanout * chunk_s,
        # Every receiver also sends, so the one link that must carry it all is each host's own;
        # the last chunk still needs about one hop per doubling of the copies.
        swarm_s=lower_bound_s + math.ceil(math.log2(hosts + 1)) * chunk_s,
    )


def _sim_chunks(*, size_gb: float, chunk_mb: float, hosts: int) -> int:
    wanted = math.ceil(size_gb * 1000 / chunk_mb)
    ceiling = max(SIM_MIN_CHUNKS, min(SIM_MAX_CHUNKS, SIM_MAX_CHUNK_HOSTS // hosts))
    return max(1, min(wanted, ceiling))


@lru_cache(maxsize=64)
def swarm_simulate(
    *,
    size_gb: float,
    bandwidth_gbps: float,
    hosts: int,
    chunk_mb: float,
    fail_fraction: float = 0.0,
    seed: int = SIM_DEFAULT_SEED,
) -> SwarmSimulation:
    """Round-by-round run of a rarest-first chunk swarm with one source and dead peers."""
    rng = random.Random(seed)  # noqa: S311 - a seeded, reproducible simulation, not secrets
    chunks = _sim_chunks(size_gb=size_gb, chunk_mb=chunk_mb, hosts=hosts)
    sim_chunk_mb = size_gb * 1000 / chunks
    round_s = (sim_chunk_mb / 1000) / (bandwidth_gbps / 8)
    full = (1 << chunks) - 1
    source = hosts  # node index of the source; hosts are 0..hosts-1
    have = [0] * hosts + [full]
    copies = [0] * chunks  # copies held by live hosts (the source is counted apart)
    # The failing hosts die at a random round within the time the transfer should take.
    dying = rng.sample(range(hosts), round(fail_fraction * hosts))
    death_round = {host: rng.randint(1, chunks) for host in dying}
    alive = set(range(hosts))
    pending = set(range(hosts))  # live hosts still missing chunks
    rounds = 0
    source_sent = 0
    while pending:
        rounds += 1
        for host in [h for h in alive if death_round.get(h) == rounds]:
            alive.discard(host)
            pending.discard(host)
            for chunk in range(chunks):
                if have[host] >> chunk & 1:
                    copies[chunk] -= 1
        if not pending:
            break
        # Rarity as seen at the start of the round: buckets of chunks by their copy count.
        buckets: dict[int, int] = {}
        for chunk, count in enumerate(copies):
            buckets[count] = buckets.get(count, 0) | (1 << chunk)
        by_rarity = [buckets[count] for count in sorted(buckets)]
        uploaders = [node for node in alive if have[node]] + [source]
        busy: set[int] = set()
        received: list[tuple[int, int]] = []
        order = list(pending)
        rng.shuffle(order)
        count = len(uploaders)
        for host in order:
            lacking = ~have[host]
            peers = []
            for _ in range(PEERS_ASKED):
                peer = uploaders[int(rng.random() * count)]
                if peer != host and peer not in busy and have[peer] & lacking:
                    peers.append(peer)
            if not peers:
                # Nobody asked can help: fall back to the source if it still has a slot.
                if source in busy:
                    continue
                peers = [source]
            picked = _rarest(by_rarity, peers, have, host, rng)
            if picked is None:
                continue
            peer, chunk = picked
            busy.add(peer)
            source_sent += peer == source
            received.append((host, chunk))
        for host, chunk in received:
            have[host] |= 1 << chunk
            copies[chunk] += 1
            if have[host] == full:
                pending.discard(host)
    return SwarmSimulation(
        completion_s=rounds * round_s,
        rounds=rounds,
        chunks=chunks,
        chunk_mb=sim_chunk_mb,
        hosts_failed=len(dying),
        hosts_completed=len(alive),
        source_chunks_sent=source_sent,
        seed=seed,
    )


def _rarest(
    by_rarity: list[int], peers: list[int], have: list[int], host: int, rng: random.Random
) -> tuple[int, int] | None:
    """The rarest chunk one of `peers` holds and `host` lacks, with the peer that holds it."""
    for bucket in by_rarity:
        for peer in peers:
            offer = have[peer] & ~have[host] & bucket
            if offer:
                # A random chunk among the equally rare, so hosts do not all chase the same one.
                shift = rng.randrange(offer.bit_length())
                upper = offer >> shift << shift
                lowest = upper if upper else offer
                return peer, (lowest & -lowest).bit_length() - 1
    return None
