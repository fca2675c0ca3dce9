"""Storage for an event stream (`data-platform`).

`bytes_per_day = events_per_s × bytes_per_event × 86,400 / compression` and
`total_bytes = bytes_per_day × retention_days × replication`, with an optional split of the
retention window into hot, warm and cold tiers (oldest data coldest).
"""

from dataclasses import dataclass

SECONDS_PER_DAY = 86_400
UNITS = ("B", "KB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB")


def bytes_human(value: float) -> str:
    """Decimal units, three significant figures: 8,640,000,000,000 → '8.64 TB'."""
    unit = 0
    while abs(value) >= 1000 and unit < len(UNITS) - 1:
        value /= 1000
        unit += 1
    return f"{value:.3g} {UNITS[unit]}"


@dataclass(frozen=True)
class StorageTier:
    name: str
    days: float
    bytes: float
    human: str


@dataclass(frozen=True)
class StorageEstimate:
    events_per_s: float
    bytes_per_event: float
    retention_days: float
    replication: float
    compression: float
    raw_bytes_per_day: float
    bytes_per_day: float
    total_bytes: float
    raw_bytes_per_day_human: str
    bytes_per_day_human: str
    total_bytes_human: str
    tiers: tuple[StorageTier, ...]


def storage_estimate(
    *,
    events_per_s: float,
    bytes_per_event: float,
    retention_days: float,
    replication: float,
    compression: float,
    hot_days: float | None = None,
    warm_days: float | None = None,
) -> StorageEstimate:
    """Daily and retained bytes; tiers only when `hot_days` or `warm_days` is given.

    A tier's days are capped by what is left of the retention window, so the tiers always add
    up to `total_bytes`.
    """
    raw_per_day = events_per_s * bytes_per_event * SECONDS_PER_DAY
    per_day = raw_per_day / compression
    total = per_day * retention_days * replication
    tiers: list[StorageTier] = []
    if hot_days is not None or warm_days is not None:
        left = retention_days
        for name, wanted in (("hot", hot_days or 0.0), ("warm", warm_days or 0.0)):
            days = min(wanted, left)
            left -= days
            size = per_day * days * replication
            tiers.append(StorageTier(name=name, days=days, bytes=size, human=bytes_human(size)))
        size = per_day * left * replication
        tiers.append(StorageTier(name="cold", days=left, bytes=size, human=bytes_human(size)))
    return StorageEstimate(
        events_per_s=events_per_s,
        bytes_per_event=bytes_per_event,
        retention_days=retention_days,
        replication=replication,
        compression=compression,
        raw_bytes_per_day=raw_per_day,
        bytes_per_day=per_day,
        total_bytes=total,
        raw_bytes_per_day_human=bytes_human(raw_per_day),
        bytes_per_day_human=bytes_human(per_day),
        total_bytes_human=bytes_human(total),
        tiers=tuple(tiers),
    )
