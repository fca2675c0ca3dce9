"""Writes of the playground. Each service is one transaction with an explicit acting user."""

import logging
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from accounts.tokens import token_generate, token_hash
from common.auth import Viewer
from common.exceptions import Forbidden
from common.limits import MESSAGE_MAX_CHARS, TITLE_MAX_CHARS
from questionbank.models import Question
from textstore.services import blob_put

from .exceptions import ContentInvalid, LabelConflict, LabelGated, NotFound
from .hooks.gates import gate_describe
from .models import (
    LABEL_MOVE_VIA_MAX_CHARS,
    LABEL_NAME_MAX_CHARS,
    OVERRIDE_REASON_MAX_CHARS,
    AccessGrant,
    AccessLogEntry,
    Label,
    LabelMove,
    Prompt,
    PromptVersion,
    Role,
    ShareLink,
    Upload,
)
from .text.content import (
    PreparedContent,
    PreparedVersionContent,
    StoredText,
    VersionContent,
    content_hash,
    content_validate,
)
from .text.uploads import content_prepare, text_bases, upload_objects_delete

logger = logging.getLogger(__name__)

MAIN_LABEL = "main"
LABEL_NAME = re.compile(rf"^[-a-zA-Z0-9_]{{1,{LABEL_NAME_MAX_CHARS}}}\Z")
# Seconds between two access-log rows for one grant polling the fetch API (throttled logging).
ACCESS_LOG_FETCH_RESOLUTION = 60


@dataclass(frozen=True)
class SaveResult:
    """What a save did: the version, whether it is new, and whether `main` followed it.

    `unchanged` means the content equals the parent's: nothing was saved and `version` is the
    parent itself. `main_number` is where `main` points after the save (None without `main`).
    """

    version: PromptVersion
    created: bool
    main_moved: bool
    unchanged: bool = False
    main_number: int | None = None


def _put(text: str | StoredText, base: str | None) -> str:
    # A StoredText was stored (and checked) by content_prepare before this transaction.
    if isinstance(text, StoredText):
        return text.sha256
    return blob_put(text=text, base=base).sha256


def _store_texts(
    frozen: VersionContent | PreparedVersionContent, parent: PromptVersion | None
) -> dict[str, Any]:
    """Put every text into textstore, as a delta against the parent's same field if any."""
    system_base, bases = text_bases(parent, len(frozen["messages"]))
    system = _put(frozen["system"], system_base)
    messages = [
        {"role": message["role"], "sha": _put(message["content"], base)}
        for message, base in zip(frozen["messages"], bases, strict=True)
    ]
    return {"system_sha": system, "messages": messages}


def _uploads_spend(*, actor: User, prepared: PreparedContent) -> None:
    """Mark the uploads whose texts `prepared` stored used, inside the save's transaction, and
    delete their objects once it commits: a save that fails or is killed before its commit
    leaves them usable (issue #31). One used meanwhile by another save refuses this one."""
    now = timezone.now()
    for field, upload_id in prepared.uploads:
        if not Upload.objects.filter(pk=upload_id, owner=actor, used_at__isnull=True).update(
            used_at=now
        ):
            raise ContentInvalid(f"{field}: this upload was already used.", field=field)
    ids = [upload_id for _, upload_id in prepared.uploads]
    keys = list(Upload.objects.filter(pk__in=ids).values_list("object_key", flat=True))
    if keys:
        transaction.on_commit(lambda: upload_objects_delete(keys=keys))


def _canonical(
    content: object, *, actor: User
) -> tuple[VersionContent | PreparedVersionContent, str]:
    """Validated content and its hash: raw JSON is checked here; PreparedContent (texts stored
    by the upload flow before the transaction) was checked by content_prepare, and the uploads
    it used are spent here, in the caller's transaction."""
    if isinstance(content, PreparedContent):
        _uploads_spend(actor=actor, prepared=content)
        return content.canonical, content.digest
    canonical = content_validate(content)
    return canonical, content_hash(canonical)


