"""One way to show a moment on a page: `<time datetime="…Z">` with a UTC text that names its
zone, which `static/js/localtime.js` rewrites into the reader's own zone.

Without JavaScript (or before it runs) the reader sees "2026-12-01 14:00 UTC", never a bare
"14:00" that reads as local time. Templates use the `{% when %}` tag (common/templatetags/
times.py); code that builds HTML in Python (the version tree) calls `time_html`.
"""

from datetime import UTC, datetime
from typing import Literal

from django.utils.html import format_html
from django.utils.safestring import SafeString

# What the page shows: the date and time of day, the time of day alone (narrow rows), the date.
TimeStyle = Literal["datetime", "time", "date"]

_SERVER_FORMATS: dict[str, str] = {
    "datetime": "%Y-%m-%d %H:%M UTC",
    "time": "%H:%M UTC",
    "date": "%Y-%m-%d",
}


def time_html(
    at: datetime | None, style: TimeStyle = "datetime", *, empty: str = "", cls: str = ""
) -> SafeString:
    """`<time datetime=ISO data-local=style>` with the UTC text as the server's fallback.

    A naive datetime is taken as UTC (the project stores aware UTC times; SQLite rows read
    through raw SQL may come back naive)."""
    if at is None:
        return format_html("{}", empty)
    if style not in _SERVER_FORMATS:
        raise ValueError(f"style: one of {', '.join(_SERVER_FORMATS)}")
    utc = at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)
    iso = utc.isoformat(timespec="seconds").replace("+00:00", "Z")
    return format_html(
        '<time datetime="{}" data-local="{}"{}>{}</time>',
        iso,
        style,
        format_html(' class="{}"', cls) if cls else "",
        utc.strftime(_SERVER_FORMATS[style]),
    )
