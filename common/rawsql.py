"""One row of hand-written SQL on the hot read paths, with values converted as the ORM would.

`Model.objects.raw()` maps columns to fields, resolves converters and builds a model on every
query; on a request that costs well under a millisecond in all, that overhead was a third of
the work (bench/api_throughput.py). Here the columns are declared once and the row comes back
as a tuple with each model field's database converters applied (e.g. SQLite's datetimes made
timezone-aware), so callers get the same Python values the ORM gives.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.utils import CursorWrapper
from django.db.models import Field, Model


def column(model: type[Model], name: str) -> Field[Any, Any]:
    """The concrete field `name` of `model` (its `.column` is the SQL name)."""
    field = model._meta.get_field(name)
    assert isinstance(field, Field) and field.column, name
    return field


# Per connection (each thread has its own): field → its converters, found once; and per
# sequence of fields a caller passes again and again (a module-level tuple), which of its
# values have converters, so a hot read does not look each field up on every row.
_converters: weakref.WeakKeyDictionary[BaseDatabaseWrapper, dict[Field[Any, Any], list[Any]]] = (
    weakref.WeakKeyDictionary()
)
_Plan = list[tuple[int, list[Any]]]
_plans: weakref.WeakKeyDictionary[BaseDatabaseWrapper, dict[int, tuple[object, _Plan]]] = (
    weakref.WeakKeyDictionary()
)


def _field_converters(db: BaseDatabaseWrapper, field: Field[Any, Any]) -> list[Any]:
    known = _converters.setdefault(db, {})
    found = known.get(field)
    if found is None:
        col = field.get_col(field.model._meta.db_table)
        found = [
            (convert, col) for convert in db.ops.get_db_converters(col) + col.get_db_converters(db)
        ]
        known[field] = found
    return found


def _plan(db: BaseDatabaseWrapper, fields: Sequence[Field[Any, Any] | None]) -> _Plan:
    """(index, converters) of each value of a row for `fields` that has converters. Kept by
    the identity of `fields` (checked, since an id can be reused once an object is gone)."""
    known = _plans.setdefault(db, {})
    found = known.get(id(fields))
    if found is not None and found[0] is fields:
        return found[1]
    plan = [
        (i, converters)
        for i, field in enumerate(fields)
        if field is not None and (converters := _field_converters(db, field))
    ]
    if isinstance(fields, tuple):  # only a tuple is known never to change
        known[id(fields)] = (fields, plan)
    return plan


def _prepared_cursor(db: BaseDatabaseWrapper) -> CursorWrapper:
    """On PostgreSQL, a cursor that binds parameters on the server, so psycopg prepares a
    statement once it has run it twice on a connection and the server stops parsing and
    planning it on every request (Django's own cursors bind on the client, which psycopg
    never prepares, and Django turns automatic preparing off: `prepare_threshold` None).
    Wrapped as Django wraps its cursors, so query logging and counting see it; the same
    connection, so the same transaction. Elsewhere, Django's cursor."""
    if db.vendor != "postgresql":
        return db.cursor()
    import psycopg

    db.close_if_health_check_failed()
    db.ensure_connection()
    raw = db.connection
    if raw.prepare_threshold is None:
        raw.prepare_threshold = 2  # only server-binding cursors (this one) ever prepare
    with db.wrap_database_errors:
        return db._prepare_cursor(psycopg.Cursor(raw))  # type: ignore[attr-defined,no-any-return]


def row_fetch(
    sql: str, params: Sequence[Any], fields: Sequence[Field[Any, Any] | None]
) -> tuple[Any, ...] | None:
    """The first row of `sql`, its i-th value converted for `fields[i]` (None: left as the
    driver returns it, for computed columns). Pass the same tuple of fields on a hot path:
    which values need converting is then worked out once per connection."""
    db = connections[DEFAULT_DB_ALIAS]
    with _prepared_cursor(db) as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    if row is None:
        return None
    values = list(row)
    for i, converters in _plan(db, fields):
        if values[i] is None:
            continue
        for convert, col in converters:
            values[i] = convert(values[i], col, db)
    return tuple(values)
