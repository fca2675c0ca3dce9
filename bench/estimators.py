"""Benchmark the question-bank estimators: the batch-dispatch simulation of 10^5 requests, the
checkpoint swarm, and a whole estimator panel (figures plus sweeps and SVG) as a page renders it.

Baseline, measured in the same run: drawing the same 10^5 Poisson arrival times and sorting 10^5
latencies, the work any simulation of that many requests has to do. The figure the issue asks
for is the simulation's wall time (< 1 s).

Run: `.venv/bin/python bench/estimators.py [--runs N]` (no Django database needed).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from questionbank.estimators import batching, checkpoint  # noqa: E402
from questionbank.estimators.registry import ESTIMATORS  # noqa: E402


def timed(fn: Callable[[], object], runs: int, clear: Callable[[], None]) -> float:
    """Median wall time of `runs` calls, with caches cleared before each."""
    samples = []
    for _ in range(runs):
        clear()
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def clear_all() -> None:
    batching.batch_simulate.cache_clear()
    checkpoint.swarm_simulate.cache_clear()


def baseline(requests: int) -> None:
    rng = random.Random(17)  # noqa: S311
    now, times = 0.0, []
    for _ in range(requests):
        now += rng.expovariate(2000)
        times.append(now)
    sorted(t * 0.5 for t in times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    n = 100_000

    base = timed(lambda: baseline(n), args.runs, clear_all)
    cases = {
        "batch sim 1e5, pool numbers (20 ms timer, fleet it needs)": lambda: (
            batching.batch_simulate(rate=2000, batch=50, latency_ms=200, timeout_ms=20, requests=n)
        ),
        "batch sim 1e5, 8 GPUs (overloaded, queue grows)": lambda: batching.batch_simulate(
            rate=2000, batch=50, latency_ms=200, timeout_ms=20, gpus=8, requests=n
        ),
        "batch sim 1e5, worst allowed (1 per batch, 10,000 GPUs)": lambda: batching.batch_simulate(
            rate=1_000_000, batch=1, latency_ms=60_000, timeout_ms=60_000, requests=n
        ),
        "swarm sim, 200 hosts, 400 GB, 10% dead": lambda: checkpoint.swarm_simulate(
            size_gb=400, bandwidth_gbps=10, hosts=200, chunk_mb=64, fail_fraction=0.1
        ),
        "swarm sim, 500 hosts (the cap)": lambda: checkpoint.swarm_simulate(
            size_gb=400, bandwidth_gbps=10, hosts=500, chunk_mb=64, fail_fraction=0.1
        ),
    }
    for slug, estimator in ESTIMATORS.items():
        query = {name: preset.value for name, preset in estimator.presets.items()}

        def panel(estimator=estimator, query=query) -> str:
            values = estimator.parse(query)
            return estimator.plot(values, estimator.run(values))

        cases[f"page panel {slug} (figures + plot, cold)"] = panel

    print(f"baseline: draw 1e5 arrivals + sort 1e5 latencies   {base * 1000:8.1f} ms")
    results = {}
    for name, fn in cases.items():
        seconds = timed(fn, args.runs, clear_all)
        results[name] = seconds
        print(f"{name:58s} {seconds * 1000:8.1f} ms  ({seconds / base:5.1f}× baseline)")
    headline = results["batch sim 1e5, pool numbers (20 ms timer, fleet it needs)"]
    print(f"batch_sim_1e5_s={headline:.3f}")


if __name__ == "__main__":
    main()
