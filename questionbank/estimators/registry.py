"""The three estimators the question pages and the API offer, keyed by question slug.

Each entry names its inputs (fixed API parameter names), the page's preset values with where
they come from (the question pool, or a practice suggestion of ours), the formulas shown beside
the results, the figures practice mode asks for, and how to run and plot it.
"""

import math
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any, Literal

from . import plots
from .batching import (
    SIM_DEFAULT_REQUESTS,
    SIM_DEFAULT_SEED,
    SIM_MAX_REQUESTS,
    batch_estimate,
    batch_simulate,
    batch_sweep,
)
from .checkpoint import SIM_MAX_HOSTS, checkpoint_estimate, swarm_simulate
from .params import Param, params_parse
from .storage import bytes_human, storage_estimate

Source = Literal["pool", "practice"]
Values = dict[str, float | int | None]


@dataclass(frozen=True)
class Preset:
    value: str
    source: Source
    # Where the pool writes the number in words ("two children" for a fan-out of 2).
    evidence: str = ""


@dataclass(frozen=True)
class Figure:
    key: str
    label: str
    value: str
    formula: str


@dataclass(frozen=True)
class PracticeTarget:
    key: str  # a key of the result's `answers`
    label: str
    unit: str
    exact: bool  # whole numbers must match; others within PRACTICE_TOLERANCE


PRACTICE_TOLERANCE = 0.02


@dataclass(frozen=True)
class Outcome:
    data: dict[str, Any]  # the API's JSON body
    figures: tuple[Figure, ...]  # what the page shows, each with its formula
    answers: dict[str, float]  # what practice mode checks
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Estimator:
    slug: str
    title: str
    params: tuple[Param, ...]
    presets: Mapping[str, Preset]
    targets: tuple[PracticeTarget, ...]
    run: Callable[[Values], Outcome]
    plot: Callable[[Values, Outcome], str]

    def parse(self, query: Mapping[str, str]) -> Values:
        return params_parse(self.params, query)


def seconds_human(seconds: float) -> str:
    """320 → '5 min 20 s'; 64,000 → '17 h 46 min'; 0.41 → '0.41 s'."""
    if seconds < 60:
        return f"{seconds:.3g} s"
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours >= 48:
        return f"{seconds / 86400:.3g} days"
    if hours:
        return f"{hours} h {minutes} min"
    return f"{minutes} min {secs} s" if secs else f"{minutes} min"


def _num(value: float, digits: int = 4) -> str:
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.{digits}g}" if abs(value) < 1000 else f"{value:,.0f}"


def _rounded(value: float) -> float:
    return round(value, 6)


def _optional_int(values: Values, key: str) -> int | None:
    value = values.get(key)
    return None if value is None else int(value)


def _seed(values: Values) -> int:
    seed = _optional_int(values, "seed")
    return SIM_DEFAULT_SEED if seed is None else seed


# --- Batch dispatch (llm-inference-api) -------------------------------------------------------

BATCH_PARAMS = (
    Param("rate", "Traffic", "requests/s", 0.001, 1_000_000, inclusive_minimum=True),
    Param("batch", "Batch size (max inputs per call)", "inputs", 0, 10_000, integer=True),
    Param("latency_ms", "Call time", "ms", 0.001, 60_000, inclusive_minimum=True),
    Param(
        "fill",
        "Average batch fill",
        "0–1",
        0.001,
        1,
        inclusive_minimum=True,
        help="1 means every call is full.",
    ),
    Param(
        "timeout_ms",
        "Flush timeout",
        "ms",
        0.001,
        60_000,
        inclusive_minimum=True,
        required=False,
        help="Runs the simulation: a batch leaves when full or when its oldest input is this old.",
    ),
    Param(
        "gpus",
        "GPUs simulated",
        "GPUs",
        0,
        10_000,
        integer=True,
        required=False,
        help="Leave empty for the fewest that keep up with the batches the timeout produces.",
    ),
    Param(
        "requests",
        "Requests simulated",
        "requests",
        0,
        SIM_MAX_REQUESTS,
        integer=True,
        required=False,
    ),
    Param(
        "seed",
        "Random seed",
        "",
        0,
        2**31 - 1,
        integer=True,
        required=False,
        inclusive_minimum=True,
    ),
)


