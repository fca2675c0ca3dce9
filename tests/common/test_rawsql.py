"""common.rawsql: one row of hand-written SQL, values converted exactly as the ORM converts them."""

import pytest
from django.contrib.auth import get_user_model

from common.rawsql import column, row_fetch
from tests.factories import make_user

pytestmark = pytest.mark.django_db


def test_a_row_comes_back_with_the_orm_values():
    user_model = get_user_model()
    user = make_user("ada")
    fields = [column(user_model, name) for name in ("id", "username", "date_joined", "is_active")]
    table = user_model._meta.db_table
    sql = f"SELECT {', '.join(f.column for f in fields)}, 1 + 1 FROM {table} WHERE id = %s"  # noqa: S608
    row = row_fetch(sql, [user.pk], [*fields, None])
    fresh = user_model.objects.get(pk=user.pk)
    assert row is not None
    assert row == (fresh.pk, "ada", fresh.date_joined, True, 2)
    assert row[2].tzinfo is not None  # aware, as the ORM gives it (SQLite stores naive text)


def test_no_row_is_none_and_a_null_stays_none():
    user_model = get_user_model()
    user = make_user("bob")
    last_login = column(user_model, "last_login")
    table = user_model._meta.db_table
    sql = f"SELECT {last_login.column} FROM {table} WHERE id = %s"  # noqa: S608
    assert row_fetch(sql, [user.pk], [last_login]) == (None,)
    assert row_fetch(sql, [user.pk + 1000], [last_login]) is None
