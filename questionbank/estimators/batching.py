"""Batch dispatch in front of a fixed GPU contract (`llm-inference-api`).

Closed form: a GPU finishes one call of `batch × fill` inputs every `latency`, so it serves
`batch × fill / latency` requests per second and the fleet needs `ceil(rate / that)` GPUs.

Simulation: Poisson arrivals into one queue in front of a fixed fleet. A batch leaves when it
holds `batch` inputs or when its oldest input has waited `timeout`, whichever comes first, and
only when a GPU is free; every call takes exactly `latency`. Seeded, so the same inputs always
give the same figures.
"""

import heapq
import math
import random
from dataclasses import dataclass
from functools import lru_cache

from django.conf import settings


def _sim_max_requests() -> int:
    """ESTIMATE_SIM_MAX_REQUESTS, or its default where no Django settings are configured
    (the estimators also run as plain Python)."""
    if not settings.configured:
        return 20_000
    return int(getattr(settings, "ESTIMATE_SIM_MAX_REQUESTS", 20_000))


# The simulation never runs more than this many requests, whatever the caller asks for: its
# cost is linear in them (about 1 µs CPU each, whatever the timeout), and the page is public.
# Asking for more is a 400 naming `requests` (ESTIMATE_SIM_MAX_REQUESTS, issue #21).
SIM_MAX_REQUESTS = _sim_max_requests()
SIM_DEFAULT_REQUESTS = min(20_000, SIM_MAX_REQUESTS)
# Nor more GPUs than this (the fleet is a list in memory).
SIM_MAX_GPUS = 10_000
SIM_DEFAULT_SEED = 17


@dataclass(frozen=True)
class BatchEstimate:
    rate: float
    batch: int
    latency_ms: float
    fill: float
    per_gpu_rps: float
    gpus: int
    utilisation: float  # share of the fleet's capacity the traffic uses at this fill


@dataclass(frozen=True)
class BatchSimulation:
    gpus: int  # the fleet simulated
    gpus_needed: int  # the fewest GPUs that keep up with the batches this timeout produces
    timeout_ms: float
    requests: int
    seed: int
    batches: int
    mean_fill: float
    mean_ms: float
    p50_ms: float
    p99_ms: float
    max_ms: float
    utilisation: float


def batch_estimate(*, rate: float, batch: int, latency_ms: float, fill: float) -> BatchEstimate:
    """`per_gpu_rps = batch × fill / latency`, `gpus = ceil(rate / per_gpu_rps)`."""
    per_gpu_rps = batch * fill / (latency_ms / 1000)
    # Round away float noise first (2,000 / 250.00000000000003 must give 8, not 9).
    gpus = max(1, math.ceil(round(rate / per_gpu_rps, 9)))
    return BatchEstimate(
        rate=rate,
        batch=batch,
        latency_ms=latency_ms,
        fill=fill,
        per_gpu_rps=per_gpu_rps,
        gpus=gpus,
        utilisation=rate / (gpus * per_gpu_rps),
    )


def _percentile(sorted_values: list[float], share: float) -> float:
    """Nearest-rank percentile of an already sorted list."""
    rank = max(1, math.ceil(share * len(sorted_values)))
    return sorted_values[rank - 1]


