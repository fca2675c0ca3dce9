"""The storage estimator (`data-platform`): bytes per day, retained, per tier; plot."""

from typing import Any

from . import plots
from .base import Estimator, Figure, Outcome, PracticeTarget, Preset, Values
from .formatting import log_if_wide, number_text, rounded
from .params import amount
from .storage import bytes_human, storage_estimate

STORAGE_PARAMS = (
    amount("events_per_s", "Events per second", "events/s", 1e9),
    amount("bytes_per_event", "Bytes per event", "bytes", 1e9),
    amount("retention_days", "Retention", "days", 36_500),
    amount("replication", "Replication", "copies", 100, minimum=1),
    amount("compression", "Compression ratio", "× (≥ 1)", 1_000, minimum=1),
    amount("hot_days", "Hot tier", "days", 36_500, minimum=0, required=False),
    amount("warm_days", "Warm tier", "days", 36_500, minimum=0, required=False),
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
        "raw_bytes_per_day": rounded(est.raw_bytes_per_day),
        "raw_bytes_per_day_human": est.raw_bytes_per_day_human,
        "bytes_per_day": rounded(est.bytes_per_day),
        "bytes_per_day_human": est.bytes_per_day_human,
        "total_bytes": rounded(est.total_bytes),
        "total_bytes_human": est.total_bytes_human,
        "tiers": [
            {"name": t.name, "days": t.days, "bytes": rounded(t.bytes), "human": t.human}
            for t in est.tiers
        ],
    }
    figures = [
        Figure(
            "raw_bytes_per_day",
            "Raw per day (before compression)",
            f"{est.raw_bytes_per_day_human} ({number_text(est.raw_bytes_per_day)} B)",
            f"events/s × bytes/event × 86,400 = {number_text(est.events_per_s)} × "
            f"{number_text(est.bytes_per_event)} × 86,400",
        ),
        Figure(
            "bytes_per_day",
            "Stored per day (one copy)",
            f"{est.bytes_per_day_human} ({number_text(est.bytes_per_day)} B)",
            f"events/s × bytes/event × 86,400 ÷ compression = {number_text(est.events_per_s)} × "
            f"{number_text(est.bytes_per_event)} × 86,400 ÷ {number_text(est.compression)}",
        ),
        Figure(
            "total_bytes",
            "Total retained",
            f"{est.total_bytes_human} ({number_text(est.total_bytes)} B)",
            f"per day × retention × replication = {est.bytes_per_day_human} × "
            f"{number_text(est.retention_days)} × {number_text(est.replication)}",
        ),
    ]
    figures += [
        Figure(
            f"tier_{tier.name}",
            f"{tier.name.capitalize()} tier, {number_text(tier.days)} days",
            tier.human,
            f"per day × {number_text(tier.days)} days × replication",
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
        (
            f"{t['name'].capitalize()} tier ({number_text(t['days'])} d)",
            t["bytes"],
            t["human"],
            False,
        )
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
        log=log_if_wide([r[1] for r in rows]),
        tick_format=bytes_human,
    )


ESTIMATOR = Estimator(
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
)
