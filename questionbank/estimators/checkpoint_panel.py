"""The checkpoint-distribution estimator: closed forms, swarm simulation, plot."""

from dataclasses import asdict
from typing import Any

from . import plots
from .base import SEED_PARAM, Estimator, Figure, Outcome, PracticeTarget, Preset, Values, seed_of
from .checkpoint import SIM_MAX_HOSTS, checkpoint_estimate, swarm_simulate
from .formatting import log_if_wide, number_text, rounded, seconds_human
from .params import amount, count

CHECKPOINT_PARAMS = (
    amount("size_gb", "Checkpoint size", "GB", 1_000_000),
    amount("bandwidth_gbps", "Link bandwidth", "Gbps", 100_000),
    count("hosts", "Hosts", "hosts", 100_000),
    count("fanout", "Tree fan-out", "children per node", 1_000),
    amount("chunk_mb", "Chunk size", "MB", 1_000_000, required=False),
    amount("fail_fraction", "Hosts that die mid-transfer", "0–0.9", 0.9, minimum=0, required=False),
    SEED_PARAM,
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
        "bandwidth_gb_per_s": rounded(est.bandwidth_gb_per_s),
        "lower_bound_s": rounded(est.lower_bound_s),
        "naive_s": rounded(est.naive_s),
        "tree_levels": est.tree_levels,
        "tree_s": rounded(est.tree_s),
        "chunk_mb": chunk_mb,
        "chunks": est.chunks,
        "chunk_s": rounded(est.chunk_s),
        "pipeline_s": rounded(est.pipeline_s),
        "swarm_s": rounded(est.swarm_s),
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
            seed=seed_of(values),
        )
        data["simulated"] = {
            key: rounded(value) if isinstance(value, float) else value
            for key, value in asdict(sim).items()
        }
        if sim.chunks < est.chunks:
            notes.append(
                f"The swarm simulation moves {sim.chunks} chunks of {number_text(sim.chunk_mb)} MB "
                f"rather than {est.chunks:,} of {number_text(chunk_mb)} MB, to stay fast; coarser "
                "chunks add a little time per hop."
            )
    else:
        data["simulation_note"] = f"The swarm is simulated for up to {SIM_MAX_HOSTS} hosts."
        notes.append(data["simulation_note"])
    per_s = number_text(est.bandwidth_gb_per_s)
    figures = [
        Figure(
            "lower_bound_s",
            "Lower bound (each host's own link)",
            f"{number_text(est.lower_bound_s)} s ({seconds_human(est.lower_bound_s)})",
            f"size ÷ bandwidth = {number_text(size_gb)} GB ÷ {per_s} GB/s",
        ),
        Figure(
            "naive_s",
            "Naive: every host pulls from the source",
            f"{number_text(est.naive_s)} s ({seconds_human(est.naive_s)})",
            f"hosts × lower bound = {hosts:,} × {number_text(est.lower_bound_s)} s",
        ),
        Figure(
            "tree_levels",
            "Tree levels below the source",
            number_text(est.tree_levels),
            f"fewest levels L with {fanout} + {fanout}² + … + {fanout}^L ≥ {hosts:,}",
        ),
        Figure(
            "tree_s",
            "Tree, whole file per hop",
            f"{number_text(est.tree_s)} s ({seconds_human(est.tree_s)})",
            f"levels × fan-out × lower bound = {est.tree_levels} × {fanout} × "
            f"{number_text(est.lower_bound_s)} s",
        ),
        Figure(
            "pipeline_s",
            "Tree, chunks forwarded on arrival",
            f"{number_text(est.pipeline_s)} s ({seconds_human(est.pipeline_s)})",
            f"fan-out × lower bound + levels × fan-out × chunk time ({number_text(est.chunk_s)} s)",
        ),
        Figure(
            "swarm_s",
            "Chunked swarm (estimate)",
            f"{number_text(est.swarm_s)} s ({seconds_human(est.swarm_s)})",
            "lower bound + ⌈log₂(hosts + 1)⌉ × chunk time",
        ),
    ]
    if data["simulated"]:
        sim_data = data["simulated"]
        figures.append(
            Figure(
                "sim_swarm_s",
                "Chunked swarm (simulated)",
                f"{number_text(sim_data['completion_s'])} s "
                f"({seconds_human(sim_data['completion_s'])})",
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
        log=log_if_wide([value for _, value, _ in rows]),
        tick_format=seconds_human,
    )


ESTIMATOR = Estimator(
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
)
