from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import connection
from django.db.models import Field
from django.http import HttpRequest
from django.utils import timezone
from rest_framework import HTTP_HEADER_ENCODING, exceptions
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


@dataclass(frozen=True)
class KeyLookup:
    """The API-key look-up as parts of a statement, so a hot read can answer from one query
    together with the key (`playground.sharing.fetch`): select `select` (its values converted for
    `fields`) `FROM from_`, with `join`s of the caller's own, `WHERE where`. The caller's user
    is the table alias `u`. Parameters: `key_lookup_params`."""

    select: str
    from_: str
    where: str
    fields: tuple[Field[Any, Any] | None, ...]


@functools.cache
def key_lookup() -> KeyLookup:
    """The key's row and its user, written once per process.

    Raw SQL read as one tuple (common.rawsql) because this runs on every API request: the ORM
    would compile the same join and map its columns each time (a measurable share of a cheap
    request, see bench/api_throughput.py).
    """
    user = get_user_model()._meta.db_table
    token = ApiToken._meta.db_table
    user_fk = column(ApiToken, "user").column
    fields = _user_fields()
    columns = ", ".join(f"u.{f.column}" for f in fields)
    # Table and column names come from model metadata; the values are parameters.
    return KeyLookup(
        select=f"{columns}, t.id,"
        " (t.last_used_at IS NULL OR t.last_used_at < %s),"
        " (t.expires_at IS NOT NULL AND t.expires_at <= %s)",
        from_=f"{user} u JOIN {token} t ON t.{user_fk} = u.id",
        where="t.key_hash = %s",
        fields=(*fields, None, None, None),
    )


@dataclass(frozen=True)
class KeyParams:
    """The look-up's parameters: `select` for its SELECT list, `where` for its WHERE."""

    select: list[Any]
    where: list[Any]


def key_lookup_params(*, key: str) -> KeyParams:
    now = timezone.now()
    # The comparisons run in the database, so no timestamp needs converting back here.
    stale_before = connection.ops.adapt_datetimefield_value(now - LAST_USED_RESOLUTION)
    now_db = connection.ops.adapt_datetimefield_value(now)
    return KeyParams(select=[stale_before, now_db], where=[token_hash(key)])


def key_row_use(row: Sequence[Any] | None) -> tuple[User, ApiKeyUse]:
    """The user and key of a look-up's row (its first `len(key_lookup().fields)` values), or
    AuthenticationFailed (401) for an unknown or expired key or an inactive account. Records
    the key's use, at most once a minute: a write on every request would cost throughput."""
    if row is None:
        raise exceptions.AuthenticationFailed("Invalid token.")
    fields = _user_fields()
    user_model = get_user_model()
    user = user_model.from_db(connection.alias, [f.attname for f in fields], row[: len(fields)])
    key_id, use_stale, expired = row[len(fields) : len(fields) + 3]
    if not user.is_active:
        raise exceptions.AuthenticationFailed("User inactive or deleted.")
    if expired:
        raise exceptions.AuthenticationFailed("Token expired.")
    if use_stale:
        ApiToken.objects.filter(pk=key_id).update(last_used_at=timezone.now())
    return user, ApiKeyUse(id=key_id)


class HashedTokenAuthentication(TokenAuthentication):
    """DRF token auth, but the database holds only hashes of the keys."""

    keyword = "Token"

    def authenticate_credentials(self, key: str) -> tuple[User, ApiKeyUse]:
        lookup = key_lookup()
        params = key_lookup_params(key=key)
        sql = f"SELECT {lookup.select} FROM {lookup.from_} WHERE {lookup.where}"  # noqa: S608
        return key_row_use(row_fetch(sql, [*params.select, *params.where], lookup.fields))


def api_key_from_request(request: HttpRequest) -> str | None:
    """The key of an `Authorization: Token <key>` header, parsed as DRF's TokenAuthentication
    (and so HashedTokenAuthentication) parses it, with its messages (AuthenticationFailed for a
    malformed header); None when the request carries no such header (then the session
    decides). Read from `META` directly: DRF's parser builds `request.headers` for it, a
    measurable share of the hot fetch path (bench/api_throughput.py)."""
    header: str | None = request.META.get("HTTP_AUTHORIZATION")
    if header is None:
        return None
    parts = header.encode(HTTP_HEADER_ENCODING).split()
    if not parts or parts[0].lower() != HashedTokenAuthentication.keyword.lower().encode():
        return None
    if len(parts) == 1:
        raise exceptions.AuthenticationFailed("Invalid token header. No credentials provided.")
    if len(parts) > 2:
        raise exceptions.AuthenticationFailed(
            "Invalid token header. Token string should not contain spaces."
        )
    try:
        return parts[1].decode()
    except UnicodeError:
        raise exceptions.AuthenticationFailed(
            "Invalid token header. Token string should not contain invalid characters."
        ) from None
