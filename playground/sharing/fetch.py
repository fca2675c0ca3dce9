"""The hot read path: one version with its content, by id or by label (selectors).

Applications fetch a prompt's `production` version on every call, so these reads are built to
cost one indexed query for the row *and* the caller's access together — with an API key, the
key's look-up too (`version_fetch_for_key`) — plus a lookup of the content by its hash in a
process-local cache:

- The query is raw SQL written once per process, read as one tuple (common.rawsql): the ORM
  would compile the same join and build a model on every request, which profiling showed to
  be most of the request's time.
- Access is decided from that same row (owner, or an active grant), in this request, so a
  revoked grant or key answers on its very next request: nothing about *access* is cached.
- A version's content is immutable and identified by its `content_hash`, so the content as the
  JSON answers carry it (`FetchContent`: each text whole up to PLAYGROUND_JSON_TEXT_HEAD_CHARS
  characters, else its head and length) is cached by that hash, in a cache bounded in bytes
  (PLAYGROUND_FETCH_CACHE_BYTES). It is keyed by content, not by version or user, and only
  consulted after the access check. Long texts are never built whole here: their heads come
  from range reads, and `?full=1` streams them (`FetchContent.as_full_json`).

The ETag names the representation (docs/api.md "Caching"): the version id, every field of the
body and whether texts are cut, never the content hash alone — a revert has the content of an
older version and another id.
"""

from __future__ import annotations

import functools
import hashlib
import json
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db.models import Field

from accounts.authentication import ApiKeyUse, key_lookup, key_lookup_params, key_row_use
from common.auth import Viewer
from common.lru import LruCache
from common.rawsql import column, row_fetch
from common.selectors import object_id_parse
from textstore.exceptions import BlobNotFound
from textstore.selectors import blob_lengths, blob_range, blob_read, blob_stream

from .. import access
from ..exceptions import NotFound
from ..models import AccessGrant, Label, Prompt, PromptVersion, Role
from ..text.ranges import version_text_fields

# Fixed cost counted per cached entry besides its texts (the objects around them).
_ENTRY_OVERHEAD_BYTES = 2048


@dataclass(frozen=True)
class FetchText:
    """One text of a version as JSON answers carry it: whole when it has at most `head`
    characters, else its first `head` characters (`text`) of `total`."""

    field: str  # the range API's name: `system` or `messages.N.content`
    sha: str
    total: int
    text: str

    @property
    def truncated(self) -> bool:
        return self.total > len(self.text)


class _BlobText:
    """A whole stored text for `?full=1`, read a range at a time as the answer is written."""

    def __init__(self, sha: str) -> None:
        self.sha = sha

    def pieces(self) -> Iterator[str]:
        return blob_stream(sha=self.sha, step=int(settings.PLAYGROUND_TEXT_STREAM_CHARS))


def _text_json(text: FetchText, text_url: Callable[[str], str]) -> str | dict[str, Any]:
    if not text.truncated:
        return text.text
    return {
        "text": text.text,
        "truncated": True,
        "total": text.total,
        "text_url": text_url(text.field),
    }


@dataclass(frozen=True)
class FetchContent:
    """A version's content ready for the JSON answers: the §8 shape with each text a
    `FetchText` (system first, then each message's content, in order)."""

    provider: str
    model: str
    texts: tuple[FetchText, ...]
    roles: tuple[str, ...]
    params: Any
    tools: Any
    response_format: Any
    variables: Any
    nbytes: int  # what the cache counts for this entry

    @property
    def truncated(self) -> bool:
        """Some text is longer than its head: the default answer cuts it."""
        return any(text.truncated for text in self.texts)

    def _shape(self, texts: list[Any]) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "model": self.model,
            "system": texts[0],
            "messages": [
                {"role": role, "content": text}
                for role, text in zip(self.roles, texts[1:], strict=True)
            ],
            "params": self.params,
            "tools": self.tools,
            "response_format": self.response_format,
            "variables": self.variables,
        }

    def as_json(self, *, text_url: Callable[[str], str]) -> dict[str, Any]:
        """The content with each long text as `{text, truncated, total, text_url}`, where
        `text_url(field)` is the range URL of that text for this caller."""
        return self._shape([_text_json(text, text_url) for text in self.texts])

    def as_full_json(self) -> dict[str, Any]:
        """The content with every text whole: long ones as streamed strings (common.jsonstream)
        read a range at a time while the answer is written."""
        return self._shape([_BlobText(t.sha) if t.truncated else t.text for t in self.texts])


