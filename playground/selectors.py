"""Reads of the playground, always scoped to the requesting user.

Access: the owner, or an account with an active grant (viewer or editor). Every view and API
call goes through `prompt_get_for_user` / `version_get_for_user`, which check the database in
the same request, so a revoked grant stops working on the very next request. Anything a user may
not see raises NotFound, exactly like a missing id. Share links are resolved separately
(`share_link_resolve`): a link opens one version, never the prompt's other pages.
"""

from dataclasses import dataclass
from datetime import datetime

from django.db import connection
from django.db.models import Q, QuerySet
from django.db.models.expressions import RawSQL
from django.utils import timezone

from accounts.tokens import token_hash
from common.auth import Viewer
from common.exceptions import Forbidden
from common.selectors import object_get_or_not_found, object_id_parse
from textstore.selectors import blob_read

from . import access
from .exceptions import NotFound
from .models import (
    AccessGrant,
    AccessLogEntry,
    Label,
    LabelMove,
    Prompt,
    PromptVersion,
    Role,
    ShareLink,
)
from .text.content import VersionContent

User = Viewer


ROLE_RANK: dict[str, int] = {Role.VIEWER: 1, Role.EDITOR: 2, Role.OWNER: 3}


@dataclass(frozen=True)
class PromptAccess:
    """A prompt with the caller's role on it, checked now, and the grant that gives it (None
    for the owner)."""

    prompt: Prompt
    role: str
    grant: AccessGrant | None

    @property
    def grant_id(self) -> int | None:
        return self.grant.pk if self.grant is not None else None

    @property
    def is_owner(self) -> bool:
        return self.role == Role.OWNER

    @property
    def can_edit(self) -> bool:
        return self.role in (Role.OWNER, Role.EDITOR)


@dataclass(frozen=True)
class VersionAccess:
    """A version and the caller's access to its prompt."""

    version: PromptVersion
    access: PromptAccess


def prompt_list_for_user(
    *, user: User, search: str = "", archived: bool = False
) -> QuerySet[Prompt]:
    """Prompts the user owns: live ones, or the archived ones; `search` matches titles."""
    if not user.is_authenticated:
        return Prompt.objects.none()
    prompts = Prompt.objects.filter(owner=user, archived_at__isnull=not archived)
    if search.strip():
        prompts = prompts.filter(title__icontains=search.strip())
    return prompts.select_related("owner", "question")


def prompt_list_visible(*, user: User, search: str = "") -> QuerySet[Prompt]:
    """Every prompt the user may see: owned, or shared with them by an active grant."""
    if not user.is_authenticated:
        return Prompt.objects.none()
    shared = AccessGrant.objects.filter(access.grant_in_force(), user=user).values("prompt_id")
    prompts = Prompt.objects.filter(Q(owner=user) | Q(pk__in=shared), archived_at__isnull=True)
    if search.strip():
        prompts = prompts.filter(title__icontains=search.strip())
    return prompts.select_related("owner", "question")


def prompt_list_shared_with_user(*, user: User) -> QuerySet[AccessGrant]:
    """Active grants to the user, with their prompts ("Shared with me")."""
    if not user.is_authenticated:
        return AccessGrant.objects.none()
    return (
        AccessGrant.objects.filter(
            access.grant_in_force(), user=user, prompt__archived_at__isnull=True
        )
        .select_related("prompt", "prompt__owner", "prompt__question")
        .order_by("-created_at")
    )


def _role(user: User, prompt: Prompt) -> tuple[str | None, AccessGrant | None]:
    """The user's role on the prompt, checked against the database now (no caching)."""
    if not user.is_authenticated:
        return None, None
    if access.role_decide(user_id=user.pk, owner_id=prompt.owner_id, grant_role=None) == Role.OWNER:
        return Role.OWNER, None
    grant = AccessGrant.objects.filter(access.grant_in_force(), prompt=prompt, user=user).first()
    grant_role = grant.role if grant is not None else None
    role = access.role_decide(user_id=user.pk, owner_id=prompt.owner_id, grant_role=grant_role)
    return (role, grant) if role else (None, None)


