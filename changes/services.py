"""Writes of change requests (docs/design.md, Prompt change review). Each service is one
transaction with an explicit acting user and an access the caller checked through
`changes.selectors`; reviews, annotations, replies and verdicts are written by the review
desk's own services, versions and label moves by the playground's.
"""

import json
import logging
import re
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.mail import send_mail
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from common.exceptions import text_input
from common.limits import TITLE_MAX_CHARS
from evals.exceptions import EvalInvalid
from evals.graders import grader_specs_parse
from evals.selectors import testset_list_for_prompt
from playground.exceptions import ContentInvalid
from playground.models import Label, LabelMove, Prompt, PromptVersion, Role
from playground.selectors import PromptAccess, prompt_access_get_for_user, version_content
from playground.services import label_gated_set, label_move, prompt_version_create
from playground.text.content import VersionContent
from reviews.models import Annotation, AnnotationAnchor, Area, DesignDoc, Reply, Review
from reviews.services import (
    annotation_create,
    annotation_update,
    doc_create,
    doc_revision_create,
    reply_create,
    review_create,
    review_submit,
)

from .exceptions import ChangeInvalid, Forbidden, GateFailed, NotFound, RequestClosed
from .gate import GateResult, gate_evaluate
from .models import (
    DESCRIPTION_MAX_CHARS,
    SUGGESTION_MAX_CHARS,
    ChangeNotice,
    ChangeRequest,
    GateRule,
    RequestedReviewer,
    RequestRevision,
    SuggestedEdit,
)
from .rendering import Segment, json_text, segment_of, segments_load, version_render
from .selectors import RequestAccess, request_current

logger = logging.getLogger(__name__)

# Fields a suggested edit may change (the settings section is shown, not edited).
EDITABLE = re.compile(r"^(system|messages\.[0-9]+|tools|response_format)\Z")
ACCEPT_IDS_MAX = 100  # suggestions one accept may apply
MENTION = re.compile(r"(?<![\w@])@([\w.+-]{1,150})")


def _open_check(request: ChangeRequest) -> None:
    if request.status != ChangeRequest.Status.OPEN:
        raise RequestClosed(f"Change request #{request.pk} is {request.status}.")


def _text(value: object, field: str, max_chars: int, *, required: bool = False) -> str:
    return text_input(value, field, max_chars=max_chars, required=required, error=ChangeInvalid)


def _revision_add(
    *, actor: User, request: ChangeRequest, doc: DesignDoc, version: PromptVersion, first: bool
) -> RequestRevision:
    """Render `version` and store it as the document's next revision (re-anchoring follows
    on commit, by the review desk's engine)."""
    rendered = version_render(version_content(version=version))
    if first:
        revision = doc.revisions.get(number=1)
    else:
        revision, created = doc_revision_create(
            actor=actor, doc=doc, body=rendered.text, message=f"v{version.number}"
        )
        if not created:
            raise ChangeInvalid(
                f"version: v{version.number} reads the same as the version under review.",
                field="version",
            )
    return RequestRevision.objects.create(
        request=request,
        revision=revision,
        version=version,
        segments=[s.as_json() for s in rendered.segments],
    )


def _users_with_access(prompt: Prompt, usernames: object, field: str) -> list[User]:
    if usernames is None:
        return []
    if not isinstance(usernames, list) or not all(isinstance(u, str) for u in usernames):
        raise ChangeInvalid(f"{field}: a list of usernames.", field=field)
    if len(usernames) > settings.CHANGE_REVIEWERS_MAX:
        raise ChangeInvalid(f"{field}: at most {settings.CHANGE_REVIEWERS_MAX}.", field=field)
    users = []
    for name in dict.fromkeys(u.strip() for u in usernames if u.strip()):
        user = get_user_model().objects.filter(username=name).first()
        if user is None or not _may_read(user, prompt):
            # The same answer for "no such account" and "cannot read this prompt".
            raise ChangeInvalid(f"{field}: {name!r} has no access to this prompt.", field=field)
        users.append(user)
    return users


def _may_read(user: User, prompt: Prompt) -> bool:
    try:
        prompt_access_get_for_user(user=user, prompt_id=prompt.pk)
    except NotFound:
        return False
    return True


