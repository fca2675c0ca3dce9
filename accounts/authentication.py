from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import connection
from django.db.models import Field
from django.utils import timezone
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication

from common.rawsql import column, row_fetch

from .models import ApiToken
from .tokens import token_hash

LAST_USED_RESOLUTION = timedelta(minutes=1)


@dataclass(frozen=True)
class ApiKeyUse:
    """What `request.auth` holds for a request signed with an API key."""

    id: int


@functools.cache
def _user_fields() -> tuple[Field[Any, Any], ...]:
    return tuple(get_user_model()._meta.concrete_fields)


@functools.cache
def _statement() -> str:
    """The key look-up: the key's row and its user in one query, written once per process.

    Raw SQL read as one tuple (common.rawsql) because this runs on every API request: the ORM
    would compile the same join and map its columns each time (a measurable share of a cheap
    request, see bench/api_throughput.py).
    """
    user = get_user_model()._meta.db_table
    token = ApiToken._meta.db_table
    user_fk = column(ApiToken, "user").column
    select = ", ".join(f"u.{f.column}" for f in _user_fields())
    # Table and column names come from model metadata; the hash is a parameter.
    return (
        f"SELECT {select}, t.id,"  # noqa: S608
        f" (t.last_used_at IS NULL OR t.last_used_at < %s),"
        f" (t.expires_at IS NOT NULL AND t.expires_at <= %s)"
        f" FROM {user} u JOIN {token} t ON t.{user_fk} = u.id WHERE t.key_hash = %s"
    )


class HashedTokenAuthentication(TokenAuthentication):
    """DRF token auth, but the database holds only hashes of the keys."""

    keyword = "Token"

    def authenticate_credentials(self, key: str) -> tuple[User, ApiKeyUse]:  # type: ignore[override]
        now = timezone.now()
        # The comparison runs in the database, so no timestamp needs converting back here.
        stale_before = connection.ops.adapt_datetimefield_value(now - LAST_USED_RESOLUTION)
        now_db = connection.ops.adapt_datetimefield_value(now)
        fields = _user_fields()
        row = row_fetch(
            _statement(), [stale_before, now_db, token_hash(key)], [*fields, None, None, None]
        )
        if row is None:
            raise exceptions.AuthenticationFailed("Invalid token.")
        user_model = get_user_model()
        user = user_model.from_db(connection.alias, [f.attname for f in fields], row[: len(fields)])
        key_id, use_stale, expired = row[len(fields) :]
        if not user.is_active:
            raise exceptions.AuthenticationFailed("User inactive or deleted.")
        if expired:
            raise exceptions.AuthenticationFailed("Token expired.")
        use = ApiKeyUse(id=key_id)
        # Record use at most once a minute: a write on every request would cost throughput.
        if use_stale:
            ApiToken.objects.filter(pk=use.id).update(last_used_at=now)
        return user, use
