"""Who may see a prompt, and as what: the access rule, defined once.

A caller's role on a prompt is `owner` when they own it, else the role of their grant on it that
is in force, else none (and then the prompt answers 404, exactly like a missing id). Both read
paths build on these three definitions:

- the ORM selectors (`playground.selectors`) filter grants with `grant_in_force()` and decide
  with `role_decide`;
- the hot fetch path (`playground.sharing.fetch`: one raw SQL statement for the key, the version and
  the access) joins grants on `grant_in_force_sql("g")` (compiled from the same Q, so the two
  cannot drift apart) and decides with `role_decide`.

`tests/playground/test_access_rule.py` changes the rule here and watches both paths follow.
"""

from __future__ import annotations

from django.db import connection
from django.db.models import Q

from .models import AccessGrant, Role


def grant_in_force() -> Q:
    """The grants that give access now: not revoked."""
    return Q(revoked_at__isnull=True)


def grant_in_force_sql(alias: str) -> str:
    """`grant_in_force()` as a SQL condition on the grant table under `alias` (no parameters:
    the statement that embeds it is written once per process)."""
    query = AccessGrant.objects.filter(grant_in_force()).query
    compiler = query.get_compiler(connection=connection)
    sql: str
    sql, params = compiler.compile(query.where)
    if params:
        raise ValueError("grant_in_force() must compile without parameters")
    table = connection.ops.quote_name(AccessGrant._meta.db_table)
    return sql.replace(f"{table}.", f"{alias}.")


def role_decide(*, user_id: int | None, owner_id: int, grant_role: str | None) -> str | None:
    """The caller's role from the prompt's owner and the role of the caller's grant in force
    (None without one); None: no access."""
    if user_id is not None and owner_id == user_id:
        return str(Role.OWNER)
    return grant_role or None