def _request_url(request: ChangeRequest) -> str:
    return reverse("changes:request", args=[request.pk])


@transaction.atomic
def change_open(
    *,
    actor: User,
    access: PromptAccess,
    label_name: str,
    to_version: PromptVersion,
    title: str = "",
    description: str = "",
    reviewers: object = None,
    from_version: PromptVersion | None = None,
) -> ChangeRequest:
    """Open a request to move `label_name` from where it points to `to_version` (editor or
    owner). `from_version`, when given, must be where the label points now. Requested
    reviewers (accounts that can read the prompt) find it in their inbox."""
    if not access.can_edit:
        raise Forbidden("Only the owner or an editor can open a change request.")
    prompt = access.prompt
    label = Label.objects.filter(prompt=prompt, name=label_name).select_related("version").first()
    if label is None:
        raise ChangeInvalid(f"label: no label {label_name!r} on this prompt.", field="label")
    if to_version.prompt_id != prompt.pk:
        raise ChangeInvalid("to: belongs to another prompt.", field="to")
    if from_version is not None and from_version.pk != label.version_id:
        raise ChangeInvalid(
            f"from: {label.name!r} points at v{label.version.number}, not v{from_version.number}.",
            field="from",
        )
    if to_version.pk == label.version_id:
        raise ChangeInvalid(
            f"to: {label.name!r} already points at v{to_version.number}.", field="to"
        )
    title = _text(title, "title", TITLE_MAX_CHARS) or (
        f"Move {label.name} from v{label.version.number} to v{to_version.number}"
    )
    description = _text(description, "description", DESCRIPTION_MAX_CHARS)
    users = [u for u in _users_with_access(prompt, reviewers, "reviewers") if u.pk != actor.pk]
    rendered = version_render(version_content(version=to_version))
    doc, _ = doc_create(
        actor=actor,
        title=title,
        body=rendered.text,
        message=f"v{to_version.number}",
        kind=DesignDoc.Kind.CHANGE,
    )
    request = ChangeRequest.objects.create(
        prompt=prompt,
        label=label,
        from_version=label.version,
        to_version=to_version,
        doc=doc,
        author=actor,
        title=title,
        description=description,
    )
    _revision_add(actor=actor, request=request, doc=doc, version=to_version, first=True)
    RequestedReviewer.objects.bulk_create(RequestedReviewer(request=request, user=u) for u in users)
    ChangeNotice.objects.bulk_create(
        ChangeNotice(
            recipient=u, kind=ChangeNotice.Kind.REVIEW_REQUESTED, request=request, actor=actor
        )
        for u in users
    )
    logger.info("change.opened", extra={"request_id": request.pk, "prompt_id": prompt.pk})
    return request


@transaction.atomic
def change_push(*, actor: User, target: RequestAccess, version: PromptVersion) -> RequestRevision:
    """Put a new version under review: a child of the version now under review (the request's
    author only). Its text becomes the document's next revision and every annotation is
    re-anchored onto it (after commit, by the review desk's engine)."""
    request = ChangeRequest.objects.select_for_update().get(pk=target.request.pk)
    _open_check(request)
    if request.author_id != actor.pk:
        raise Forbidden("Only the request's author can push versions to it.")
    if version.prompt_id != request.prompt_id or version.parent_id != request.to_version_id:
        raise ChangeInvalid(
            "version: must be a child of the version under review.", field="version"
        )
    added = _revision_add(
        actor=actor, request=request, doc=request.doc, version=version, first=False
    )
    ChangeRequest.objects.filter(pk=request.pk).update(
        to_version=version, updated_at=timezone.now()
    )
    logger.info("change.pushed", extra={"request_id": request.pk, "version_id": version.pk})
    return added


# --- reviews on the request -------------------------------------------------------------------


def change_review_start(*, actor: User, target: RequestAccess) -> tuple[Review, bool]:
    """Start (or resume) the actor's review of the request's current revision: a review desk
    `Review`, private while a draft. Any account that can read the prompt may review; after
    submitting, a reviewer starts a new attempt on the same revision (a later verdict counts)."""
    _open_check(target.request)
    current = request_current(request=target.request)
    return review_create(actor=actor, revision=current.revision, again=True)


