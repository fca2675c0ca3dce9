"""The estimators as pure functions: every number the bank states, pinned; properties checked
with hypothesis; plots are well-formed, accessible SVG."""

import math
import re
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from questionbank.estimators import plots
from questionbank.estimators.batching import (
    SIM_MAX_REQUESTS,
    batch_estimate,
    batch_simulate,
    batch_sweep,
)
from questionbank.estimators.checkpoint import (
    checkpoint_estimate,
    swarm_simulate,
    tree_levels_for,
)
from questionbank.estimators.formatting import measure
from questionbank.estimators.params import EstimateInputError, Param, param_parse
from questionbank.estimators.registry import (
    ESTIMATORS,
    PracticeTarget,
    practice_check,
    seconds_human,
)
from questionbank.estimators.storage import bytes_human, storage_estimate

SVG = "{http://www.w3.org/2000/svg}"

# --- The bank's numbers ------------------------------------------------------------------------


def test_batch_dispatch_numbers():
    full = batch_estimate(rate=2000, batch=50, latency_ms=200, fill=1)
    assert full.per_gpu_rps == 250
    assert full.gpus == 8
    assert full.utilisation == 1
    half = batch_estimate(rate=2000, batch=50, latency_ms=200, fill=0.5)
    assert half.per_gpu_rps == 125
    assert half.gpus == 16
    # Float noise must not add a GPU: 0.1 + 0.2 style errors round away.
    assert batch_estimate(rate=2000, batch=50, latency_ms=200, fill=0.1 * 10).gpus == 8
    assert batch_estimate(rate=2001, batch=50, latency_ms=200, fill=1).gpus == 9


def test_arrivals_during_one_call_at_the_floor():
    """The bank's practice figure: 2,000 / 8 = 250 per GPU, 250 × 0.2 s = 50 inputs."""
    est = batch_estimate(rate=2000, batch=50, latency_ms=200, fill=1)
    assert est.rate / est.gpus * est.latency_ms / 1000 == 50


def test_checkpoint_numbers():
    est = checkpoint_estimate(size_gb=400, bandwidth_gbps=10, hosts=200, fanout=2, chunk_mb=64)
    assert est.bandwidth_gb_per_s == 1.25
    assert est.lower_bound_s == 320
    assert est.naive_s == 64_000
    assert round(est.naive_s / 3600) == 18  # "close to 18 hours"
    assert est.tree_levels == 7
    assert est.fanout * est.lower_bound_s == 640  # per level
    assert est.tree_s == 4_480
    assert round(est.tree_s / 60) == 75  # "close to 75 minutes"
    assert est.chunks == 6_250
    assert est.chunk_s == pytest.approx(0.0512)
    assert est.pipeline_s == pytest.approx(640 + 7 * 2 * 0.0512)
    assert est.swarm_s == pytest.approx(320 + 8 * 0.0512)
    # The bank's practice figures: manifest of 6,250 × 32-byte hashes; 8 hops of 64 MB chunks.
    assert est.chunks * 32 == 200_000
    assert 8 * est.chunk_s == pytest.approx(0.41, abs=0.01)


@pytest.mark.parametrize(
    ("hosts", "fanout", "levels"),
    [(1, 2, 1), (2, 2, 1), (3, 2, 2), (6, 2, 2), (7, 2, 3), (126, 2, 6), (127, 2, 7),
     (200, 2, 7), (254, 2, 7), (255, 2, 8), (200, 1, 200), (200, 3, 5), (200, 200, 1)],
)  # fmt: skip
def test_tree_levels(hosts, fanout, levels):
    assert tree_levels_for(hosts=hosts, fanout=fanout) == levels


def test_storage_numbers():
    est = storage_estimate(
        events_per_s=100_000,
        bytes_per_event=1_000,
        retention_days=365,
        replication=1,
        compression=1,
    )
    assert est.bytes_per_day == 8_640_000_000_000
    assert est.bytes_per_day_human == "8.64 TB"
    assert est.total_bytes == 3_153_600_000_000_000  # 3,153.6 TB, ≈3.2 PB a year
    assert est.total_bytes_human == "3.15 PB"

    tiered = storage_estimate(
        events_per_s=100_000,
        bytes_per_event=1_000,
        retention_days=365,
        replication=3,
        compression=5,
        hot_days=30,
        warm_days=90,
    )
    assert tiered.bytes_per_day == 1_728_000_000_000  # 1.728 TB/day compressed
    assert tiered.total_bytes == 1_728_000_000_000 * 365 * 3
    assert [(t.name, t.days) for t in tiered.tiers] == [("hot", 30), ("warm", 90), ("cold", 245)]
    assert [t.bytes / 3 for t in tiered.tiers] == [51.84e12, 155.52e12, 423.36e12]
    assert sum(t.bytes for t in tiered.tiers) == pytest.approx(tiered.total_bytes)