def _batch_run(values: Values) -> Outcome:
    rate, batch = float(values["rate"] or 0), int(values["batch"] or 0)
    latency_ms, fill = float(values["latency_ms"] or 0), float(values["fill"] or 0)
    estimate = batch_estimate(rate=rate, batch=batch, latency_ms=latency_ms, fill=fill)
    data: dict[str, Any] = {
        "per_gpu_rps": _rounded(estimate.per_gpu_rps),
        "gpus": estimate.gpus,
        "utilisation": _rounded(estimate.utilisation),
        "simulated": None,
    }
    figures = [
        Figure(
            "per_gpu_rps",
            "Requests per second one GPU serves",
            _num(estimate.per_gpu_rps),
            f"batch × fill ÷ call time = {_num(batch)} × {_num(fill)} ÷ "
            f"{_num(latency_ms / 1000)} s",
        ),
        Figure(
            "gpus",
            "GPUs needed",
            _num(estimate.gpus),
            f"⌈traffic ÷ per-GPU rate⌉ = ⌈{_num(rate)} ÷ {_num(estimate.per_gpu_rps)}⌉",
        ),
    ]
    notes: list[str] = []
    if values.get("timeout_ms") is not None:
        sim = batch_simulate(
            rate=rate,
            batch=batch,
            latency_ms=latency_ms,
            timeout_ms=float(values["timeout_ms"] or 0),
            gpus=_optional_int(values, "gpus"),
            requests=_optional_int(values, "requests") or SIM_DEFAULT_REQUESTS,
            seed=_seed(values),
        )
        data["simulated"] = {
            key: _rounded(value) if isinstance(value, float) else value
            for key, value in asdict(sim).items()
        }
        figures += [
            Figure(
                "sim_fill",
                "Simulated mean batch fill",
                f"{sim.mean_fill:.1%}",
                f"{sim.requests:,} Poisson arrivals in {sim.batches:,} batches",
            ),
            Figure(
                "sim_gpus_needed",
                "GPUs needed at that fill",
                _num(sim.gpus_needed),
                f"⌈traffic × call time ÷ (batch × simulated fill)⌉, on a fleet of {sim.gpus}",
            ),
            Figure(
                "sim_latency",
                "Latency p50 / p99",
                f"{sim.p50_ms:,.0f} ms / {sim.p99_ms:,.0f} ms",
                "wait for the flush + wait for a GPU + call time",
            ),
            Figure(
                "sim_utilisation",
                "GPU utilisation",
                f"{sim.utilisation:.1%}",
                "busy GPU-time ÷ (GPUs × simulated span)",
            ),
        ]
        if sim.gpus < sim.gpus_needed:
            notes.append(
                f"{sim.gpus} GPUs cannot keep up with batches this full: the queue grows "
                "for as long as the traffic lasts, so p99 depends on how long you simulate."
            )
    return Outcome(
        data=data,
        figures=tuple(figures),
        answers={"per_gpu_rps": estimate.per_gpu_rps, "gpus": estimate.gpus},
        notes=tuple(notes),
    )


def _log_if_wide(values: list[float]) -> bool:
    positive = [value for value in values if value > 0]
    return bool(positive) and max(positive) / min(positive) > 20