@transaction.atomic
def change_annotate(
    *,
    actor: User,
    target: RequestAccess,
    review: Review,
    kind: str,
    severity: str,
    body: str,
    area: str = Area.GOALS,
    exact: str | None = None,
    prefix: str = "",
    suffix: str = "",
    start: int | None = None,
    end: int | None = None,
    tradeoff: str = "",
    suggestion: str | None = None,
) -> Annotation:
    """Annotate a passage of the reviewed revision, with the review desk's service (reviewer
    only, draft only), optionally suggesting a replacement text for the passage — which must
    then lie within one editable field of the version (else 400)."""
    _open_check(target.request)
    annotation = annotation_create(
        actor=actor,
        review=review,
        area=area,
        kind=kind,
        severity=severity,
        body=body,
        exact=exact,
        prefix=prefix,
        suffix=suffix,
        start=start,
        end=end,
        tradeoff=tradeoff,
    )
    if suggestion is not None:
        if not isinstance(suggestion, str) or len(suggestion) > SUGGESTION_MAX_CHARS:
            raise ChangeInvalid(
                f"suggestion: text of at most {SUGGESTION_MAX_CHARS} characters.",
                field="suggestion",
            )
        if annotation.start is None or annotation.end is None:
            raise ChangeInvalid("suggestion: needs a passage to replace.", field="suggested_edit")
        stored = RequestRevision.objects.get(revision_id=annotation.revision_id)
        _editable_segment(segments_load(stored.segments), annotation.start, annotation.end)
        SuggestedEdit.objects.create(
            annotation=annotation, request=target.request, text=suggestion.replace("\r\n", "\n")
        )
    return annotation


def _editable_segment(segments: tuple[Segment, ...], start: int, end: int) -> Segment:
    segment = segment_of(segments, start, end)
    if segment is None:
        raise ChangeInvalid(
            "suggestion: the passage must lie within one field (the system text, one message, "
            "the tools or the response format).",
            field="suggestion",
        )
    if not EDITABLE.match(segment.field):
        raise ChangeInvalid(
            "suggestion: the model and parameters section cannot be edited by a suggestion.",
            field="suggestion",
        )
    return segment


@transaction.atomic
def change_review_submit(
    *,
    actor: User,
    target: RequestAccess,
    review: Review,
    verdict: str | None,
    summary: str | None = None,
) -> Review:
    """Submit a review with its verdict (approve, request-changes or comment) through the review
    desk's service; the request's author finds it in their inbox."""
    _open_check(target.request)
    if verdict == "approve" and actor.pk == target.request.author_id:
        raise ChangeInvalid("verdict: you cannot approve your own request.", field="verdict")
    review, changed = review_submit(actor=actor, review=review, summary=summary, verdict=verdict)
    if changed and actor.pk != target.request.author_id:
        ChangeNotice.objects.create(
            recipient_id=target.request.author_id,
            kind=ChangeNotice.Kind.REVIEW_SUBMITTED,
            request=target.request,
            actor=actor,
        )
    return review


def change_annotation_status(
    *, actor: User, target: RequestAccess, annotation: Annotation, status: str
) -> Annotation:
    """Resolve, drop or reopen an annotation (the request's author or the annotation's)."""
    return annotation_update(actor=actor, annotation=annotation, changes={"status": status})


@transaction.atomic
def change_reply(*, actor: User, target: RequestAccess, annotation: Annotation, body: str) -> Reply:
    """Reply under an annotation (the review desk's service); every @username who can read the
    prompt is notified in the inbox and by email (Django's email backend), after commit."""
    reply = reply_create(actor=actor, annotation=annotation, body=body)
    names = list(dict.fromkeys(MENTION.findall(reply.body)))[: settings.CHANGE_MENTIONS_MAX]
    request = target.request
    url = _request_url(request)
    for user in get_user_model().objects.filter(username__in=names).exclude(pk=actor.pk):
        if not _may_read(user, request.prompt):
            continue
        ChangeNotice.objects.create(
            recipient=user,
            kind=ChangeNotice.Kind.MENTION,
            request=request,
            actor=actor,
            annotation=annotation,
        )
        if user.email:
            _mail_on_commit(
                to=user.email,
                subject=f"{actor.get_username()} mentioned you on change request #{request.pk}",
                body=f"{actor.get_username()} wrote on “{request.title}”:\n\n{reply.body}\n\n"
                f"{url}\n",
            )
    return reply