@lru_cache(maxsize=256)
def batch_simulate(
    *,
    rate: float,
    batch: int,
    latency_ms: float,
    timeout_ms: float,
    gpus: int | None = None,
    requests: int = SIM_DEFAULT_REQUESTS,
    seed: int = SIM_DEFAULT_SEED,
) -> BatchSimulation:
    """Discrete-event run of the batcher; times are in seconds inside, ms in the result.

    The batcher closes a batch on its own clock (full, or its first input `timeout` old) and
    hands it to a first-come first-served queue of identical GPUs. Because batches do not depend
    on the fleet, and every call takes the same time, each batch starts no later on a bigger
    fleet: more GPUs can never raise any request's latency, so never the p99 either.

    `gpus=None` runs the fewest GPUs that keep up with the batches this timeout produces.
    """
    requests = min(requests, SIM_MAX_REQUESTS)
    rng = random.Random(seed)  # noqa: S311 - a seeded, reproducible simulation, not secrets
    arrivals: list[float] = []
    now = 0.0
    for _ in range(requests):
        now += rng.expovariate(rate)
        arrivals.append(now)

    latency = latency_ms / 1000
    timeout = timeout_ms / 1000
    # Form the batches: (first input, one past the last input, the time the batch is ready).
    formed: list[tuple[int, int, float]] = []
    head = 0
    while head < requests:
        deadline = arrivals[head] + timeout
        end = head + 1
        while end < requests and end - head < batch and arrivals[end] <= deadline:
            end += 1
        formed.append((head, end, arrivals[end - 1] if end - head == batch else deadline))
        head = end
    mean_fill = requests / (len(formed) * batch)
    needed = gpus_for_fill(rate=rate, batch=batch, latency_ms=latency_ms, mean_fill=mean_fill)
    fleet = min(gpus or needed, SIM_MAX_GPUS)

    # Serve them first come, first served on `fleet` identical GPUs.
    free_at = [0.0] * fleet  # a heap of the times each GPU next becomes free
    waits: list[float] = []
    for first, end, ready in formed:
        done = max(ready, free_at[0]) + latency
        heapq.heapreplace(free_at, done)
        waits.extend(done - arrivals[index] for index in range(first, end))

    span = max(free_at)
    waits.sort()
    return BatchSimulation(
        gpus=fleet,
        gpus_needed=needed,
        timeout_ms=timeout_ms,
        requests=requests,
        seed=seed,
        batches=len(formed),
        mean_fill=mean_fill,
        mean_ms=1000 * sum(waits) / requests,
        p50_ms=1000 * _percentile(waits, 0.50),
        p99_ms=1000 * _percentile(waits, 0.99),
        max_ms=1000 * waits[-1],
        utilisation=len(formed) * latency / (fleet * span),
    )


def gpus_for_fill(*, rate: float, batch: int, latency_ms: float, mean_fill: float) -> int:
    """GPUs the traffic keeps busy when batches leave this full: the closed form at that fill.

    Fewer GPUs than this and the queue in front of them grows without bound.
    """
    return batch_estimate(rate=rate, batch=batch, latency_ms=latency_ms, fill=mean_fill).gpus


@dataclass(frozen=True)
class BatchSweepPoint:
    x: float  # the timeout in ms, or the traffic in requests/s
    p99_ms: float
    gpus_needed: int
    mean_fill: float


# Each point of a plot is a shorter run than the headline figure: the curves need shape, not
# the last digit, and a page redraws them on every keystroke.
SWEEP_POINTS = 9
SWEEP_REQUESTS = 4_000


def batch_sweep(
    *,
    over: str,
    rate: float,
    batch: int,
    latency_ms: float,
    timeout_ms: float,
    gpus: int | None,
) -> tuple[BatchSweepPoint, ...]:
    """p99 and GPUs needed against the timeout (`over="timeout"`) or the traffic (`"rate"`).

    The timeout runs up to twice the given one (at least to the call time); the traffic from
    a twentieth of the given rate up to the rate itself. The fleet stays fixed at `gpus`, or at
    what the given inputs need when it is None.
    """
    fleet = (
        gpus
        or batch_simulate(
            rate=rate,
            batch=batch,
            latency_ms=latency_ms,
            timeout_ms=timeout_ms,
            gpus=None,
            requests=SWEEP_REQUESTS,
        ).gpus
    )
    if over == "timeout":
        top = max(2 * timeout_ms, latency_ms)
        xs = [top * (index + 1) / SWEEP_POINTS for index in range(SWEEP_POINTS)]
    elif over == "rate":
        xs = [rate * (1 + 19 * index / (SWEEP_POINTS - 1)) / 20 for index in range(SWEEP_POINTS)]
    else:
        raise ValueError(f"cannot sweep over {over!r}")
    points = []
    for x in xs:
        run = batch_simulate(
            rate=x if over == "rate" else rate,
            batch=batch,
            latency_ms=latency_ms,
            timeout_ms=x if over == "timeout" else timeout_ms,
            gpus=fleet,
            requests=SWEEP_REQUESTS,
        )
        points.append(
            BatchSweepPoint(
                x=x, p99_ms=run.p99_ms, gpus_needed=run.gpus_needed, mean_fill=run.mean_fill
            )
        )
    return tuple(points)