def _batch_plot(values: Values, outcome: Outcome) -> str:
    if outcome.data["simulated"] is None:
        return ""
    rate, batch = float(values["rate"] or 0), int(values["batch"] or 0)
    latency_ms, timeout_ms = float(values["latency_ms"] or 0), float(values["timeout_ms"] or 0)
    gpus = int(outcome.data["simulated"]["gpus"])
    common = {"rate": rate, "batch": batch, "latency_ms": latency_ms, "gpus": gpus}
    by_timeout = batch_sweep(over="timeout", timeout_ms=timeout_ms, **common)  # type: ignore[arg-type]
    by_rate = batch_sweep(over="rate", timeout_ms=timeout_ms, **common)  # type: ignore[arg-type]

    def p99_panel(points: tuple[Any, ...], over: str) -> plots.Panel:
        floor = [(p.x, latency_ms + (p.x if over == "timeout" else timeout_ms)) for p in points]
        p99 = [(p.x, p.p99_ms) for p in points]
        return plots.Panel(
            title="p99 latency against the " + ("timeout" if over == "timeout" else "traffic"),
            x_label="flush timeout (ms)" if over == "timeout" else "traffic (requests/s)",
            y_label="p99 (ms)",
            series=(
                plots.Series(f"p99 on {gpus} GPUs", tuple(p99)),
                plots.Series("call time + timeout", tuple(floor), dashed=True),
            ),
            marker_x=timeout_ms if over == "timeout" else rate,
            log_y=_log_if_wide([y for _, y in p99 + floor]),
        )

    def gpu_panel(points: tuple[Any, ...], over: str) -> plots.Panel:
        return plots.Panel(
            title="GPUs needed against the " + ("timeout" if over == "timeout" else "traffic"),
            x_label="flush timeout (ms)" if over == "timeout" else "traffic (requests/s)",
            y_label="GPUs",
            series=(
                plots.Series(
                    "GPUs needed", tuple((p.x, float(p.gpus_needed)) for p in points), step=True
                ),
            ),
            marker_x=timeout_ms if over == "timeout" else rate,
        )

    low = by_rate[0]
    desc = (
        f"Simulated on {gpus} GPUs with batches of up to {batch} and {latency_ms:g} ms calls. "
        f"At {rate:g} requests/s and a {timeout_ms:g} ms timeout, p99 is "
        f"{by_rate[-1].p99_ms:,.0f} ms and {by_rate[-1].gpus_needed} GPUs are needed. "
        f"At the lowest traffic plotted, {low.x:,.0f} requests/s, batches are only "
        f"{low.mean_fill:.0%} full and p99 is {low.p99_ms:,.0f} ms against a floor of "
        f"{latency_ms + timeout_ms:,.0f} ms (call time plus timeout): there the timeout, not "
        f"the traffic, sets the latency. Longer timeouts fill batches and need fewer GPUs: "
        f"{by_timeout[0].gpus_needed} at {by_timeout[0].x:g} ms, "
        f"{by_timeout[-1].gpus_needed} at {by_timeout[-1].x:g} ms."
    )
    return plots.svg_panels(
        uid="plot-batching",
        title="Batch dispatch: p99 latency and GPUs needed against the timeout and the traffic",
        desc=desc,
        panels=(
            p99_panel(by_timeout, "timeout"),
            p99_panel(by_rate, "rate"),
            gpu_panel(by_timeout, "timeout"),
            gpu_panel(by_rate, "rate"),
        ),
    )


# --- Checkpoint distribution (checkpoint-distribution) ----------------------------------------

CHECKPOINT_PARAMS = (
    Param("size_gb", "Checkpoint size", "GB", 0.001, 1_000_000, inclusive_minimum=True),
    Param("bandwidth_gbps", "Link bandwidth", "Gbps", 0.001, 100_000, inclusive_minimum=True),
    Param("hosts", "Hosts", "hosts", 0, 100_000, integer=True),
    Param("fanout", "Tree fan-out", "children per node", 0, 1_000, integer=True),
    Param("chunk_mb", "Chunk size", "MB", 0.001, 1_000_000, required=False, inclusive_minimum=True),
    Param(
        "fail_fraction",
        "Hosts that die mid-transfer",
        "0–0.9",
        0,
        0.9,
        required=False,
        inclusive_minimum=True,
    ),
    Param(
        "seed",
        "Random seed",
        "",
        0,
        2**31 - 1,
        integer=True,
        required=False,
        inclusive_minimum=True,
    ),
)
DEFAULT_CHUNK_MB = 64.0