def _cost(entry: FetchContent) -> int:
    return entry.nbytes


# (content hash, head length) → content as answered; immutable, so never stale.
content_cache: LruCache[FetchContent] = LruCache(
    bound=lambda: int(settings.PLAYGROUND_FETCH_CACHE_BYTES), cost=_cost
)


def _content_build(version: PromptVersion, head: int) -> FetchContent:
    fields = version_text_fields(version=version)
    lengths = blob_lengths(shas=[f.sha for f in fields])
    texts = []
    for f in fields:
        total = lengths.get(f.sha)
        if total is None:
            raise BlobNotFound(f.sha)  # a version never points at a missing text
        if total > head:  # only the head is read: a range read, never the whole text
            text = blob_range(sha=f.sha, offset=0, length=head).text
        else:
            text = blob_read(sha=f.sha) if total else ""
        texts.append(FetchText(field=f.name, sha=f.sha, total=total, text=text))
    rest = [version.params, version.tools, version.response_format, version.variables]
    nbytes = (
        _ENTRY_OVERHEAD_BYTES
        + sum(sys.getsizeof(t.text) + sys.getsizeof(t.sha) for t in texts)
        + 2 * len(json.dumps(rest))
    )
    return FetchContent(
        provider=version.provider,
        model=version.model,
        texts=tuple(texts),
        roles=tuple(str(m["role"]) for m in version.messages),
        params=version.params,
        tools=version.tools,
        response_format=version.response_format,
        variables=version.variables,
        nbytes=nbytes,
    )


def content_key(content_hash: str) -> str:
    """The cache key of a content: its hash and the head length it was cut at."""
    return f"{content_hash}:{int(settings.PLAYGROUND_JSON_TEXT_HEAD_CHARS)}"


def fetch_content(
    *, content_hash: str, version: PromptVersion | None = None, version_id: int | None = None
) -> FetchContent:
    """The content of an authorised version (`version`, or the row `version_id`, read only on
    a cache miss), as the JSON answers carry it."""
    key = content_key(content_hash)
    content = content_cache.get(key)
    if content is None:  # first read of this content in this process: build it once
        if version is None:
            assert version_id is not None
            version = PromptVersion.objects.get(pk=version_id)
        content = _content_build(version, int(settings.PLAYGROUND_JSON_TEXT_HEAD_CHARS))
        content_cache.put(key, content)
    return content


def version_etag(
    *,
    version_id: int,
    parent_id: int | None,
    number: int,
    author: str,
    created_at: datetime,
    message: str,
    content_hash: str,
    prompt_id: int,
    cut_at: int | None,
) -> str:
    """The ETag of a version's JSON answer: a digest of every field of the body and of how
    its texts are cut (`cut_at`: the head length when some text is cut, None when every
    text is whole), so two versions — a revert and its original — never share one, and a
    whole answer (`?full=1`, or a version with no long text) differs from a cut one."""
    parts = [
        version_id,
        parent_id,
        number,
        author,
        created_at.isoformat(),
        message,
        content_hash,
        prompt_id,
        cut_at,
    ]
    digest = hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:32]
    return f'"v{number}-{digest}"'  # the number pages show; the id is in the digest


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
    prepared: FetchContent  # the content as answered (cached by content hash)

    def etag(self, *, full: bool) -> str:
        cut = self.prepared.truncated and not full
        return version_etag(
            version_id=self.id,
            parent_id=self.parent_id,
            number=self.number,
            author=self.author,
            created_at=self.created_at,
            message=self.message,
            content_hash=self.content_hash,
            prompt_id=self.prompt_id,
            cut_at=int(settings.PLAYGROUND_JSON_TEXT_HEAD_CHARS) if cut else None,
        )

    def _body(self, shaped: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": self.id,
            "parent": self.parent_id,
            "number": self.number,
            "author": self.author,
            "created_at": self.created_at,
            "message": self.message,
            "content_hash": self.content_hash,
            "prompt": self.prompt_id,
            "content": shaped,
        }

    def as_json(self, *, text_url: Callable[[str], str]) -> dict[str, Any]:
        """The body of `GET /api/v1/versions/{id}/` (docs/api.md), long texts as heads."""
        return self._body(self.prepared.as_json(text_url=text_url))

    def as_full_json(self) -> dict[str, Any]:
        """The body of `GET /api/v1/versions/{id}/?full=1`: every text whole (streamed)."""
        return self._body(self.prepared.as_full_json())