def _mail_on_commit(*, to: str, subject: str, body: str) -> None:
    def send() -> None:
        try:
            send_mail(subject, body, None, [to])
        except OSError:  # an unreachable mail server must not fail the reply that was saved
            logger.warning("change.mention_mail_failed", exc_info=True)

    transaction.on_commit(send)


# --- suggested edits -------------------------------------------------------------------------


@dataclass(frozen=True)
class AcceptResult:
    version: PromptVersion  # the child version with the edits applied
    revision: RequestRevision  # the request's new revision (rendering it)
    accepted: list[int]  # suggestion ids


def _edit_field(content: VersionContent, field: str, text: str) -> None:
    """Put `text` back into `content`'s `field` (JSON fields must still parse)."""
    if field == "system":
        content["system"] = text
    elif field.startswith("messages."):
        content["messages"][int(field.split(".")[1])]["content"] = text
    else:
        try:
            value = json.loads(text)
        except ValueError as error:
            raise ChangeInvalid(
                f"suggestion: the edited {field} is not JSON ({error}).", field="suggestion"
            ) from None
        if field == "tools":
            content["tools"] = value
        else:
            content["response_format"] = value


def _field_text(content: VersionContent, field: str) -> str:
    if field == "system":
        return content["system"].replace("\r\n", "\n").replace("\r", "\n")
    if field.startswith("messages."):
        text = content["messages"][int(field.split(".")[1])]["content"]
        return text.replace("\r\n", "\n").replace("\r", "\n")
    return json_text(content["tools"] if field == "tools" else content["response_format"])


@transaction.atomic
def suggestions_accept(
    *, actor: User, target: RequestAccess, ids: list[int], message: str = ""
) -> AcceptResult:
    """Apply one or several pending suggestions at once (the request's author only): one child
    of the version under review is saved through the playground with every edit applied where
    its annotation sits now, then pushed to the request, which re-anchors the other
    annotations. Each edit must lie within one field and edits may not overlap (400)."""
    request = ChangeRequest.objects.select_for_update().get(pk=target.request.pk)
    _open_check(request)
    if request.author_id != actor.pk:
        raise Forbidden("Only the request's author can accept suggestions.")
    if not ids or not isinstance(ids, list) or len(ids) > ACCEPT_IDS_MAX:
        raise ChangeInvalid(f"ids: one to {ACCEPT_IDS_MAX} suggestion ids.", field="ids")
    suggestions = list(
        SuggestedEdit.objects.select_for_update()
        .filter(
            request=request,
            pk__in=ids,
            annotation__review__status=Review.Status.SUBMITTED,
        )
        .select_related("annotation")
    )
    if len(suggestions) != len(set(ids)):
        raise ChangeInvalid("ids: no such suggestion on this request.", field="ids")
    if any(s.status != SuggestedEdit.Status.PENDING for s in suggestions):
        raise ChangeInvalid("ids: a suggestion was already accepted or rejected.", field="ids")
    current = request_current(request=request)
    segments = segments_load(current.segments)
    anchors = {
        a.annotation_id: a
        for a in AnnotationAnchor.objects.filter(
            revision_id=current.revision_id,
            annotation_id__in=[s.annotation_id for s in suggestions],
        )
    }
    edits: dict[str, list[tuple[int, int, str]]] = {}
    for suggestion in suggestions:
        anchor = anchors.get(suggestion.annotation_id)
        if anchor is None or anchor.start is None or anchor.end is None:
            raise ChangeInvalid(
                f"ids: suggestion {suggestion.pk}'s passage is not in the version under review "
                "(orphaned); re-attach it first.",
                field="ids",
            )
        segment = _editable_segment(segments, anchor.start, anchor.end)
        edits.setdefault(segment.field, []).append(
            (anchor.start - segment.start, anchor.end - segment.start, suggestion.text)
        )
    content = version_content(version=current.version)
    for field, spans in edits.items():
        spans.sort()
        for (_, end_a, _), (start_b, _, _) in zip(spans, spans[1:], strict=False):
            if start_b < end_a:
                raise ChangeInvalid("ids: two suggestions edit overlapping passages.", field="ids")
        text = _field_text(content, field)
        for start, end, replacement in reversed(spans):
            text = text[:start] + replacement + text[end:]
        _edit_field(content, field, text)
    names = ", ".join(f"#{s.pk}" for s in suggestions)
    try:
        saved = prompt_version_create(
            actor=actor,
            prompt=request.prompt,
            parent=current.version,
            content=content,
            message=(message or f"Accept suggestions {names} (change request #{request.pk})")[:200],
        )
    except ContentInvalid as error:
        raise ChangeInvalid(f"suggestion: {error.message}", field="suggestion") from None
    if saved.unchanged:
        raise ChangeInvalid("ids: the suggestions change nothing.", field="ids")
    revision = _revision_add(
        actor=actor, request=request, doc=request.doc, version=saved.version, first=False
    )
    ChangeRequest.objects.filter(pk=request.pk).update(
        to_version=saved.version, updated_at=timezone.now()
    )
    now = timezone.now()
    SuggestedEdit.objects.filter(pk__in=[s.pk for s in suggestions]).update(
        status=SuggestedEdit.Status.ACCEPTED,
        decided_by=actor,
        decided_at=now,
        version=saved.version,
    )
    for suggestion in suggestions:
        annotation_update(
            actor=actor, annotation=suggestion.annotation, changes={"status": "resolved"}
        )
    logger.info(
        "change.suggestions_accepted",
        extra={"request_id": request.pk, "version_id": saved.version.pk, "count": len(suggestions)},
    )
    return AcceptResult(
        version=saved.version, revision=revision, accepted=[s.pk for s in suggestions]
    )