def _insert_version(
    *,
    prompt: Prompt,
    parent: PromptVersion | None,
    author: User,
    frozen: VersionContent | PreparedVersionContent,
    digest: str,
    message: str,
) -> tuple[PromptVersion, bool]:
    """Insert with the next number, or return the twin (same parent, same content).

    Numbers are taken under a row lock on the prompt (SQLite: the IMMEDIATE transaction's
    write lock), so concurrent saves queue for a moment instead of colliding: a save is never
    rejected for a race, however many run at once (docs/design.md, Invariants). Texts are stored
    before
    the lock; they are content-addressed, so a concurrent twin shares them.
    """
    texts = _store_texts(frozen, parent)
    Prompt.objects.select_for_update().filter(pk=prompt.pk).values_list("pk", flat=True).get()
    existing = PromptVersion.objects.filter(
        prompt=prompt, parent=parent, content_hash=digest
    ).first()
    if existing is not None:
        return existing, False
    number = (prompt.versions.aggregate(n=Max("number"))["n"] or 0) + 1
    version = PromptVersion.objects.create(
        prompt=prompt,
        parent=parent,
        number=number,
        author=author,
        message=message,
        content_hash=digest,
        provider=frozen["provider"],
        model=frozen["model"],
        params=frozen["params"],
        tools=frozen["tools"],
        response_format=frozen["response_format"],
        variables=frozen["variables"],
        **texts,
    )
    return version, True


def _label_cas(
    *,
    actor: User,
    label: Label,
    expected_id: int | None,
    version: PromptVersion,
    via: str = "",
    override_reason: str = "",
) -> bool:
    """Move `label` to `version` iff it still points at `expected_id`; log the move (with what
    moved it and an owner's override reason, when there is one)."""
    # A queryset update skips auto_now, so the move time is set here.
    moved = Label.objects.filter(pk=label.pk, version_id=expected_id).update(
        version=version, updated_at=timezone.now()
    )
    if moved:
        LabelMove.objects.create(
            label=label,
            from_version_id=expected_id,
            to_version=version,
            actor=actor,
            via=via,
            override_reason=override_reason,
        )
    return bool(moved)


def prompt_create(
    *,
    actor: User,
    title: str,
    content: object,
    question: Question | None = None,
    message: str = "",
) -> tuple[Prompt, PromptVersion]:
    """A new prompt with its root version and a `main` label pointing at it.

    `content` is as a client sent it (texts inline, or naming uploads: `content_prepare`
    checks and stores those before the transaction) or a stored version's `PreparedContent`.
    """
    prepared = content_prepare(actor=actor, parent=None, content=content)
    title = (title or "").strip()
    if not title or len(title) > TITLE_MAX_CHARS:
        raise ContentInvalid(f"title: must be 1-{TITLE_MAX_CHARS} characters.", field="title")
    with transaction.atomic():
        canonical, digest = _canonical(prepared, actor=actor)
        prompt = Prompt.objects.create(owner=actor, title=title, question=question)
        version, _ = _insert_version(
            prompt=prompt,
            parent=None,
            author=actor,
            frozen=canonical,
            digest=digest,
            message=message or "First version",
        )
        label = Label.objects.create(prompt=prompt, name=MAIN_LABEL, version=version)
        LabelMove.objects.create(label=label, from_version=None, to_version=version, actor=actor)
    logger.info("prompt.created", extra={"prompt_id": prompt.pk, "actor_id": actor.pk})
    return prompt, version


@transaction.atomic
def prompt_update(
    *,
    actor: User,
    prompt: Prompt,
    title: str | None = None,
    archived: bool | None = None,
) -> Prompt:
    """Rename and/or archive (hide from lists) or unarchive a prompt. Owner only. Archiving
    never deletes: versions, labels and links stay, and unarchiving brings it back."""
    if actor.pk != prompt.owner_id:
        raise Forbidden("Only the owner can rename or archive a prompt.")
    changes: dict[str, Any] = {}
    if title is not None:
        title = title.strip()
        if not title or len(title) > TITLE_MAX_CHARS:
            raise ContentInvalid(f"title: must be 1-{TITLE_MAX_CHARS} characters.", field="title")
        changes["title"] = title
    if archived is not None and archived != (prompt.archived_at is not None):
        changes["archived_at"] = timezone.now() if archived else None
    if changes:
        Prompt.objects.filter(pk=prompt.pk).update(**changes)
        for key, value in changes.items():
            setattr(prompt, key, value)
        logger.info("prompt.updated", extra={"prompt_id": prompt.pk, "fields": sorted(changes)})
    return prompt