def version_fetch_etag(*, version: PromptVersion, text_totals: list[int]) -> str:
    """The ETag `GET /api/v1/versions/{id}/` answers for `version` (an authorised one) whose
    texts have `text_totals` characters, as pages show it in the fetch example."""
    head = int(settings.PLAYGROUND_JSON_TEXT_HEAD_CHARS)
    return version_etag(
        version_id=version.pk,
        parent_id=version.parent_id,
        number=version.number,
        author=version.author.username,
        created_at=version.created_at,
        message=version.message,
        content_hash=version.content_hash,
        prompt_id=version.prompt_id,
        cut_at=head if any(total > head for total in text_totals) else None,
    )


# --- the statement: the caller, the version, and the caller's access, in one row -----------

_VERSION_FIELDS = ("id", "prompt", "parent", "number", "created_at", "message", "content_hash")


@functools.cache
def _fields() -> tuple[Field[Any, Any], ...]:
    """The version part's columns' fields, in the statement's order (for converting them)."""
    user_model = PromptVersion._meta.get_field("author").related_model
    assert isinstance(user_model, type)
    return (
        *(column(PromptVersion, name) for name in _VERSION_FIELDS),
        column(Prompt, "owner"),
        column(user_model, "username"),
        column(AccessGrant, "id"),
        column(AccessGrant, "role"),
    )


@functools.cache
def _version_part(kind: str) -> tuple[str, str]:
    """SELECT list and joins reaching the version (`kind` "id": by id; "label": by prompt and
    label name) and the caller's active grant on its prompt, from a FROM clause in which the
    caller's user row is `u`. Left joins throughout, so a missing version is a row of NULLs
    after the caller's part (the key look-up still answers 401 for a bad key first)."""
    version = PromptVersion._meta.db_table
    prompt = Prompt._meta.db_table
    grant = AccessGrant._meta.db_table
    label = Label._meta.db_table
    fields = _fields()
    author = fields[8].model._meta.db_table
    select = ", ".join(
        f"{alias}.{f.column}" for alias, f in zip("vvvvvvvpagg", fields, strict=True)
    )
    prompt_fk = column(PromptVersion, "prompt").column
    author_fk = column(PromptVersion, "author").column
    g_prompt, g_user = (column(AccessGrant, name).column for name in ("prompt", "user"))
    if kind == "id":
        reach = f" LEFT JOIN {version} v ON v.id = %s"
    else:
        l_prompt, l_name, l_version = (
            column(Label, name).column for name in ("prompt", "name", "version")
        )
        reach = (
            f" LEFT JOIN {label} l ON l.{l_prompt} = %s AND l.{l_name} = %s"
            f" LEFT JOIN {version} v ON v.id = l.{l_version}"
        )
    # Table and column names come from model metadata; every value is a query parameter.
    joins = (
        reach + f" LEFT JOIN {prompt} p ON p.id = v.{prompt_fk}"
        f" LEFT JOIN {author} a ON a.id = v.{author_fk}"
        f" LEFT JOIN {grant} g ON g.{g_prompt} = v.{prompt_fk} AND g.{g_user} = u.id"
        f" AND {access.grant_in_force_sql('g')}"
    )
    return select, joins


