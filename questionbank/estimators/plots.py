"""Server-rendered SVG charts for the estimators: no script, every text escaped.

Each chart is one `<svg role="img">` labelled by its own `<title>` and `<desc>`, so a screen
reader announces what it shows; the desc states the figures the picture makes visible. Several
charts are several SVGs in a group that lays them out side by side on a wide screen and stacks
them on a phone (static/css/questionbank.css), each drawn narrow (CHART_WIDTH) with FONT_SIZE
text, so a chart shrunk to a 375 px phone still has text of at least 11 px (issue 33).
"""

import math
from collections.abc import Callable
from dataclasses import dataclass
from html import escape

# Colours with at least 3:1 contrast against the white panel (WCAG non-text contrast).
COLOURS = ("#b42318", "#1d4ed8", "#4d7c0f", "#6b21a8")
GRID = "#d0d5dd"
INK = "#1f2937"
MUTED = "#475467"
FONT = "system-ui, -apple-system, 'Segoe UI', sans-serif"
# A chart's width in SVG units and its text size: on a 375 px phone a chart is drawn about
# 300 px wide, so its text is FONT_SIZE * 300 / CHART_WIDTH px (11.5).
CHART_WIDTH = 340
FONT_SIZE = 13
LEGEND_LINE = 17
CHAR_WIDTH = 7.2  # a rough width of one character at FONT_SIZE, for placing text


@dataclass(frozen=True)
class Series:
    name: str
    points: tuple[tuple[float, float], ...]
    dashed: bool = False
    step: bool = False


@dataclass(frozen=True)
class Panel:
    title: str
    x_label: str
    y_label: str
    series: tuple[Series, ...]
    marker_x: float | None = None  # a vertical line at the current input
    log_y: bool = False


@dataclass(frozen=True)
class Bar:
    label: str
    value: float
    text: str  # the value as printed at the end of the bar
    highlight: bool = False


def _text(value: object) -> str:
    return escape(str(value), quote=True)


def number_short(value: float) -> str:
    """Axis labels: 1,500 → '1.5k', 64,000 → '64k', 0.25 → '0.25'."""
    magnitude = abs(value)
    for limit, suffix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if magnitude >= limit and magnitude / limit < 1000:
            return f"{value / limit:.3g}{suffix}"
    return f"{value:.3g}"


def ticks_linear(low: float, high: float, count: int = 5) -> list[float]:
    if high <= low:
        high = low + 1
    raw = (high - low) / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    first = math.floor(low / step)
    last = math.ceil(high / step - 1e-9)
    return [round(index * step, 10) for index in range(first, last + 1)]


def ticks_log(low: float, high: float) -> list[float]:
    start = math.floor(math.log10(low))
    stop = math.ceil(math.log10(high))
    return [10.0**power for power in range(start, stop + 1)]


def _scale(value: float, low: float, high: float, start: float, end: float, log: bool) -> float:
    if log:
        value, low, high = math.log10(value), math.log10(low), math.log10(high)
    if high == low:
        return (start + end) / 2
    return start + (value - low) / (high - low) * (end - start)


def _panel_height(panel: Panel) -> int:
    return 226 + LEGEND_LINE * len(panel.series)


def _panel(panel: Panel, left: float, top: float, width: float, height: float) -> list[str]:
    out: list[str] = []
    plot_left, plot_right = left + 52, left + width - 16
    plot_top = top + 30 + LEGEND_LINE * len(panel.series)
    plot_bottom = top + height - 42
    xs = [x for series in panel.series for x, _ in series.points]
    ys = [y for series in panel.series for _, y in series.points]
    x_low, x_high = min(xs), max(xs)
    if panel.log_y:
        y_ticks = ticks_log(max(min(ys), 1e-9), max(ys))
    else:
        y_ticks = ticks_linear(0, max(ys) * 1.08 or 1)
    y_low, y_high = y_ticks[0], y_ticks[-1]
    x_ticks = ticks_linear(x_low, x_high, 3)
    x_ticks = [x for x in x_ticks if x_low <= x <= x_high] or [x_low, x_high]

    for tick in y_ticks:
        y = _scale(tick, y_low, y_high, plot_bottom, plot_top, panel.log_y)
        out.append(
            f'<line x1="{plot_left:.1f}" x2="{plot_right:.1f}" y1="{y:.1f}" y2="{y:.1f}" '
            f'stroke="{GRID}" stroke-width="1"/>'
            f'<text x="{plot_left - 6:.1f}" y="{y + 4:.1f}" text-anchor="end" fill="{MUTED}">'
            f"{_text(number_short(tick))}</text>"
        )
    for tick in x_ticks:
        x = _scale(tick, x_low, x_high, plot_left, plot_right, False)
        out.append(
            f'<text x="{x:.1f}" y="{plot_bottom + 17:.1f}" text-anchor="middle" fill="{MUTED}">'
            f"{_text(number_short(tick))}</text>"
        )
    out.append(
        f'<line x1="{plot_left:.1f}" x2="{plot_right:.1f}" y1="{plot_bottom:.1f}" '
        f'y2="{plot_bottom:.1f}" stroke="{MUTED}" stroke-width="1"/>'
        f'<text x="{(plot_left + plot_right) / 2:.1f}" y="{plot_bottom + 35:.1f}" '
        f'text-anchor="middle" fill="{INK}">{_text(panel.x_label)}</text>'
        f'<text x="{left + 12:.1f}" y="{(plot_top + plot_bottom) / 2:.1f}" text-anchor="middle" '
        f'fill="{INK}" transform="rotate(-90 {left + 12:.1f} {(plot_top + plot_bottom) / 2:.1f})">'
        f"{_text(panel.y_label)}</text>"
    )
    if panel.marker_x is not None and x_low <= panel.marker_x <= x_high:
        x = _scale(panel.marker_x, x_low, x_high, plot_left, plot_right, False)
        out.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{plot_top:.1f}" y2="{plot_bottom:.1f}" '
            f'stroke="{MUTED}" stroke-width="1" stroke-dasharray="2 3"/>'
        )
    legend_x = plot_left
    for index, series in enumerate(panel.series):
        colour = COLOURS[index % len(COLOURS)]
        coords: list[tuple[float, float]] = []
        for x_value, y_value in series.points:
            point = (
                _scale(x_value, x_low, x_high, plot_left, plot_right, False),
                _scale(
                    max(y_value, y_low) if panel.log_y else y_value,
                    y_low,
                    y_high,
                    plot_bottom,
                    plot_top,
                    panel.log_y,
                ),
            )
            if series.step and coords:
                coords.append((point[0], coords[-1][1]))
            coords.append(point)
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in coords)
        dash = ' stroke-dasharray="6 4"' if series.dashed else ""
        out.append(
            f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>'
        )
        if not series.dashed:
            out.extend(
                f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.5" fill="{colour}"/>'
                for x, y in coords[:: 2 if series.step else 1]
            )
        legend_y = top + 22 + LEGEND_LINE * index
        out.append(
            f'<line x1="{legend_x:.1f}" x2="{legend_x + 18:.1f}" y1="{legend_y - 4:.1f}" '
            f'y2="{legend_y - 4:.1f}" stroke="{colour}" stroke-width="2"{dash}/>'
            f'<text x="{legend_x + 24:.1f}" y="{legend_y:.1f}" fill="{INK}">'
            f"{_text(series.name)}</text>"
        )
    return out