def prompt_version_create(
    *,
    actor: User,
    prompt: Prompt,
    parent: PromptVersion,
    content: object,
    message: str = "",
) -> SaveResult:
    """Save `content` as a child of `parent`. Never overwrites, never rejects for a race.

    Two saves from one parent make two siblings; identical content under the same parent
    returns the existing version, and content identical to the parent's own creates nothing
    (the parent is returned, `unchanged`). `main` follows the save only if it still points at
    `parent` (compare-and-set): otherwise the save stays a branch. `content` is taken as in
    `prompt_create`: uploads and parent texts it names are resolved before the transaction.
    """
    prepared = content_prepare(actor=actor, parent=parent, content=content)
    if parent.prompt_id != prompt.pk:
        raise ContentInvalid("parent: belongs to another prompt.", field="parent")
    if len(message) > MESSAGE_MAX_CHARS:
        raise ContentInvalid(f"message: at most {MESSAGE_MAX_CHARS} characters.", field="message")
    with transaction.atomic():
        canonical, digest = _canonical(prepared, actor=actor)
        main = (
            Label.objects.filter(prompt=prompt, name=MAIN_LABEL).select_related("version").first()
        )
        if digest == parent.content_hash:
            return SaveResult(
                version=parent,
                created=False,
                main_moved=False,
                unchanged=True,
                main_number=main.version.number if main else None,
            )
        version, created = _insert_version(
            prompt=prompt,
            parent=parent,
            author=actor,
            frozen=canonical,
            digest=digest,
            message=message,
        )
        main_moved = False
        # A gated `main` moves only by a merged change request (docs/design.md), never by a save.
        if created and main is not None and not main.gated:
            main_moved = _label_cas(actor=actor, label=main, expected_id=parent.pk, version=version)
        if created:
            logger.info(
                "prompt_version.created",
                extra={"prompt_id": prompt.pk, "version_id": version.pk, "main_moved": main_moved},
            )
        main_number = None
        if main is not None:
            main_number = (
                version.number
                if main_moved
                else Label.objects.filter(pk=main.pk).values_list("version__number", flat=True)[0]
            )
        return SaveResult(
            version=version, created=created, main_moved=main_moved, main_number=main_number
        )


def _stored_content(version: PromptVersion) -> PreparedContent:
    """`version`'s content with its texts named by sha, never loaded (a 50 MB prompt is copied
    as cheaply as a small one), and its own content hash."""
    return PreparedContent(
        canonical={
            "provider": version.provider,
            "model": version.model,
            "system": StoredText(version.system_sha),
            "messages": [
                {"role": m["role"], "content": StoredText(m["sha"])} for m in version.messages
            ],
            "params": version.params,
            "tools": version.tools,
            "response_format": version.response_format,
            "variables": version.variables,
        },
        digest=version.content_hash,
    )


def prompt_version_revert(
    *,
    actor: User,
    prompt: Prompt,
    target: PromptVersion,
    parent: PromptVersion,
) -> SaveResult:
    """Undo: a new child of `parent` whose content equals `target`'s.

    The texts are `target`'s stored ones, named by sha and never loaded (`_stored_content`).
    """
    if target.prompt_id != prompt.pk:
        raise ContentInvalid("target: belongs to another prompt.", field="target")
    return prompt_version_create(
        actor=actor,
        prompt=prompt,
        parent=parent,
        content=_stored_content(target),
        message=f"Revert to v{target.number}",
    )


