"""The hot read path: one version with its content, by id or by label (selectors).

Applications fetch a prompt's `production` version on every call, so these reads are built to
cost one indexed query for the row *and* the caller's access together, plus a lookup of the
content by its hash in a process-local cache:

- The query is raw SQL written once per process, read as one tuple (common.rawsql): the ORM
  would compile the same three-table join and build a model on every request, which profiling
  showed to be most of the request's time.
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
from django.db.models import Field

from common.auth import Viewer
from common.lru import LruCache
from common.rawsql import column, row_fetch
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


_VERSION_FIELDS = ("id", "prompt", "parent", "number", "created_at", "message", "content_hash")


@functools.cache
def _fields() -> tuple[Field[Any, Any], ...]:
    """The selected columns' fields, in the statement's order (for converting the row)."""
    user_model = PromptVersion._meta.get_field("author").related_model
    assert isinstance(user_model, type) and issubclass(user_model, models.Model)
    return (
        *(column(PromptVersion, name) for name in _VERSION_FIELDS),
        column(Prompt, "owner"),
        column(user_model, "username"),
        column(AccessGrant, "id"),
        column(AccessGrant, "role"),
    )


@functools.cache
def _statement(kind: str) -> str:
    """The SQL for `kind` ("id" or "label"), built from model metadata once per process."""
    version = PromptVersion._meta.db_table
    prompt = Prompt._meta.db_table
    grant = AccessGrant._meta.db_table
    label = Label._meta.db_table
    fields = _fields()
    user = fields[8].model._meta.db_table
    select = ", ".join(
        f"{alias}.{f.column}" for alias, f in zip("vvvvvvvpugg", fields, strict=True)
    )
    prompt_fk = column(PromptVersion, "prompt").column
    author_fk = column(PromptVersion, "author").column
    g_prompt, g_user, g_revoked = (
        column(AccessGrant, name).column for name in ("prompt", "user", "revoked_at")
    )
    # Table and column names come from model metadata; every value is a query parameter.
    base = (
        f"SELECT {select}"  # noqa: S608
        f" FROM {version} v"
        f" JOIN {prompt} p ON p.id = v.{prompt_fk}"
        f" JOIN {user} u ON u.id = v.{author_fk}"
        f" LEFT JOIN {grant} g ON g.{g_prompt} = v.{prompt_fk} AND g.{g_user} = %s"
        f" AND g.{g_revoked} IS NULL"
    )
    if kind == "id":
        return base + " WHERE v.id = %s"
    l_prompt, l_name, l_version = (
        column(Label, name).column for name in ("prompt", "name", "version")
    )
    return (
        base + f" JOIN {label} l ON l.{l_version} = v.id"
        f" WHERE l.{l_prompt} = %s AND l.{l_name} = %s"
    )


def _content(version_id: int, content_hash: str) -> VersionContent:
    content = content_cache.get(content_hash)
    if content is None:  # first read of this content in this process: rebuild it once
        content = version_content(version=PromptVersion.objects.get(pk=version_id))
        content_cache.put(content_hash, content)
    return content


def _fetch(user: Viewer, kind: str, params: list[Any]) -> VersionFetch:
    if not user.is_authenticated:
        raise NotFound
    row = row_fetch(_statement(kind), [user.pk, *params], _fields())
    if row is None:
        raise NotFound
    (pk, prompt_id, parent_id, number, created_at, message, content_hash) = row[:7]
    owner_id, author, grant_id, grant_role = row[7:]
    if owner_id == user.pk:
        role, grant_id = Role.OWNER, None
    elif grant_role:
        role = grant_role
    else:
        raise NotFound  # not yours: the same answer as a missing id
    return VersionFetch(
        id=pk,
        prompt_id=prompt_id,
        parent_id=parent_id,
        number=number,
        author=author,
        created_at=created_at,
        message=message,
        content_hash=content_hash,
        role=role,
        grant_id=grant_id,
        content=_content(pk, content_hash),
    )


def version_fetch_for_user(*, user: Viewer, version_id: Any) -> VersionFetch:
    """Version `version_id` with its content, if `user` may read its prompt; else NotFound."""
    return _fetch(user, "id", [object_id_parse(version_id)])


def label_version_fetch_for_user(*, user: Viewer, prompt_id: Any, name: str) -> VersionFetch:
    """The version label `name` of prompt `prompt_id` points at, with its content, if `user`
    may read the prompt; NotFound for an unknown prompt or label and for "not yours" alike."""
    return _fetch(user, "label", [object_id_parse(prompt_id), name])