def test_tiers_never_outlast_the_retention():
    est = storage_estimate(
        events_per_s=1,
        bytes_per_event=1,
        retention_days=10,
        replication=1,
        compression=1,
        hot_days=30,
    )
    assert [(t.name, t.days) for t in est.tiers] == [("hot", 10), ("warm", 0), ("cold", 0)]


@pytest.mark.parametrize(
    ("value", "text"),
    [(0, "0 B"), (999, "999 B"), (1000, "1 KB"), (8.64e12, "8.64 TB"), (1.89216e18, "1.89 EB")],
)
def test_bytes_human(value, text):
    assert bytes_human(value) == text


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0.41, "0.41 s"), (320, "5 min 20 s"), (640, "10 min 40 s"), (4_480, "1 h 14 min"),
     (64_000, "17 h 46 min"), (3_600, "1 h 0 min"), (600, "10 min"), (1e6, "11.6 days")],
)  # fmt: skip
def test_seconds_human(seconds, text):
    assert seconds_human(seconds) == text


# --- Simulations -------------------------------------------------------------------------------


def test_batch_simulation_is_seeded_and_deterministic():
    args = {"rate": 2000, "batch": 50, "latency_ms": 200, "timeout_ms": 20, "gpus": 10}
    first = batch_simulate(**args, requests=3000, seed=1)
    batch_simulate.cache_clear()
    again = batch_simulate(**args, requests=3000, seed=1)
    assert first == again
    other = batch_simulate(**args, requests=3000, seed=2)
    assert other != first
    assert first.requests == 3000
    assert 200 <= first.p50_ms <= first.p99_ms <= first.max_ms
    assert 0 < first.mean_fill <= 1
    assert 0 < first.utilisation <= 1


def test_batch_simulation_at_the_pool_numbers():
    """2,000 requests/s, 50 per call, 200 ms, a 20 ms timer: about 40 arrive per window, so
    batches run about 80% full and 10 GPUs keep up where the full-batch floor says 8."""
    sim = batch_simulate(rate=2000, batch=50, latency_ms=200, timeout_ms=20, requests=20_000)
    assert 0.78 < sim.mean_fill < 0.85
    assert sim.gpus_needed == 10
    assert sim.gpus == 10
    assert sim.p99_ms == pytest.approx(220, abs=5)  # the timer plus the call
    starved = batch_simulate(rate=2000, batch=50, latency_ms=200, timeout_ms=20, gpus=8)
    assert starved.p99_ms > 1000  # 8 GPUs cannot keep up with 80%-full batches: a queue grows


def test_at_low_traffic_the_timeout_sets_latency():
    sim = batch_simulate(rate=20, batch=50, latency_ms=200, timeout_ms=50, gpus=10)
    assert sim.mean_fill < 0.05
    # The first input of every batch waits out the whole timer; the few that join later, less.
    assert sim.p99_ms == pytest.approx(250, abs=1e-6)
    assert 240 < sim.p50_ms <= 250
    points = batch_sweep(over="rate", rate=4000, batch=50, latency_ms=200, timeout_ms=50, gpus=40)
    assert points[0].p99_ms == pytest.approx(250, abs=1e-6)
    assert points[-1].p99_ms < points[0].p99_ms  # busy traffic fills batches before the timer


def test_requests_are_capped():
    sim = batch_simulate(rate=1000, batch=10, latency_ms=10, timeout_ms=1, gpus=2, requests=10**7)
    assert sim.requests == SIM_MAX_REQUESTS


def test_swarm_simulation():
    sim = swarm_simulate(size_gb=400, bandwidth_gbps=10, hosts=200, chunk_mb=64, fail_fraction=0)
    assert sim.hosts_completed == 200
    assert sim.hosts_failed == 0
    assert 320 <= sim.completion_s < 640  # above the floor, well under a binary tree
    dead = swarm_simulate(size_gb=400, bandwidth_gbps=10, hosts=200, chunk_mb=64, fail_fraction=0.1)
    assert dead.hosts_failed == 20
    assert dead.hosts_completed == 180
    assert dead == swarm_simulate(
        size_gb=400, bandwidth_gbps=10, hosts=200, chunk_mb=64, fail_fraction=0.1
    )
    one = swarm_simulate(size_gb=400, bandwidth_gbps=10, hosts=1, chunk_mb=1000)
    assert one.completion_s == 320  # one host pulls every chunk straight from the source