def _svg(*, uid: str, title: str, desc: str, width: int, height: int, body: list[str]) -> str:
    uid = _text(uid)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'aria-labelledby="{uid}-title {uid}-desc" font-family="{_text(FONT)}" '
        f'font-size="{FONT_SIZE}">'
        f'<title id="{uid}-title">{_text(title)}</title>'
        f'<desc id="{uid}-desc">{_text(desc)}</desc>'
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>' + "".join(body) + "</svg>"
    )


def svg_panels(*, uid: str, title: str, desc: str, panels: tuple[Panel, ...]) -> str:
    """Line charts, one SVG each, in a group captioned by `title` and described by `desc`."""
    uid_text = _text(uid)
    charts = []
    for index, panel in enumerate(panels, start=1):
        height = _panel_height(panel)
        names = ", ".join(series.name for series in panel.series)
        charts.append(
            '<figure class="chart-cell">'
            + f'<figcaption aria-hidden="true">{_text(panel.title)}</figcaption>'
            + _svg(
                uid=f"{uid}-{index}",
                title=panel.title,
                desc=f"{names}: {panel.y_label} against {panel.x_label}.",
                width=CHART_WIDTH,
                height=height,
                body=_panel(panel, 0, 0, CHART_WIDTH, height),
            )
            + "</figure>"
        )
    return (
        f'<div class="chart-group" role="group" aria-labelledby="{uid_text}-title" '
        f'aria-describedby="{uid_text}-desc">'
        f'<p class="chart-group-title" id="{uid_text}-title">{_text(title)}</p>'
        f'<p class="chart-group-desc" id="{uid_text}-desc">{_text(desc)}</p>'
        f'<div class="chart-grid">{"".join(charts)}</div></div>'
    )


def svg_bars(
    *,
    uid: str,
    title: str,
    desc: str,
    bars: tuple[Bar, ...],
    log: bool,
    tick_format: Callable[[float], str] = number_short,
) -> str:
    """Horizontal bars, one per labelled value; a log scale when values span decades."""
    # Each bar's label sits above it, so the chart stays narrow enough for a phone.
    width, row_h, top = CHART_WIDTH, 42, 8
    longest = max((len(bar.text) for bar in bars), default=4)
    plot_left, plot_right = 8, width - 12 - CHAR_WIDTH * longest
    height = top + row_h * len(bars) + 30
    values = [bar.value for bar in bars if bar.value > 0]
    high = max(values) if values else 1.0
    low = min(values) / 2 if log and values else 0.0
    ticks = ticks_log(max(low, 1e-9), high) if log else ticks_linear(0, high, 4)
    high = ticks[-1]  # the axis ends on a labelled tick
    body: list[str] = []
    for tick in ticks:
        if tick < low:
            continue
        x = _scale(tick, low, high, plot_left, plot_right, log)
        body.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top:.1f}" y2="{height - 24:.1f}" '
            f'stroke="{GRID}"/><text x="{x:.1f}" y="{height - 10:.1f}" '
            f'text-anchor="middle" fill="{MUTED}">{_text(tick_format(tick))}</text>'
        )
    for index, bar in enumerate(bars):
        y = top + row_h * index
        value = max(bar.value, low) if log else bar.value
        end = _scale(value, low, high, plot_left, plot_right, log) if bar.value > 0 else plot_left
        colour = COLOURS[0] if bar.highlight else COLOURS[1]
        body.append(
            f'<text x="{plot_left}" y="{y + 14:.1f}" fill="{INK}">{_text(bar.label)}</text>'
            f'<rect x="{plot_left}" y="{y + 20:.1f}" width="{max(end - plot_left, 1):.1f}" '
            f'height="{row_h - 26}" fill="{colour}"/>'
            f'<text x="{end + 6:.1f}" y="{y + 33:.1f}" fill="{INK}">{_text(bar.text)}</text>'
        )
    return _svg(uid=uid, title=title, desc=desc, width=width, height=height, body=body)
