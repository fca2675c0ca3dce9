"""Template context for every page: the inbox badge in the navigation."""

from typing import Any

from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from .selectors import inbox_unread_count


def inbox(request: HttpRequest) -> dict[str, Any]:
    """`inbox_unread`: the signed-in user's unread inbox items, counted only if a template
    shows it (one query)."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {"inbox_unread": SimpleLazyObject(lambda: inbox_unread_count(user=user))}