# --- Properties --------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    rate=st.floats(1, 5000),
    batch=st.integers(1, 64),
    latency_ms=st.floats(1, 500),
    timeout_ms=st.floats(0.1, 300),
    gpus=st.integers(1, 30),
    extra=st.integers(1, 5),
    requests=st.integers(1, 1500),
    seed=st.integers(0, 1000),
)
def test_more_gpus_never_raise_p99(
    rate, batch, latency_ms, timeout_ms, gpus, extra, requests, seed
):
    common = {
        "rate": rate,
        "batch": batch,
        "latency_ms": latency_ms,
        "timeout_ms": timeout_ms,
        "requests": requests,
        "seed": seed,
    }
    fewer = batch_simulate(gpus=gpus, **common)
    more = batch_simulate(gpus=gpus + extra, **common)
    assert more.p99_ms <= fewer.p99_ms + 1e-9
    assert more.p50_ms <= fewer.p50_ms + 1e-9
    assert more.max_ms <= fewer.max_ms + 1e-9


@settings(max_examples=200, deadline=None)
@given(hosts=st.integers(1, 100_000), fanout=st.integers(1, 200), more=st.integers(1, 50))
def test_a_bigger_fanout_never_adds_tree_levels(hosts, fanout, more):
    assert tree_levels_for(hosts=hosts, fanout=fanout + more) <= tree_levels_for(
        hosts=hosts, fanout=fanout
    )


@settings(max_examples=200, deadline=None)
@given(hosts=st.integers(1, 10_000), fanout=st.integers(1, 50), more=st.integers(1, 1000))
def test_more_hosts_never_fewer_levels_and_levels_hold_them(hosts, fanout, more):
    levels = tree_levels_for(hosts=hosts, fanout=fanout)
    assert tree_levels_for(hosts=hosts + more, fanout=fanout) >= levels
    assert sum(fanout**level for level in range(1, levels + 1)) >= hosts
    assert sum(fanout**level for level in range(1, levels)) < hosts


@settings(max_examples=200, deadline=None)
@given(
    rate=st.floats(0.001, 1e6),
    batch=st.integers(1, 10_000),
    latency_ms=st.floats(0.001, 60_000),
    fill=st.floats(0.001, 1),
    factor=st.floats(1, 10),
)
def test_gpus_rise_with_traffic_and_fall_with_fill(rate, batch, latency_ms, fill, factor):
    base = batch_estimate(rate=rate, batch=batch, latency_ms=latency_ms, fill=fill)
    assert (
        batch_estimate(rate=rate * factor, batch=batch, latency_ms=latency_ms, fill=fill).gpus
        >= base.gpus
    )
    fuller = min(1.0, fill * factor)
    assert (
        batch_estimate(rate=rate, batch=batch, latency_ms=latency_ms, fill=fuller).gpus <= base.gpus
    )
    assert base.gpus * base.per_gpu_rps >= rate * (1 - 1e-9)


@settings(max_examples=25, deadline=None)
@given(
    hosts=st.integers(1, 60),
    size_gb=st.floats(1, 1000),
    chunk_mb=st.floats(100, 100_000),
    fail=st.floats(0, 0.9),
    seed=st.integers(0, 100),
)
def test_the_swarm_never_beats_the_lower_bound(hosts, size_gb, chunk_mb, fail, seed):
    est = checkpoint_estimate(
        size_gb=size_gb, bandwidth_gbps=10, hosts=hosts, fanout=2, chunk_mb=chunk_mb
    )
    sim = swarm_simulate(
        size_gb=size_gb,
        bandwidth_gbps=10,
        hosts=hosts,
        chunk_mb=chunk_mb,
        fail_fraction=fail,
        seed=seed,
    )
    assert sim.hosts_completed + sim.hosts_failed == hosts
    # When every host dies before it has the file, nothing completed and there is no transfer
    # time to compare (hypothesis found hosts=1 dying in round 7 of 10).
    if sim.hosts_completed:
        assert sim.completion_s >= est.lower_bound_s * (1 - 1e-9)


# --- Inputs, practice, plots -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "message"),
    [(None, "required"), ("", "required"), ("abc", "not a number"), ("nan", "finite"),
     ("-inf", "finite"), ("0", "must be positive"), ("-2", "must be positive"),
     ("11", "must be > 0 and ≤ 10"), ("1.5", "whole number")],
)  # fmt: skip
def test_param_parse_rejects(raw, message):
    param = Param("n", "N", "", 0, 10, integer=True)
    with pytest.raises(EstimateInputError) as caught:
        param_parse(param, raw)
    assert caught.value.field == "n"
    assert message in caught.value.message


def test_param_parse_accepts():
    param = Param("x", "X", "", 0, 1e6)
    assert param_parse(param, " 2,000 ") == 2000.0
    assert param_parse(param, "1e3") == 1000.0
    assert param_parse(Param("o", "O", "", 0, 1, required=False), "") is None


def test_practice_check():
    whole = PracticeTarget("gpus", "GPUs", "GPUs", exact=True)
    assert practice_check(whole, 8, 8)
    assert not practice_check(whole, 8, 8.1)
    close = PracticeTarget("s", "S", "s", exact=False)
    assert practice_check(close, 320, 325)
    assert not practice_check(close, 320, 330)


