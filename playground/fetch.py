"""The hot read path: one version with its content, by id or by label (selectors).

Applications fetch a prompt's `production` version on every call, so these reads are built to
cost one indexed query for the row *and* the caller's access together, plus a lookup of the
content by its hash in a process-local cache:

- The query is raw SQL written once per process: the ORM would compile the same three-table
  join on every request, which profiling showed to be most of the request's time.
- Access is decided from that same row (owner, or an active grant), in this request, so a
  revoked grant answers 404 on its very next request: nothing about *access* is cached.
- A version's content is immutable and identified by its `content_hash`, so the rebuilt
  content (texts read back from textstore) is cached by that hash. The cache is keyed by
  content, not by version or user, and is only consulted after the access check.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import models

from common.auth import Viewer
from common.lru import LruCache
from common.selectors import object_id_parse

from .content import VersionContent
from .exceptions import NotFound
from .models import AccessGrant, Label, Prompt, PromptVersion, Role
from .selectors import version_content

# Entries are small (a version's content, a few KB typically; large texts are bounded by the
# textstore cache anyway), so a count bound is enough.
CONTENT_CACHE_ENTRIES = 2048


@dataclass(frozen=True)
class VersionFetch:
    """A version as the fetch API returns it, with the caller's role on its prompt."""

    id: int
    prompt_id: int
    parent_id: int | None
    number: int
    author: str
    created_at: datetime
    message: str
    content_hash: str
    role: str
    grant_id: int | None
    content: VersionContent

    def as_json(self) -> dict[str, Any]:
        """The body of `GET /api/v1/versions/{id}/` (DESIGN §8)."""
        return {
            "id": self.id,
            "parent": self.parent_id,
            "number": self.number,
            "author": self.author,
            "created_at": self.created_at,
            "message": self.message,
            "content_hash": self.content_hash,
            "prompt": self.prompt_id,
            "content": self.content,
        }


# Content hash → content (immutable, so never stale).
content_cache: LruCache[VersionContent] = LruCache(bound=lambda: CONTENT_CACHE_ENTRIES)


def _columns(model: type[models.Model], *names: str) -> list[str]:
    columns = []
    for name in names:
        field = model._meta.get_field(name)
        assert isinstance(field, models.Field) and field.column
        columns.append(field.column)
    return columns


@functools.cache
def _statement(kind: str) -> str:
    """The SQL for `kind` ("id" or "label"), built from model metadata once per process."""
    version = PromptVersion._meta.db_table
    prompt = Prompt._meta.db_table
    grant = AccessGrant._meta.db_table
    label = Label._meta.db_table
    user = PromptVersion._meta.get_field("author").related_model._meta.db_table  # type: ignore[union-attr]
    v_fields = [f.column for f in PromptVersion._meta.concrete_fields]
    select = ", ".join(f"v.{c}" for c in v_fields)
    (prompt_fk,) = _columns(PromptVersion, "prompt")
    (author_fk,) = _columns(PromptVersion, "author")
    (owner_fk,) = _columns(Prompt, "owner")
    g_prompt, g_user, g_revoked = _columns(AccessGrant, "prompt", "user", "revoked_at")
    # Table and column names come from model metadata; every value is a query parameter.
    base = (
        f"SELECT {select}, p.{owner_fk} AS fetch_owner_id, u.username AS fetch_author,"  # noqa: S608
        f" g.id AS fetch_grant_id, g.role AS fetch_grant_role"
        f" FROM {version} v"
        f" JOIN {prompt} p ON p.id = v.{prompt_fk}"
        f" JOIN {user} u ON u.id = v.{author_fk}"
        f" LEFT JOIN {grant} g ON g.{g_prompt} = v.{prompt_fk} AND g.{g_user} = %s"
        f" AND g.{g_revoked} IS NULL"
    )
    if kind == "id":
        return base + " WHERE v.id = %s"
    l_prompt, l_name, l_version = _columns(Label, "prompt", "name", "version")
    return (
        base + f" JOIN {label} l ON l.{l_version} = v.id"
        f" WHERE l.{l_prompt} = %s AND l.{l_name} = %s"
    )


def _content(row: PromptVersion) -> VersionContent:
    content = content_cache.get(row.content_hash)
    if content is None:
        content = version_content(version=row)
        content_cache.put(row.content_hash, content)
    return content


def _fetch(user: Viewer, kind: str, params: list[Any]) -> VersionFetch:
    if not user.is_authenticated:
        raise NotFound
    rows = list(PromptVersion.objects.raw(_statement(kind), [user.pk, *params]))
    if not rows:
        raise NotFound
    row = rows[0]
    extra = row.__dict__  # the aliased columns of the join, read once into the dataclass below
    if extra["fetch_owner_id"] == user.pk:
        role, grant_id = Role.OWNER, None
    elif extra["fetch_grant_role"]:
        role, grant_id = extra["fetch_grant_role"], extra["fetch_grant_id"]
    else:
        raise NotFound  # not yours: the same answer as a missing id
    return VersionFetch(
        id=row.pk,
        prompt_id=row.prompt_id,
        parent_id=row.parent_id,
        number=row.number,
        author=extra["fetch_author"],
        created_at=row.created_at,
        message=row.message,
        content_hash=row.content_hash,
        role=role,
        grant_id=grant_id,
        content=_content(row),
    )


def version_fetch_for_user(*, user: Viewer, version_id: Any) -> VersionFetch:
    """Version `version_id` with its content, if `user` may read its prompt; else NotFound."""
    return _fetch(user, "id", [object_id_parse(version_id)])


def label_version_fetch_for_user(*, user: Viewer, prompt_id: Any, name: str) -> VersionFetch:
    """The version label `name` of prompt `prompt_id` points at, with its content, if `user`
    may read the prompt; NotFound for an unknown prompt or label and for "not yours" alike."""
    return _fetch(user, "label", [object_id_parse(prompt_id), name])