def _checkpoint_run(values: Values) -> Outcome:
    size_gb, bandwidth = float(values["size_gb"] or 0), float(values["bandwidth_gbps"] or 0)
    hosts, fanout = int(values["hosts"] or 0), int(values["fanout"] or 0)
    chunk_mb = float(values.get("chunk_mb") or DEFAULT_CHUNK_MB)
    fail = float(values.get("fail_fraction") or 0.0)
    est = checkpoint_estimate(
        size_gb=size_gb, bandwidth_gbps=bandwidth, hosts=hosts, fanout=fanout, chunk_mb=chunk_mb
    )
    data: dict[str, Any] = {
        "bandwidth_gb_per_s": _rounded(est.bandwidth_gb_per_s),
        "lower_bound_s": _rounded(est.lower_bound_s),
        "naive_s": _rounded(est.naive_s),
        "tree_levels": est.tree_levels,
        "tree_s": _rounded(est.tree_s),
        "chunk_mb": chunk_mb,
        "chunks": est.chunks,
        "chunk_s": _rounded(est.chunk_s),
        "pipeline_s": _rounded(est.pipeline_s),
        "swarm_s": _rounded(est.swarm_s),
        "simulated": None,
    }
    notes: list[str] = []
    if hosts <= SIM_MAX_HOSTS:
        sim = swarm_simulate(
            size_gb=size_gb,
            bandwidth_gbps=bandwidth,
            hosts=hosts,
            chunk_mb=chunk_mb,
            fail_fraction=fail,
            seed=_seed(values),
        )
        data["simulated"] = {
            key: _rounded(value) if isinstance(value, float) else value
            for key, value in asdict(sim).items()
        }
        if sim.chunks < est.chunks:
            notes.append(
                f"The swarm simulation moves {sim.chunks} chunks of {_num(sim.chunk_mb)} MB "
                f"rather than {est.chunks:,} of {_num(chunk_mb)} MB, to stay fast; coarser "
                "chunks add a little time per hop."
            )
    else:
        data["simulation_note"] = f"The swarm is simulated for up to {SIM_MAX_HOSTS} hosts."
        notes.append(data["simulation_note"])
    per_s = _num(est.bandwidth_gb_per_s)
    figures = [
        Figure(
            "lower_bound_s",
            "Lower bound (each host's own link)",
            f"{_num(est.lower_bound_s)} s ({seconds_human(est.lower_bound_s)})",
            f"size ÷ bandwidth = {_num(size_gb)} GB ÷ {per_s} GB/s",
        ),
        Figure(
            "naive_s",
            "Naive: every host pulls from the source",
            f"{_num(est.naive_s)} s ({seconds_human(est.naive_s)})",
            f"hosts × lower bound = {hosts:,} × {_num(est.lower_bound_s)} s",
        ),
        Figure(
            "tree_levels",
            "Tree levels below the source",
            _num(est.tree_levels),
            f"fewest levels L with {fanout} + {fanout}² + … + {fanout}^L ≥ {hosts:,}",
        ),
        Figure(
            "tree_s",
            "Tree, whole file per hop",
            f"{_num(est.tree_s)} s ({seconds_human(est.tree_s)})",
            f"levels × fan-out × lower bound = {est.tree_levels} × {fanout} × "
            f"{_num(est.lower_bound_s)} s",
        ),
        Figure(
            "pipeline_s",
            "Tree, chunks forwarded on arrival",
            f"{_num(est.pipeline_s)} s ({seconds_human(est.pipeline_s)})",
            f"fan-out × lower bound + levels × fan-out × chunk time ({_num(est.chunk_s)} s)",
        ),
        Figure(
            "swarm_s",
            "Chunked swarm (estimate)",
            f"{_num(est.swarm_s)} s ({seconds_human(est.swarm_s)})",
            "lower bound + ⌈log₂(hosts + 1)⌉ × chunk time",
        ),
    ]
    if data["simulated"]:
        sim_data = data["simulated"]
        figures.append(
            Figure(
                "sim_swarm_s",
                "Chunked swarm (simulated)",
                f"{_num(sim_data['completion_s'])} s ({seconds_human(sim_data['completion_s'])})",
                f"rarest-first, {sim_data['hosts_failed']} of {hosts:,} hosts dead mid-transfer; "
                f"{sim_data['rounds']} rounds of one chunk-time",
            )
        )
    return Outcome(
        data=data,
        figures=tuple(figures),
        answers={
            "lower_bound_s": est.lower_bound_s,
            "naive_s": est.naive_s,
            "tree_levels": est.tree_levels,
            "tree_s": est.tree_s,
        },
        notes=tuple(notes),
    )


