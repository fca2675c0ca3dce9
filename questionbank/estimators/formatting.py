"""How estimator figures are written: numbers for people, seconds as durations, plot scales."""


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


def number_text(value: float, digits: int = 4) -> str:
    """A number for people: whole numbers as they are (with thousands separators), others to
    `digits` significant digits below 1,000 and to the unit above (22.2222 → '22.22')."""
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.{digits}g}" if abs(value) < 1000 else f"{value:,.0f}"


def measure(value: float, unit: str) -> str:
    """A quantity with its unit for captions and sentences, to three significant digits below
    100 and to the unit above: 22.2222 ms → '22.2 ms', 0.4136 s → '0.414 s', 1,234.6 → '1,235'."""
    if abs(value) >= 100:
        return f"{value:,.0f} {unit}"
    return f"{number_text(value, 3)} {unit}"


def rounded(value: float) -> float:
    return round(value, 6)


def log_if_wide(values: list[float]) -> bool:
    positive = [value for value in values if value > 0]
    return bool(positive) and max(positive) / min(positive) > 20
