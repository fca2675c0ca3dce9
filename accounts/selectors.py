"""Reads of accounts data, scoped to the requesting user."""

from django.db.models import QuerySet

from common.auth import Viewer
from common.exceptions import NotFound
from common.selectors import object_id_parse

from .models import ApiToken


def api_token_list_for_user(*, user: Viewer) -> QuerySet[ApiToken]:
    """The user's API keys, newest first."""
    if not user.is_authenticated:
        return ApiToken.objects.none()
    return ApiToken.objects.filter(user_id=user.pk).order_by("-created_at", "-id")


def api_token_get_for_user(*, user: Viewer, token_id: object) -> ApiToken:
    """One of the user's keys; another user's key is NotFound, like a missing one."""
    token = api_token_list_for_user(user=user).filter(pk=object_id_parse(token_id)).first()
    if token is None:
        raise NotFound
    return token