def _checkpoint_plot(values: Values, outcome: Outcome) -> str:
    data = outcome.data
    rows = [
        ("Lower bound", data["lower_bound_s"], True),
        ("Naive pull from the source", data["naive_s"], False),
        (f"Tree, {data['tree_levels']} levels, whole file", data["tree_s"], False),
        ("Tree, chunks on arrival", data["pipeline_s"], False),
        ("Swarm (estimate)", data["swarm_s"], False),
    ]
    if data["simulated"]:
        rows.append(("Swarm (simulated)", data["simulated"]["completion_s"], False))
    bars = tuple(
        plots.Bar(label=label, value=value, text=seconds_human(value), highlight=highlight)
        for label, value, highlight in rows
    )
    desc = "Completion time per strategy, log scale: " + "; ".join(
        f"{label} {seconds_human(value)}" for label, value, _ in rows
    )
    return plots.svg_bars(
        uid="plot-checkpoint",
        title="Checkpoint distribution: time to reach every host, by strategy",
        desc=desc,
        bars=bars,
        log=_log_if_wide([value for _, value, _ in rows]),
        tick_format=seconds_human,
    )


# --- Storage (data-platform) ------------------------------------------------------------------

STORAGE_PARAMS = (
    Param("events_per_s", "Events per second", "events/s", 0.001, 1e9, inclusive_minimum=True),
    Param("bytes_per_event", "Bytes per event", "bytes", 0.001, 1e9, inclusive_minimum=True),
    Param("retention_days", "Retention", "days", 0.001, 36_500, inclusive_minimum=True),
    Param("replication", "Replication", "copies", 1, 100, inclusive_minimum=True),
    Param("compression", "Compression ratio", "× (≥ 1)", 1, 1_000, inclusive_minimum=True),
    Param("hot_days", "Hot tier", "days", 0, 36_500, required=False, inclusive_minimum=True),
    Param("warm_days", "Warm tier", "days", 0, 36_500, required=False, inclusive_minimum=True),
)


def _storage_run(values: Values) -> Outcome:
    est = storage_estimate(
        events_per_s=float(values["events_per_s"] or 0),
        bytes_per_event=float(values["bytes_per_event"] or 0),
        retention_days=float(values["retention_days"] or 0),
        replication=float(values["replication"] or 1),
        compression=float(values["compression"] or 1),
        hot_days=None if values.get("hot_days") is None else float(values["hot_days"] or 0),
        warm_days=None if values.get("warm_days") is None else float(values["warm_days"] or 0),
    )
    data: dict[str, Any] = {
        "raw_bytes_per_day": _rounded(est.raw_bytes_per_day),
        "raw_bytes_per_day_human": est.raw_bytes_per_day_human,
        "bytes_per_day": _rounded(est.bytes_per_day),
        "bytes_per_day_human": est.bytes_per_day_human,
        "total_bytes": _rounded(est.total_bytes),
        "total_bytes_human": est.total_bytes_human,
        "tiers": [
            {"name": t.name, "days": t.days, "bytes": _rounded(t.bytes), "human": t.human}
            for t in est.tiers
        ],
    }
    figures = [
        Figure(
            "bytes_per_day",
            "Stored per day (one copy)",
            f"{est.bytes_per_day_human} ({_num(est.bytes_per_day)} B)",
            f"events/s × bytes/event × 86,400 ÷ compression = {_num(est.events_per_s)} × "
            f"{_num(est.bytes_per_event)} × 86,400 ÷ {_num(est.compression)}",
        ),
        Figure(
            "total_bytes",
            "Total retained",
            f"{est.total_bytes_human} ({_num(est.total_bytes)} B)",
            f"per day × retention × replication = {est.bytes_per_day_human} × "
            f"{_num(est.retention_days)} × {_num(est.replication)}",
        ),
    ]
    figures += [
        Figure(
            f"tier_{tier.name}",
            f"{tier.name.capitalize()} tier, {_num(tier.days)} days",
            tier.human,
            f"per day × {_num(tier.days)} days × replication",
        )
        for tier in est.tiers
        if tier.days
    ]
    return Outcome(
        data=data,
        figures=tuple(figures),
        answers={"bytes_per_day_gb": est.bytes_per_day / 1e9, "total_tb": est.total_bytes / 1e12},
    )