@transaction.atomic
def label_move(
    *,
    actor: User,
    prompt: Prompt,
    name: str,
    version: PromptVersion,
    expected: PromptVersion | None = None,
    expected_given: bool = False,
    override: str = "",
    via: str = "",
    gate_cleared: bool = False,
) -> Label:
    """Point label `name` at `version`, creating it if new.

    With `expected_given`, it is a compare-and-set: the label must currently point at
    `expected` (None = must not exist yet), else LabelConflict. Every move is logged, with
    `via` (what moved it: "change request #12") and an override reason.

    A gated label (docs/design.md, Prompt change review) moves only with `gate_cleared`,
    which the service that checked its rules passes (`changes.services.change_merge`): any
    other move is LabelGated (409) naming the rules, for every role, checked before the
    protection. The owner alone may move it directly by giving an `override` reason, which the
    log keeps.
    """
    if not isinstance(name, str) or not LABEL_NAME.match(name):
        raise ContentInvalid(
            f"name: Label name must be 1-{LABEL_NAME_MAX_CHARS} letters, digits, '-' or '_'.",
            field="name",
        )
    if version.prompt_id != prompt.pk:
        raise ContentInvalid("version: belongs to another prompt.", field="version")
    if len(via) > LABEL_MOVE_VIA_MAX_CHARS:
        raise ContentInvalid(f"via: at most {LABEL_MOVE_VIA_MAX_CHARS} characters.", field="via")
    override = (override or "").strip()
    if len(override) > OVERRIDE_REASON_MAX_CHARS:
        raise ContentInvalid(
            f"override: at most {OVERRIDE_REASON_MAX_CHARS} characters.", field="override"
        )
    label = Label.objects.select_for_update().filter(prompt=prompt, name=name).first()
    is_owner = actor.pk == prompt.owner_id
    override_reason = ""
    if label is not None and label.gated and not gate_cleared:
        rules = gate_describe(label_id=label.pk)
        if not override:
            raise LabelGated(
                f"Label {name!r} is gated: it moves only by merging a change request whose "
                f"rules hold. {rules}".strip()
            )
        if not is_owner:
            raise Forbidden(f"Only the owner can override the gate of label {name!r}.")
        override_reason = override
    # A new label named like `production` starts protected; an existing one is protected only
    # while its flag is set (the owner may lift it).
    protected = label.protected if label is not None else name in Label.PROTECTED_NAMES
    # A merged change request whose rules hold moves a gated label for an editor too: the rules
    # are the owner's say (docs/design.md, Prompt change review).
    if not is_owner and protected and not gate_cleared:
        raise Forbidden(f"Only the owner can move the protected label {name!r}.")
    if label is None:
        if expected_given and expected is not None:
            raise LabelConflict(
                f"Label {name!r} does not exist (expected it at v{expected.number})."
            )
        try:
            with transaction.atomic():
                label = Label.objects.create(
                    prompt=prompt,
                    name=name,
                    version=version,
                    protected=name in Label.PROTECTED_NAMES,
                )
        except IntegrityError:
            raise LabelConflict(f"Label {name!r} was created concurrently; reload.") from None
        LabelMove.objects.create(label=label, from_version=None, to_version=version, actor=actor)
        return label
    if expected_given and expected is None:
        raise LabelConflict(f"Label {name!r} already exists: it points at v{label.version.number}.")
    if expected_given:
        expected_id = expected.pk if expected is not None else None
    else:
        expected_id = label.version_id
    if label.version_id == version.pk and expected_id == version.pk:
        return label  # already there: a replayed request is a no-op
    if not _label_cas(
        actor=actor,
        label=label,
        expected_id=expected_id,
        version=version,
        via=via,
        override_reason=override_reason,
    ):
        label.refresh_from_db()
        last = label.moves.select_related("actor").first()
        who = (
            f" ({last.actor.get_username()} moved it at {last.moved_at:%Y-%m-%d %H:%M} UTC)"
            if last is not None
            else ""
        )
        raise LabelConflict(
            f"Label {name!r} moved: it points at v{label.version.number}, "
            f"not the expected version{who}."
        )
    label.refresh_from_db()
    logger.info(
        "label.moved",
        extra={
            "prompt_id": prompt.pk,
            "label": name,
            "actor_id": actor.pk,
            "via": via,
            "override": bool(override_reason),
        },
    )
    return label


