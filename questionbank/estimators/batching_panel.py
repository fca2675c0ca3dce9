"""The batch-dispatch estimator (`llm-inference-api`): closed form, simulation, plot."""

from dataclasses import asdict
from typing import Any

from . import plots
from .base import (
    SEED_PARAM,
    Estimator,
    Figure,
    Outcome,
    PracticeTarget,
    Preset,
    Values,
    optional_int,
    seed_of,
)
from .batching import (
    SIM_DEFAULT_REQUESTS,
    SIM_MAX_REQUESTS,
    batch_estimate,
    batch_simulate,
    batch_sweep,
)
from .formatting import log_if_wide, measure, number_text, rounded
from .params import amount, count

BATCH_PARAMS = (
    amount("rate", "Traffic", "requests/s", 1_000_000),
    count("batch", "Batch size (max inputs per call)", "inputs", 10_000),
    amount("latency_ms", "Call time", "ms", 60_000),
    amount("fill", "Average batch fill", "0–1", 1, help="1 means every call is full."),
    amount(
        "timeout_ms",
        "Flush timeout",
        "ms",
        60_000,
        required=False,
        help="Runs the simulation: a batch leaves when full or when its oldest input is this old.",
    ),
    count(
        "gpus",
        "GPUs simulated",
        "GPUs",
        10_000,
        required=False,
        help="Leave empty for the fewest that keep up with the batches the timeout produces.",
    ),
    count("requests", "Requests simulated", "requests", SIM_MAX_REQUESTS, required=False),
    SEED_PARAM,
)


def _batch_run(values: Values) -> Outcome:
    rate, batch = float(values["rate"] or 0), int(values["batch"] or 0)
    latency_ms, fill = float(values["latency_ms"] or 0), float(values["fill"] or 0)
    estimate = batch_estimate(rate=rate, batch=batch, latency_ms=latency_ms, fill=fill)
    data: dict[str, Any] = {
        "per_gpu_rps": rounded(estimate.per_gpu_rps),
        "gpus": estimate.gpus,
        "utilisation": rounded(estimate.utilisation),
        "simulated": None,
    }
    figures = [
        Figure(
            "per_gpu_rps",
            "Requests per second one GPU serves",
            number_text(estimate.per_gpu_rps),
            f"batch × fill ÷ call time = {number_text(batch)} × {number_text(fill)} ÷ "
            f"{number_text(latency_ms / 1000)} s",
        ),
        Figure(
            "gpus",
            "GPUs needed",
            number_text(estimate.gpus),
            f"⌈traffic ÷ per-GPU rate⌉ = ⌈{number_text(rate)} ÷ "
            f"{number_text(estimate.per_gpu_rps)}⌉",
        ),
    ]
    notes: list[str] = []
    if values.get("timeout_ms") is not None:
        sim = batch_simulate(
            rate=rate,
            batch=batch,
            latency_ms=latency_ms,
            timeout_ms=float(values["timeout_ms"] or 0),
            gpus=optional_int(values, "gpus"),
            requests=optional_int(values, "requests") or SIM_DEFAULT_REQUESTS,
            seed=seed_of(values),
        )
        data["simulated"] = {
            key: rounded(value) if isinstance(value, float) else value
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
                number_text(sim.gpus_needed),
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
            log_y=log_if_wide([y for _, y in p99 + floor]),
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
        f"Simulated on {gpus} GPUs with batches of up to {batch} and "
        f"{measure(latency_ms, 'ms')} calls. "
        f"At {measure(rate, 'requests/s')} and a {measure(timeout_ms, 'ms')} timeout, p99 is "
        f"{measure(by_rate[-1].p99_ms, 'ms')} and {by_rate[-1].gpus_needed} GPUs are needed. "
        f"At the lowest traffic plotted, {measure(low.x, 'requests/s')}, batches are only "
        f"{low.mean_fill:.0%} full and p99 is {measure(low.p99_ms, 'ms')} against a floor of "
        f"{measure(latency_ms + timeout_ms, 'ms')} (call time plus timeout): there the timeout, "
        f"not the traffic, sets the latency. Longer timeouts fill batches and need fewer GPUs: "
        f"{by_timeout[0].gpus_needed} at {measure(by_timeout[0].x, 'ms')}, "
        f"{by_timeout[-1].gpus_needed} at {measure(by_timeout[-1].x, 'ms')}."
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


ESTIMATOR = Estimator(
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
)
