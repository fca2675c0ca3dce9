"""`{% load times %}` … `{% when value %}`, `{% when value "time" %}`, `{% when value "date" %}`:
a moment in the reader's time zone (see common/times.py)."""

from datetime import datetime

from django import template
from django.utils.safestring import SafeString

from common.times import TimeStyle, time_html

register = template.Library()


@register.simple_tag(name="when")
def when(
    at: datetime | None, style: TimeStyle = "datetime", empty: str = "", cls: str = ""
) -> SafeString:
    return time_html(at, style, empty=empty, cls=cls)