@functools.cache
def _user_statement(kind: str) -> str:
    """For a caller known already (a session): the caller's row by id."""
    select, joins = _version_part(kind)
    user = _fields()[8].model._meta.db_table
    return f"SELECT {select} FROM {user} u{joins} WHERE u.id = %s"  # noqa: S608


@functools.cache
def _key_statement(kind: str) -> str:
    """For a request signed with an API key: the key's look-up and the version together."""
    lookup = key_lookup()
    select, joins = _version_part(kind)
    return (
        f"SELECT {lookup.select}, {select} FROM {lookup.from_}{joins}"  # noqa: S608
        f" WHERE {lookup.where}"
    )


def _version(user_id: int, values: tuple[Any, ...]) -> VersionFetch:
    (pk, prompt_id, parent_id, number, created_at, message, content_hash) = values[:7]
    owner_id, author, grant_id, grant_role = values[7:]
    if pk is None:
        raise NotFound
    role = access.role_decide(user_id=user_id, owner_id=owner_id, grant_role=grant_role)
    if role is None:
        raise NotFound  # not yours: the same answer as a missing id
    if role == Role.OWNER:
        grant_id = None
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
        prepared=fetch_content(content_hash=content_hash, version_id=pk),
    )


def _target(kind: str, params: list[Any]) -> list[Any]:
    """The version part's parameters; an id that cannot be one matches nothing (ids are
    positive), so the caller's part still decides 401 before the 404."""
    try:
        return [object_id_parse(params[0]), *params[1:]]
    except NotFound:
        return [0, *params[1:]]


def _fetch(user: Viewer, kind: str, params: list[Any]) -> VersionFetch:
    if not user.is_authenticated:
        raise NotFound
    row = row_fetch(_user_statement(kind), [*_target(kind, params), user.pk], _fields())
    if row is None:
        raise NotFound
    return _version(user.pk, row)


def version_fetch_for_user(*, user: Viewer, version_id: Any) -> VersionFetch:
    """Version `version_id` with its content, if `user` may read its prompt; else NotFound."""
    return _fetch(user, "id", [version_id])


def label_version_fetch_for_user(*, user: Viewer, prompt_id: Any, name: str) -> VersionFetch:
    """The version label `name` of prompt `prompt_id` points at, with its content, if `user`
    may read the prompt; NotFound for an unknown prompt or label and for "not yours" alike."""
    return _fetch(user, "label", [prompt_id, name])


@dataclass(frozen=True)
class KeyedFetch:
    """A fetch signed with an API key: who the key belongs to, the key, and the version."""

    user: User
    key: ApiKeyUse
    version: VersionFetch


@functools.cache
def _key_fields() -> tuple[Field[Any, Any] | None, ...]:
    return (*key_lookup().fields, *_fields())


# Called with the key's user and key once the key is good, before the version's access decides:
# the API's throttles (playground/api/fetch.py), which DRF checks before its view's 404.
Admit = Callable[[User, ApiKeyUse], None]


def _fetch_with_key(key: str, kind: str, params: list[Any], admit: Admit | None) -> KeyedFetch:
    lookup = key_lookup()
    given = key_lookup_params(key=key)
    row = row_fetch(
        _key_statement(kind),
        [*given.select, *_target(kind, params), *given.where],
        _key_fields(),
    )
    user, use = key_row_use(row)  # 401 for an unknown or expired key, before any 404
    assert row is not None
    if admit is not None:
        admit(user, use)
    version = _version(user.pk, row[len(lookup.fields) :])
    return KeyedFetch(user=user, key=use, version=version)


def version_fetch_for_key(*, key: str, version_id: Any, admit: Admit | None = None) -> KeyedFetch:
    """`version_fetch_for_user` for the owner of API key `key`, from one query with the key's
    look-up (AuthenticationFailed for a bad key, then `admit`'s error, then NotFound as
    there)."""
    return _fetch_with_key(key, "id", [version_id], admit)


def label_version_fetch_for_key(
    *, key: str, prompt_id: Any, name: str, admit: Admit | None = None
) -> KeyedFetch:
    """`label_version_fetch_for_user` for the owner of API key `key`, in one query."""
    return _fetch_with_key(key, "label", [prompt_id, name], admit)
