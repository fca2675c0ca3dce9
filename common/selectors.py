"""Helpers shared by every app's selectors."""

from typing import Any

from common.exceptions import NotFound

MAX_ID = 2**62


def object_id_parse(value: Any) -> int:
    """A primary key from client input; anything that cannot be one is simply not found."""
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise NotFound from None
    if number <= 0 or number > MAX_ID:
        raise NotFound
    return number