def _authorise(user: User, prompt: Prompt, min_role: str) -> PromptAccess:
    role, grant = _role(user, prompt)
    if role is None:
        raise NotFound  # not yours: the same answer as a missing id
    if ROLE_RANK[role] < ROLE_RANK[min_role]:
        raise Forbidden(
            "You have read-only access to this prompt."
            if role == Role.VIEWER
            else "Only the owner can do this."
        )
    return PromptAccess(prompt=prompt, role=role, grant=grant)


def prompt_access_get_for_user(
    *, user: User, prompt_id: object, min_role: str = Role.VIEWER
) -> PromptAccess:
    """The prompt and the user's role on it, if that role is at least `min_role`; NotFound if
    they cannot see it, Forbidden if they can see it but not do this."""
    prompt = object_get_or_not_found(
        Prompt.objects.select_related("owner", "question"), pk=object_id_parse(prompt_id)
    )
    return _authorise(user, prompt, min_role)


def prompt_readable_by(*, user_id: int, prompt: Prompt) -> bool:
    """Whether the user may read `prompt`, as the caller has just read it (with its owner id):
    no query when the user owns it, one for a grant in force otherwise (a worker's check of
    an evaluation's author, who need not be loaded)."""
    if access.role_decide(user_id=user_id, owner_id=prompt.owner_id, grant_role=None):
        return True
    grant = (
        AccessGrant.objects.filter(access.grant_in_force(), prompt=prompt, user_id=user_id)
        .values_list("role", flat=True)
        .first()
    )
    return (
        access.role_decide(user_id=user_id, owner_id=prompt.owner_id, grant_role=grant) is not None
    )


def prompt_get_for_user(*, user: User, prompt_id: object, min_role: str = Role.VIEWER) -> Prompt:
    """`prompt_access_get_for_user` for callers that need only the prompt."""
    return prompt_access_get_for_user(user=user, prompt_id=prompt_id, min_role=min_role).prompt


def version_access_get_for_user(
    *, user: User, version_id: object, min_role: str = Role.VIEWER
) -> VersionAccess:
    """The version and the user's access to its prompt (NotFound / Forbidden as above)."""
    version = object_get_or_not_found(
        PromptVersion.objects.select_related("prompt", "author"), pk=object_id_parse(version_id)
    )
    return VersionAccess(version=version, access=_authorise(user, version.prompt, min_role))


def version_get_for_user(
    *, user: User, version_id: object, min_role: str = Role.VIEWER
) -> PromptVersion:
    return version_access_get_for_user(user=user, version_id=version_id, min_role=min_role).version


def version_in_prompt(*, prompt: Prompt, version_id: object) -> PromptVersion:
    """A version of an already-authorised prompt (for parents, targets, diff partners).

    `version_id` is what addresses carry: `v7` names the version by its number within the
    prompt (what links show); a bare integer is the version's id (older links, form fields).
    """
    if isinstance(version_id, str) and version_id[:1] in ("v", "V"):
        lookup = {"number": object_id_parse(version_id[1:])}
    else:
        lookup = {"pk": object_id_parse(version_id)}
    return object_get_or_not_found(
        PromptVersion.objects.select_related("author"), prompt=prompt, **lookup
    )


def version_number(*, prompt: Prompt, version_id: int | None) -> int | None:
    """The number (v3 is 3) of one of `prompt`'s versions, or None (no id, no such version)."""
    if version_id is None:
        return None
    return (
        PromptVersion.objects.filter(prompt=prompt, pk=version_id)
        .values_list("number", flat=True)
        .first()
    )


def version_id_by_number_for_user(*, user: User, prompt_id: object, number: object) -> int:
    """The id of version `number` (1, 2, 3… in save order) of prompt `prompt_id`, if `user` may
    read the prompt; NotFound for an unknown prompt or number and for "not yours" alike."""
    prompt = prompt_get_for_user(user=user, prompt_id=prompt_id)
    version_id = (
        PromptVersion.objects.filter(prompt=prompt, number=object_id_parse(number))
        .values_list("pk", flat=True)
        .first()
    )
    if version_id is None:
        raise NotFound
    return version_id