def _storage_plot(values: Values, outcome: Outcome) -> str:
    data = outcome.data
    rows = [
        ("Raw per day", data["raw_bytes_per_day"], data["raw_bytes_per_day_human"], False),
        ("Stored per day", data["bytes_per_day"], data["bytes_per_day_human"], False),
    ]
    rows += [
        (f"{t['name'].capitalize()} tier ({_num(t['days'])} d)", t["bytes"], t["human"], False)
        for t in data["tiers"]
        if t["days"]
    ]
    rows.append(("Total retained", data["total_bytes"], data["total_bytes_human"], True))
    desc = "Bytes stored, log scale: " + "; ".join(f"{r[0]} {r[2]}" for r in rows)
    return plots.svg_bars(
        uid="plot-storage",
        title="Storage: per day, per tier and in total",
        desc=desc,
        bars=tuple(plots.Bar(label=r[0], value=r[1], text=r[2], highlight=r[3]) for r in rows),
        log=_log_if_wide([r[1] for r in rows]),
        tick_format=bytes_human,
    )


ESTIMATORS: dict[str, Estimator] = {
    "llm-inference-api": Estimator(
        slug="llm-inference-api",
        title="Batch dispatch: GPUs for a fixed batch call",
        params=BATCH_PARAMS,
        presets={
            "rate": Preset("2000", "pool"),
            "batch": Preset("50", "pool"),
            "latency_ms": Preset("200", "pool"),
            "fill": Preset("1", "pool", evidence="A full batch"),
            "timeout_ms": Preset("20", "practice"),
        },
        targets=(
            PracticeTarget("per_gpu_rps", "Requests per second per GPU", "requests/s", False),
            PracticeTarget("gpus", "GPUs needed", "GPUs", True),
        ),
        run=_batch_run,
        plot=_batch_plot,
    ),
    "checkpoint-distribution": Estimator(
        slug="checkpoint-distribution",
        title="Checkpoint distribution: how long until every host has it",
        params=CHECKPOINT_PARAMS,
        presets={
            "size_gb": Preset("400", "pool"),
            "bandwidth_gbps": Preset("10", "pool"),
            "hosts": Preset("200", "pool"),
            "fanout": Preset("2", "pool", evidence="binary tree"),
            "chunk_mb": Preset("64", "practice"),
            "fail_fraction": Preset("0.1", "practice"),
        },
        targets=(
            PracticeTarget("lower_bound_s", "Lower bound", "s", False),
            PracticeTarget("naive_s", "Naive pull", "s", False),
            PracticeTarget("tree_levels", "Tree levels", "levels", True),
            PracticeTarget("tree_s", "Tree, whole file per hop", "s", False),
        ),
        run=_checkpoint_run,
        plot=_checkpoint_plot,
    ),
    "data-platform": Estimator(
        slug="data-platform",
        title="Storage: bytes per day and retained",
        params=STORAGE_PARAMS,
        presets={
            "events_per_s": Preset("100000", "practice"),
            "bytes_per_event": Preset("1000", "practice"),
            "retention_days": Preset("365", "practice"),
            "replication": Preset("3", "practice"),
            "compression": Preset("5", "practice"),
            "hot_days": Preset("30", "practice"),
            "warm_days": Preset("90", "practice"),
        },
        targets=(
            PracticeTarget("bytes_per_day_gb", "Stored per day (one copy)", "GB", False),
            PracticeTarget("total_tb", "Total retained", "TB", False),
        ),
        run=_storage_run,
        plot=_storage_plot,
    ),
}


def estimator_for(slug: str) -> Estimator | None:
    return ESTIMATORS.get(slug)


def practice_check(target: PracticeTarget, expected: float, guess: float) -> bool:
    if target.exact:
        return math.isclose(guess, expected)
    return math.isclose(guess, expected, rel_tol=PRACTICE_TOLERANCE)


__all__ = [
    "ESTIMATORS",
    "Estimator",
    "Figure",
    "Outcome",
    "PracticeTarget",
    "Preset",
    "bytes_human",
    "estimator_for",
    "practice_check",
    "seconds_human",
]