def parse_svg(svg: str) -> ET.Element:
    root = ET.fromstring(svg)  # noqa: S314 - our own output
    assert root.tag == f"{SVG}svg"
    assert root.get("role") == "img"
    title, desc = root.find(f"{SVG}title"), root.find(f"{SVG}desc")
    assert title is not None
    assert desc is not None
    assert (root.get("aria-labelledby") or "").split() == [title.get("id"), desc.get("id")]
    assert title.text
    assert desc.text
    assert not list(root.iter(f"{SVG}script"))
    return root


def parse_charts(html: str) -> list[ET.Element]:
    """One SVG, or a group of them (one chart each, issue 33)."""
    if html.startswith("<svg"):
        return [parse_svg(html)]
    group = ET.fromstring(html)  # noqa: S314 - our own output
    assert group.get("role") == "group"
    return [parse_svg(ET.tostring(svg, encoding="unicode")) for svg in group.iter(f"{SVG}svg")]


@pytest.mark.parametrize("slug", sorted(ESTIMATORS))
def test_every_estimator_plots_accessible_svg(slug):
    estimator = ESTIMATORS[slug]
    values = estimator.parse({name: preset.value for name, preset in estimator.presets.items()})
    outcome = estimator.run(values)
    for root in parse_charts(estimator.plot(values, outcome)):
        assert len(list(root.iter(f"{SVG}text"))) > 5  # axes and labels are real text
        # One chart per SVG, drawn narrow with 13-unit text: >= 11 px on a 300 px phone column.
        assert int(root.get("width") or 0) <= 360
        assert float(root.get("font-size") or 0) * 300 / int(root.get("width") or 1) >= 11


def test_plot_text_is_escaped():
    svg = plots.svg_bars(
        uid='x"><script>',
        title="<script>alert(1)</script>",
        desc="a & b",
        bars=(plots.Bar(label="<b>", value=3, text="</svg>"),),
        log=False,
    )
    assert "<script>" not in svg
    assert "</svg>" not in svg[:-6]
    title = parse_svg(svg).find(f"{SVG}title")
    assert title is not None
    assert title.text == "<script>alert(1)</script>"
    panel = plots.Panel(
        title="t", x_label="<x>", y_label="y", series=(plots.Series("<s>", ((1, 1), (2, 4))),)
    )
    group = plots.svg_panels(uid="p", title="<t>", desc="d", panels=(panel,))
    assert "<t>" not in group and "<x>" not in group and "<s>" not in group
    (chart,) = parse_charts(group)


def test_ticks():
    assert plots.ticks_linear(0, 237.6) == [0, 50, 100, 150, 200, 250]
    assert plots.ticks_log(220, 77_000) == [100, 1_000, 10_000, 100_000]
    assert plots.number_short(1500) == "1.5k"
    assert plots.number_short(1e12) == "1T"
    assert not math.isnan(plots.ticks_linear(5, 5)[-1])


@pytest.mark.parametrize(
    ("value", "unit", "text"),
    [
        (22.2222222, "ms", "22.2 ms"),
        (0.41361, "s", "0.414 s"),
        (20.0, "ms", "20 ms"),
        (220.0, "ms", "220 ms"),
        (1234.6, "requests/s", "1,235 requests/s"),
    ],
)
def test_measure_rounds_sensibly(value, unit, text):
    assert measure(value, unit) == text


@pytest.mark.parametrize("slug", sorted(ESTIMATORS))
def test_plot_captions_print_no_long_decimals(slug):
    """A caption once printed "22.2222 ms": every number in a plot's text has at most three
    significant digits after the point."""
    estimator = ESTIMATORS[slug]
    for timeout in ("20", "22.2222222", "7.77777"):
        raw = {name: preset.value for name, preset in estimator.presets.items()}
        if "timeout_ms" in raw:
            raw["timeout_ms"] = timeout
        values = estimator.parse(raw)
        outcome = estimator.run(values)
        html = estimator.plot(values, outcome)
        parse_charts(html)
        text = " ".join(t for t in ET.fromstring(html).itertext())  # noqa: S314 - our own output
        assert not re.search(r"\d\.\d{4,}", text), text


def test_the_storage_results_name_the_raw_bytes_per_day():
    estimator = ESTIMATORS["data-platform"]
    values = estimator.parse({name: preset.value for name, preset in estimator.presets.items()})
    figures = {figure.key: figure for figure in estimator.run(values).figures}
    raw = figures["raw_bytes_per_day"]
    assert raw.value.startswith("8.64 TB")  # 100,000 events/s × 1,000 B × 86,400
    assert "before compression" in raw.label
    assert list(figures)[:2] == ["raw_bytes_per_day", "bytes_per_day"]