@transaction.atomic
def label_protect_set(*, actor: User, prompt: Prompt, name: str, protected: bool) -> Label:
    """Protect (only the owner may move it) or unprotect a label. Owner only; idempotent."""
    if actor.pk != prompt.owner_id:
        raise Forbidden("Only the owner can protect or unprotect a label.")
    label = Label.objects.select_for_update().filter(prompt=prompt, name=name).first()
    if label is None:
        raise NotFound(f"No label {name!r} on this prompt.")
    if label.gated and not protected:
        raise ContentInvalid(
            f"protected: label {name!r} has gate rules; remove them before unprotecting it.",
            field="protected",
        )
    if label.protected != protected:
        Label.objects.filter(pk=label.pk).update(protected=protected)
        label.protected = protected
        logger.info(
            "label.protect_set",
            extra={"prompt_id": prompt.pk, "label": name, "protected": protected},
        )
    return label


@transaction.atomic
def label_gated_set(*, actor: User, prompt: Prompt, name: str, gated: bool) -> Label:
    """Gate a label (it then moves only by a merged change request) or lift the gate. Owner
    only; only a protected label can be gated. Called by the app that owns the rules
    (`changes.services.gate_rules_set`); idempotent."""
    if actor.pk != prompt.owner_id:
        raise Forbidden("Only the owner can set a label's gate rules.")
    label = Label.objects.select_for_update().filter(prompt=prompt, name=name).first()
    if label is None:
        raise NotFound(f"No label {name!r} on this prompt.")
    if gated and not label.protected:
        raise ContentInvalid(
            f"label: {name!r} is not protected; only a protected label takes gate rules.",
            field="label",
        )
    if label.gated != gated:
        Label.objects.filter(pk=label.pk).update(gated=gated)
        label.gated = gated
        logger.info(
            "label.gated_set", extra={"prompt_id": prompt.pk, "label": name, "gated": gated}
        )
    return label


# --- sharing ------------------------------------------------------------------------------

SHARE_TOKEN_PREFIX = "rl_"  # noqa: S105 (a public prefix so secret scanners can spot leaked links)


def _owner_only(actor: User, prompt: Prompt) -> None:
    if prompt.owner_id != actor.pk:
        raise Forbidden("Only the owner can manage sharing.")


@transaction.atomic
def share_link_create(
    *,
    actor: User,
    prompt: Prompt,
    access: str,
    version: PromptVersion | None = None,
    label_name: str = "",
    expires_at: datetime | None = None,
) -> tuple[ShareLink, str]:
    """A new link to one pinned version or to a label. Returns the link and its token.

    The token (256 bits from `secrets`, prefixed `rl_`) is returned once and never stored:
    the row keeps its SHA-256 and a short hint.
    """
    _owner_only(actor, prompt)
    if access not in ShareLink.Access.values:
        raise ContentInvalid("access: must be 'public' or 'login'.", field="access")
    if (version is None) == (not label_name):
        raise ContentInvalid("Give exactly one of version or label.", field="version")
    if version is not None and version.prompt_id != prompt.pk:
        raise ContentInvalid("version: no such version in this prompt.", field="version")
    if label_name and not Label.objects.filter(prompt=prompt, name=label_name).exists():
        raise ContentInvalid(f"label: no label {label_name!r} on this prompt.", field="label")
    if expires_at is not None and expires_at <= timezone.now():
        raise ContentInvalid("expires_at: must be in the future.", field="expires_at")
    token = token_generate(prefix=SHARE_TOKEN_PREFIX)
    link = ShareLink.objects.create(
        prompt=prompt,
        token_hash=token_hash(token),
        token_hint=token[: len(SHARE_TOKEN_PREFIX) + 4],
        access=access,
        version=version,
        label_name=label_name,
        created_by=actor,
        expires_at=expires_at,
    )
    logger.info("link.created", extra={"prompt_id": prompt.pk, "link_id": link.pk})
    return link, token