def version_tree(*, prompt: Prompt) -> QuerySet[PromptVersion]:
    """All versions of a prompt in save order, with authors, in one query (no texts)."""
    return (
        PromptVersion.objects.filter(prompt=prompt)
        .select_related("author")
        .only(*_TREE_FIELDS)
        .order_by("number")
    )


_TREE_FIELDS = (
    "id",
    "prompt_id",
    "parent_id",
    "number",
    "author__username",
    "created_at",
    "message",
    "content_hash",
    "provider",
    "model",
)


@dataclass(frozen=True)
class TreeVersion:
    """What the version tree shows of one version (no content, no model instance: a tree row
    is built for each of up to PLAYGROUND_TREE_MAX versions)."""

    id: int
    parent_id: int | None
    number: int
    message: str
    author: str
    created_at: datetime


@dataclass(frozen=True)
class VersionWindow:
    """The part of a prompt's history a page draws, in save order (parents before children).

    `versions` holds the newest `newest` versions plus the given version and up to `ancestry`
    of its ancestors; `parent_numbers` the numbers of parents that are not in it (their
    children draw a stub); `total` how many versions the prompt has; `newest_from` the number
    of the oldest of the newest versions (everything from it up is shown).
    """

    versions: list[TreeVersion]
    parent_numbers: dict[int, int]
    total: int
    newest_from: int


def version_window(
    *, prompt: Prompt, newest: int, around: PromptVersion | None = None, ancestry: int = 0
) -> VersionWindow:
    """A bounded window of the version tree, in one query whatever the history's length.

    Numbers run 1..n within a prompt without holes (assigned as max + 1 under a unique
    constraint; versions are never deleted), so the newest row's number is the count.
    The ancestry is walked by a recursive query bounded by `ancestry` steps.
    """
    table = connection.ops.quote_name(PromptVersion._meta.db_table)
    # Table name from model metadata, values as parameters.
    ancestors = (
        f"WITH RECURSIVE up(id, step) AS ("  # noqa: S608
        f" SELECT id, 0 FROM {table} WHERE id = %s AND prompt_id = %s"
        f" UNION ALL"
        f" SELECT v.parent_id, up.step + 1 FROM {table} v JOIN up ON v.id = up.id"
        f" WHERE v.parent_id IS NOT NULL AND up.step < %s"
        f") SELECT id FROM up"
    )
    newest_ids = (
        PromptVersion.objects.filter(prompt=prompt).order_by("-number").values("id")[:newest]
    )
    wanted = Q(pk__in=newest_ids)
    if around is not None:
        # Values as parameters; the SQL text is built from model metadata only.
        wanted |= Q(pk__in=RawSQL(ancestors, (around.pk, prompt.pk, ancestry)))  # noqa: S611
    found = (
        PromptVersion.objects.filter(wanted, prompt=prompt)
        .order_by("number")
        .values_list(
            "id",
            "parent_id",
            "number",
            "message",
            "author__username",
            "created_at",
            "parent__number",
        )
    )
    rows, parent_of = [], {}
    for id_, parent_id, number, message, author, created_at, parent_number in found:
        rows.append(TreeVersion(id_, parent_id, number, message, author, created_at))
        parent_of[parent_id] = parent_number
    shown = {v.id for v in rows}
    parent_numbers = {
        parent_id: number
        for parent_id, number in parent_of.items()
        if parent_id is not None and parent_id not in shown
    }
    total = rows[-1].number if rows else 0
    newest_from = max(total - newest + 1, 1)
    return VersionWindow(
        versions=rows, parent_numbers=parent_numbers, total=total, newest_from=newest_from
    )


def version_newest(*, prompt: Prompt) -> PromptVersion:
    """The prompt's newest version (every prompt has one: it is created with v1)."""
    version = (
        PromptVersion.objects.select_related("author")
        .filter(prompt=prompt)
        .order_by("-number")
        .first()
    )
    if version is None:
        raise NotFound
    return version


def label_list(*, prompt: Prompt) -> QuerySet[Label]:
    """The prompt's labels by name, each with its version (and that version's author)."""
    return (
        Label.objects.filter(prompt=prompt)
        .select_related("version", "version__author")
        .order_by("name")
    )