@transaction.atomic
def suggested_edit_reject(
    *, actor: User, target: RequestAccess, suggestion_id: object
) -> SuggestedEdit:
    """Reject a pending suggestion (the request's author); the annotation and its thread stay."""
    request = target.request
    _open_check(request)
    if request.author_id != actor.pk:
        raise Forbidden("Only the request's author can reject suggestions.")
    suggestion = (
        SuggestedEdit.objects.select_for_update()
        .filter(
            request=request,
            pk=suggestion_id if isinstance(suggestion_id, int) else -1,
            annotation__review__status=Review.Status.SUBMITTED,
        )
        .first()
    )
    if suggestion is None:
        raise NotFound
    if suggestion.status != SuggestedEdit.Status.PENDING:
        raise ChangeInvalid("This suggestion was already decided.", field="suggested_edit")
    suggestion.status = SuggestedEdit.Status.REJECTED
    suggestion.decided_by = actor
    suggestion.decided_at = timezone.now()
    suggestion.save(update_fields=["status", "decided_by", "decided_at"])
    return suggestion


# --- merge -----------------------------------------------------------------------------------


@transaction.atomic
def change_merge(*, actor: User, target: RequestAccess) -> ChangeRequest:
    """Move the label to the version under review — only when every gate rule holds
    (`gate_evaluate`, else GateFailed naming the failing rules, 409) — by the playground's
    compare-and-set from where it pointed when the request was opened (a label moved since is
    LabelConflict, 409). The move is logged "via change request #N". Owner or editor."""
    request = ChangeRequest.objects.select_for_update().get(pk=target.request.pk)
    _open_check(request)
    if not target.access.can_edit:
        raise Forbidden("Only the owner or an editor can merge a change request.")
    result: GateResult = gate_evaluate(request=request)
    if not result.holds:
        raise GateFailed(result.failing_message())
    label = Label.objects.get(pk=request.label_id)
    label_move(
        actor=actor,
        prompt=request.prompt,
        name=label.name,
        version=request.to_version,
        expected=request.from_version,
        expected_given=True,
        via=f"change request #{request.pk}",
        gate_cleared=label.gated,
    )
    move = LabelMove.objects.filter(label_id=label.pk).order_by("-id").first()
    assert move is not None
    now = timezone.now()
    ChangeRequest.objects.filter(pk=request.pk).update(
        status=ChangeRequest.Status.MERGED,
        merged_at=now,
        merged_by=actor,
        merge_move=move,
        updated_at=now,
    )
    request.refresh_from_db()
    logger.info("change.merged", extra={"request_id": request.pk, "move_id": move.pk})
    return request