@transaction.atomic
def share_link_revoke(*, actor: User, link: ShareLink) -> ShareLink:
    """Revoke a link; effective on the next request. Revoking twice is a no-op."""
    _owner_only(actor, link.prompt)
    ShareLink.objects.filter(pk=link.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
    link.refresh_from_db()
    logger.info("link.revoked", extra={"prompt_id": link.prompt_id, "link_id": link.pk})
    return link


@transaction.atomic
def grant_set(*, actor: User, prompt: Prompt, username: str, role: str) -> AccessGrant:
    """Give `username` the role on `prompt` (replacing an active grant with another role)."""
    _owner_only(actor, prompt)
    if role not in (Role.VIEWER, Role.EDITOR):
        raise ContentInvalid("role: must be 'viewer' or 'editor'.", field="role")
    user = get_user_model().objects.filter(username=username, is_active=True).first()
    if user is None:
        raise ContentInvalid(f"username: no account named {username!r}.", field="username")
    if user.pk == prompt.owner_id:
        raise ContentInvalid("username: the owner already has full access.", field="username")
    current = (
        AccessGrant.objects.select_for_update()
        .filter(prompt=prompt, user=user, revoked_at__isnull=True)
        .first()
    )
    if current is not None and current.role == role:
        return current
    if current is not None:
        AccessGrant.objects.filter(pk=current.pk).update(revoked_at=timezone.now())
    grant = AccessGrant.objects.create(prompt=prompt, user=user, role=role, granted_by=actor)
    logger.info("grant.set", extra={"prompt_id": prompt.pk, "user_id": user.pk, "role": role})
    return grant


@transaction.atomic
def grant_revoke(*, actor: User, prompt: Prompt, username: str) -> int:
    """Revoke the user's active grant; effective on the next request. Returns rows changed."""
    _owner_only(actor, prompt)
    changed = AccessGrant.objects.filter(
        prompt=prompt, user__username=username, revoked_at__isnull=True
    ).update(revoked_at=timezone.now())
    logger.info("grant.revoked", extra={"prompt_id": prompt.pk, "changed": changed})
    return changed


def access_log_grant_use(
    *, prompt_id: int, grant_id: int | None, user: User, path: str, throttle: bool = False
) -> None:
    """Record a grantee's visit or API fetch; owners' own (no grant) are not logged.

    With `throttle`, at most one row per ACCESS_LOG_FETCH_RESOLUTION seconds per grant and
    surface: applications poll the fetch API on every call, and one row per request would turn
    the hot read path into a write path. The cache only thins the log: access was checked already.
    """
    if grant_id is None:
        return
    key = f"access-log:{grant_id}:{path}"
    if throttle and not cache.add(key, 1, timeout=ACCESS_LOG_FETCH_RESOLUTION):
        return
    AccessLogEntry.objects.create(
        prompt_id=prompt_id, via=AccessLogEntry.Via.GRANT, grant_id=grant_id, user=user, path=path
    )


def access_log_record(
    *,
    prompt: Prompt,
    via: str,
    user: Viewer | None,
    path: str,
    link: ShareLink | None = None,
    grant: AccessGrant | None = None,
) -> None:
    """Append who opened the prompt through which link or grant (never the token)."""
    AccessLogEntry.objects.create(
        prompt=prompt,
        via=via,
        link=link,
        grant=grant,
        user=user if user is not None and user.is_authenticated else None,
        path=path,
    )


@transaction.atomic
def prompt_copy_from_link(*, actor: User, link: ShareLink, version: PromptVersion) -> Prompt:
    """ "Copy to my prompts": the shared version's content as the root of the actor's new prompt."""
    prompt, _ = prompt_create(
        actor=actor,
        title=f"Copy of {link.prompt.title}"[:TITLE_MAX_CHARS],
        content=_stored_content(version),
        message=f"Copied from a shared link (v{version.number})",
    )
    return prompt
