"""Helpers shared by every app's selectors."""

from typing import Any, TypeVar

from django.core.exceptions import ObjectDoesNotExist
from django.db.models import Model, QuerySet

from common.exceptions import NotFound

M = TypeVar("M", bound=Model)

MAX_ID = 2**62


def object_id_parse(value: object) -> int:
    """A primary key from client input; anything that cannot be one is simply not found."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise NotFound
    try:
        number = int(value)
    except ValueError:
        raise NotFound from None
    if number <= 0 or number > MAX_ID:
        raise NotFound
    return number


def object_get_or_not_found(queryset: QuerySet[M], **lookup: Any) -> M:
    """One row by an exact lookup with `get()` (no ORDER BY from default orderings on a
    primary-key read), or NotFound: missing and not visible answer alike."""
    try:
        return queryset.get(**lookup)
    except ObjectDoesNotExist:
        raise NotFound from None