@transaction.atomic
def change_close(*, actor: User, target: RequestAccess) -> ChangeRequest:
    """Close without merging (the request's author or the prompt's owner)."""
    request = ChangeRequest.objects.select_for_update().get(pk=target.request.pk)
    _open_check(request)
    if actor.pk not in (request.author_id, request.prompt.owner_id):
        raise Forbidden("Only the request's author or the prompt's owner can close it.")
    ChangeRequest.objects.filter(pk=request.pk).update(
        status=ChangeRequest.Status.CLOSED, updated_at=timezone.now()
    )
    request.refresh_from_db()
    return request


# --- gate rules ------------------------------------------------------------------------------


@transaction.atomic
def gate_rules_set(
    *,
    actor: User,
    access: PromptAccess,
    label_name: str,
    required_approvals: object = 1,
    required_reviewers: object = None,
    no_blockers: object = True,
    eval_testset: object = None,
    eval_graders: object = None,
    eval_threshold: object = None,
) -> GateRule:
    """Set a protected label's gate rules (owner only) and gate the label: from now on it moves
    only by a merged change request whose rules hold (or an owner's logged override)."""
    if access.role != Role.OWNER:
        raise Forbidden("Only the owner can set a label's gate rules.")
    prompt = access.prompt
    if (
        isinstance(required_approvals, bool)
        or not isinstance(required_approvals, int)
        or not 0 <= required_approvals <= 20
    ):
        raise ChangeInvalid(
            "required_approvals: a whole number from 0 to 20.", field="required_approvals"
        )
    if not isinstance(no_blockers, bool):
        raise ChangeInvalid("no_blockers: true or false.", field="no_blockers")
    reviewers = _users_with_access(prompt, required_reviewers, "required_reviewers")
    testset = None
    graders: list[dict[str, Any]] = []
    threshold: float | None = None
    if eval_testset is not None:
        testset = (
            testset_list_for_prompt(prompt_id=prompt.pk)
            .filter(pk=eval_testset if isinstance(eval_testset, int) else -1)
            .first()
        )
        if testset is None:
            raise ChangeInvalid(
                "eval_testset: no such test set of this prompt.", field="eval_testset"
            )
        if (
            isinstance(eval_threshold, bool)
            or not isinstance(eval_threshold, int | float)
            or not 0 <= eval_threshold <= 1
        ):
            raise ChangeInvalid("eval_threshold: a pass rate from 0 to 1.", field="eval_threshold")
        threshold = float(eval_threshold)
        try:
            specs = grader_specs_parse(
                eval_graders or [], where_prefix="eval_graders", allow_empty=True
            )
        except EvalInvalid as error:
            raise ChangeInvalid(error.message, field=error.field) from None
        graders = [s.as_json() for s in specs]
    elif eval_threshold is not None or eval_graders:
        raise ChangeInvalid(
            "eval_testset: required with a threshold or graders.", field="eval_testset"
        )
    label_gated_set(actor=actor, prompt=prompt, name=label_name, gated=True)
    label = Label.objects.get(prompt=prompt, name=label_name)
    rule, _ = GateRule.objects.update_or_create(
        label=label,
        defaults={
            "required_approvals": required_approvals,
            "no_blockers": no_blockers,
            "eval_testset": testset,
            "eval_graders": graders,
            "eval_threshold": threshold,
            "updated_by": actor,
        },
    )
    rule.required_reviewers.set(reviewers)
    logger.info("change.gate_set", extra={"prompt_id": prompt.pk, "label": label_name})
    return rule


@transaction.atomic
def gate_rules_delete(*, actor: User, access: PromptAccess, label_name: str) -> None:
    """Remove a label's gate rules and lift its gate (owner only)."""
    if access.role != Role.OWNER:
        raise Forbidden("Only the owner can remove a label's gate rules.")
    label_gated_set(actor=actor, prompt=access.prompt, name=label_name, gated=False)
    GateRule.objects.filter(label__prompt=access.prompt, label__name=label_name).delete()


@transaction.atomic
def notices_mark_read(*, actor: User) -> int:
    return ChangeNotice.objects.filter(recipient_id=actor.pk, read_at__isnull=True).update(
        read_at=timezone.now()
    )
