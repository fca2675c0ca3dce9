"""The one helper every page uses for a moment: `<time datetime=…Z>` with a UTC text that names
its zone (static/js/localtime.js rewrites it into the reader's zone)."""

from datetime import UTC, datetime, timedelta, timezone

import pytest
from django.template import Context, Template

from common.times import time_html

AT = datetime(2026, 12, 1, 14, 5, 9, tzinfo=UTC)


def test_the_server_fallback_names_utc():
    assert str(time_html(AT)) == (
        '<time datetime="2026-12-01T14:05:09Z" data-local="datetime">2026-12-01 14:05 UTC</time>'
    )
    assert str(time_html(AT, "time")).endswith(">14:05 UTC</time>")
    assert str(time_html(AT, "date")).endswith(">2026-12-01</time>")


def test_other_zones_and_naive_times_are_written_in_utc():
    new_york = AT.astimezone(timezone(timedelta(hours=-5)))
    assert 'datetime="2026-12-01T14:05:09Z"' in time_html(new_york)
    assert ">2026-12-01 14:05 UTC<" in time_html(AT.replace(tzinfo=None))


def test_none_and_bad_styles():
    assert time_html(None) == ""
    assert time_html(None, empty="never") == "never"
    with pytest.raises(ValueError, match="style"):
        time_html(AT, "week")  # type: ignore[arg-type]


def test_the_template_tag_escapes_and_takes_a_class():
    template = Template('{% load times %}{% when at "time" cls=name %}')
    html = template.render(Context({"at": AT, "name": "a&b"}))
    assert html == (
        '<time datetime="2026-12-01T14:05:09Z" data-local="time" class="a&amp;b">14:05 UTC</time>'
    )