def label_moves(*, prompt: Prompt, limit: int = 50) -> QuerySet[LabelMove]:
    """The newest moves of the prompt's labels (the append-only log), with who and where."""
    return (
        LabelMove.objects.filter(label__prompt=prompt)
        .select_related("label", "actor", "from_version", "to_version")
        .order_by("-moved_at", "-id")[:limit]
    )


def label_main(*, prompt: Prompt) -> Label | None:
    return Label.objects.filter(prompt=prompt, name="main").select_related("version").first()


def version_content(*, version: PromptVersion) -> VersionContent:
    """The version's full content in the §8 shape, texts read back from textstore."""
    return {
        "provider": version.provider,
        "model": version.model,
        "system": blob_read(sha=version.system_sha),
        "messages": [
            {"role": m["role"], "content": blob_read(sha=m["sha"])} for m in version.messages
        ],
        "params": version.params,
        "tools": version.tools,
        "response_format": version.response_format,
        "variables": version.variables,
    }


def share_link_get_for_user(*, user: User, link_id: object) -> ShareLink:
    """A link by id, for its prompt's owner only: anyone else gets NotFound or Forbidden
    exactly as for the prompt itself."""
    link = object_get_or_not_found(
        ShareLink.objects.select_related("prompt"), pk=object_id_parse(link_id)
    )
    _authorise(user, link.prompt, Role.OWNER)
    return link


def share_link_list(*, prompt: Prompt) -> QuerySet[ShareLink]:
    return ShareLink.objects.filter(prompt=prompt).select_related("version", "created_by")


def grant_list(*, prompt: Prompt) -> QuerySet[AccessGrant]:
    return (
        AccessGrant.objects.filter(access.grant_in_force(), prompt=prompt)
        .select_related("user")
        .order_by("user__username")
    )


def access_log(*, prompt: Prompt, limit: int = 50) -> QuerySet[AccessLogEntry]:
    return (
        AccessLogEntry.objects.filter(prompt=prompt)
        .select_related("user", "link", "grant")
        .order_by("-at", "-id")[:limit]
    )


def share_link_resolve(*, token: str) -> ShareLink | None:
    """The live link for `token`, or None (unknown, revoked or expired — all alike).

    The token is hashed and looked up by its SHA-256, so the time taken does not depend on how
    many leading characters of a guess match a stored token.
    """
    if not isinstance(token, str) or not 8 <= len(token) <= 128 or not token.isascii():
        return None
    link = (
        ShareLink.objects.select_related("prompt", "prompt__owner", "version")
        .filter(token_hash=token_hash(token), revoked_at__isnull=True)
        .first()
    )
    if link is None or link.prompt.archived_at is not None:
        return None
    if link.expires_at is not None and link.expires_at <= timezone.now():
        return None
    return link


def share_link_ended(*, token: str) -> str:
    """Why a token that opens nothing once did: "revoked" or "expired" (its link, on a prompt
    still live), else "" (never a link, or its prompt is archived). Says nothing more, so a
    holder of a dead link learns only that it ended, not what it showed or whose it was."""
    if not isinstance(token, str) or not 8 <= len(token) <= 128 or not token.isascii():
        return ""
    link = (
        ShareLink.objects.filter(token_hash=token_hash(token), prompt__archived_at__isnull=True)
        .only("revoked_at", "expires_at")
        .first()
    )
    if link is None:
        return ""
    if link.revoked_at is not None:
        return "revoked"
    if link.expires_at is not None and link.expires_at <= timezone.now():
        return "expired"
    return ""


def share_link_version(*, link: ShareLink) -> PromptVersion | None:
    """What the link shows now: its pinned version, or where its label points."""
    if link.version_id is not None:
        return (
            PromptVersion.objects.select_related("author", "parent", "prompt")
            .filter(pk=link.version_id)
            .first()
        )
    label = (
        Label.objects.select_related(
            "version", "version__author", "version__parent", "version__prompt"
        )
        .filter(prompt_id=link.prompt_id, name=link.label_name)
        .first()
    )
    return label.version if label else None
