"""Writes of the critique bridge: the starter prompt, drafts and their suggestions, critique
prompts and their scoring on the practice documents (docs/critique.md).

The playground and the review desk are reached only through their services and selectors. A
draft is a playground run of a critique version over the reviewed revision; it follows the run,
and `draft_sync` turns each complete annotation of the run's reply into a suggestion, anchored
with the review desk's engine. Accepting a suggestion is the review desk's `annotation_create`,
so an accepted suggestion is exactly a draft annotation the reviewer could have typed.
"""

from __future__ import annotations

import logging
from typing import Any

from django.contrib.auth.hashers import make_password
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from evals.models import Evaluation, TestSetRevision
from evals.selectors import testset_list_for_prompt
from evals.services.evaluations import evaluation_create
from evals.services.testsets import RowInput, testset_create
from playground.models import Prompt, PromptVersion, Role, Run
from playground.runs.limits import run_start
from playground.selectors import label_main, version_content
from playground.services import prompt_create, prompt_version_create
from reviews.exceptions import ReviewLocked
from reviews.models import Annotation, DesignDoc, Review
from reviews.seed import SYSTEM_USERNAME
from reviews.selectors import annotation_list, revision_text
from reviews.services import annotation_create

from .anchor import fold, pinned_constraint_index, quote_anchor
from .exceptions import Conflict, CritiqueError, NotFound
from .models import CritiquePrompt, ReviewDraft, Suggestion
from .parsing import Drafted, annotations_parse
from .starter import STARTER_TITLE, critique_variables, starter_content

logger = logging.getLogger(__name__)

PRACTICE_TESTSET_NAME = "The practice documents"
ANSWER_KEY_GRADER = {"type": "answer-key"}

# --- the starter prompt -----------------------------------------------------------------------


def _system_user() -> User:
    user, _ = User.objects.get_or_create(
        username=SYSTEM_USERNAME, defaults={"password": make_password(None), "is_active": True}
    )
    return user


def starter_version_ensure() -> PromptVersion:
    """The starter critique prompt's current version, created on first use.

    The starter is a playground prompt owned by the system account; when `starter.py` changes,
    its new content is saved as a child of the current version (content-addressed: saving the
    same content again creates nothing), so every version a leaderboard scored stays.
    """
    owner = _system_user()
    marker = CritiquePrompt.objects.filter(starter=True).select_related("prompt").first()
    if marker is None:
        try:
            with transaction.atomic():
                prompt, version = prompt_create(
                    actor=owner,
                    title=STARTER_TITLE,
                    content=starter_content(),
                    message="The built-in starter critique prompt",
                )
                CritiquePrompt.objects.create(prompt=prompt, starter=True)
            return version
        except IntegrityError:  # a concurrent first use made it
            marker = CritiquePrompt.objects.select_related("prompt").get(starter=True)
    main = label_main(prompt=marker.prompt)
    if main is None:  # pragma: no cover - prompt_create always makes `main`
        raise NotFound
    return prompt_version_create(
        actor=owner,
        prompt=marker.prompt,
        parent=main.version,
        content=starter_content(),
        message="The starter critique prompt, updated",
    ).version


# --- drafts -----------------------------------------------------------------------------------


def _reviewer_draft_check(actor: User, review: Review) -> None:
    if review.reviewer_id != actor.pk:
        raise NotFound  # only the reviewer drafts, or sees drafts (404 to everyone else)
    if review.status != Review.Status.DRAFT:
        raise ReviewLocked("A submitted review takes no more drafts.")


def draft_create(
    *,
    actor: User,
    review: Review,
    version: PromptVersion,
    provider: object = None,
    model: object = None,
) -> ReviewDraft:
    """Start a run of `version` over the review's revision: the document, its pinned
    constraints and the checklist, for whichever of those variables the version declares.

    Reviewer only, draft reviews only; the run goes through the account's run limits."""
    _reviewer_draft_check(actor, review)
    revision = review.revision
    doc: DesignDoc = revision.doc
    offered = critique_variables(text=revision_text(revision=revision), constraints=doc.constraints)
    declared = version_content(version=version).get("variables") or {}
    with transaction.atomic():
        created = run_start(
            actor=actor,
            version=version,
            variables={k: v for k, v in offered.items() if k in declared},
            provider=provider,
            model=model,
        )
        draft = ReviewDraft.objects.create(review=review, created_by=actor, run=created.run)
    logger.info(
        "critique.draft_created",
        extra={"draft_id": draft.pk, "review_id": review.pk, "run_id": created.run.pk},
    )
    return draft


_RUN_TO_DRAFT = {"queued": "queued", "running": "running"}


def _suggestion(draft: ReviewDraft, item: Drafted, text: str, folded: Any) -> Suggestion:
    selector = quote_anchor(text=text, exact=item.quote, folded=folded) if item.quote else None
    return Suggestion(
        draft=draft,
        position=item.position,
        exact=item.quote,
        prefix=selector.prefix if selector else "",
        suffix=selector.suffix if selector else "",
        anchored=selector is not None,
        start=selector.start if selector else None,
        end=selector.end if selector else None,
        area=item.area,
        kind=item.kind,
        severity=item.severity,
        body=item.body,
        tradeoff=item.tradeoff,
        constraint=item.constraint,
        rank=item.rank,
    )


def _outcome(run_status: str, complete: bool, found: bool, run_error: str) -> tuple[str, str]:
    if run_status in _RUN_TO_DRAFT:
        return _RUN_TO_DRAFT[run_status], ""
    if run_status != "done":
        return ReviewDraft.Status.FAILED, run_error or f"The run was {run_status}."
    if not found:
        return ReviewDraft.Status.FAILED, (
            "The reply is not the JSON the critique schema asks for (no annotations array)."
        )
    if not complete:
        return ReviewDraft.Status.FAILED, "The reply ended before its annotations array closed."
    return ReviewDraft.Status.DONE, ""


def draft_sync(*, draft: ReviewDraft) -> ReviewDraft:
    """Bring a draft up to its run: every annotation completed in the reply since the last
    sync becomes a suggestion, and a finished run finishes the draft (done, or failed with the
    reason). Idempotent and safe to race: the positions are claimed by a conditional update,
    and a finished draft is left alone."""
    if draft.status in ReviewDraft.FINISHED:
        return draft
    run = Run.objects.filter(pk=draft.run_id).only("status", "output", "error").get()
    parsed = annotations_parse(run.output, start=draft.suggestions_made)
    status, error = _outcome(run.status, parsed.complete, parsed.found_array, run.error)
    made = draft.suggestions_made + len(parsed.items)
    fields: dict[str, Any] = {"suggestions_made": made, "status": status, "error": error[:2000]}
    if status in ReviewDraft.FINISHED:
        fields["finished_at"] = timezone.now()
    if made == draft.suggestions_made and status == draft.status:
        return draft
    items = [item for item in parsed.items if item is not None]
    text = revision_text(revision=draft.review.revision) if items else ""
    folded = fold(text) if items else None
    with transaction.atomic():
        claimed = ReviewDraft.objects.filter(
            pk=draft.pk, suggestions_made=draft.suggestions_made, status=draft.status
        ).update(**fields)
        if claimed:
            Suggestion.objects.bulk_create(_suggestion(draft, i, text, folded) for i in items)
    draft.refresh_from_db()
    return draft


# --- suggestions ------------------------------------------------------------------------------

EDIT_FIELDS = {"area", "kind", "severity", "body", "tradeoff", "constraint", "rank"}
PASSAGE_FIELDS = {"quote", "position"}


def _constraint_for(doc: DesignDoc, given: object, kind: str) -> Any:
    """The constraint to give `annotation_create`: the pinned constraint's index when the
    drafted text names one (see `pinned_constraint_index`), an edit's own value as it is."""
    if given in (None, "") or not isinstance(given, str):
        given = given if isinstance(given, int) else ""
    if isinstance(given, int):
        return given
    index = pinned_constraint_index(constraints=list(doc.constraints), given=given, kind=kind)
    if index is not None:
        return index
    return given if kind == Annotation.Kind.CONSTRAINT and given else None


def _locked_pending(suggestion: Suggestion) -> Suggestion:
    locked = Suggestion.objects.select_for_update().get(pk=suggestion.pk)
    if locked.state != Suggestion.State.PENDING:
        raise Conflict(f"This suggestion was already {locked.state}.", field="state")
    return locked


def _passage(suggestion: Suggestion, edits: dict[str, Any]) -> dict[str, Any]:
    quote = edits.get("quote") or {}
    position = edits.get("position") or {}
    if quote or position:
        return {
            "exact": quote.get("exact"),
            "prefix": quote.get("prefix", ""),
            "suffix": quote.get("suffix", ""),
            "start": position.get("start"),
            "end": position.get("end"),
        }
    if suggestion.anchored:
        return {"start": suggestion.start, "end": suggestion.end}
    return {}  # unanchored or about the whole document: a comment on the whole document


def _rank(review: Review, kind: str, suggested: int | None, edits: dict[str, Any]) -> Any:
    if "rank" in edits:
        return edits["rank"]
    if kind != Annotation.Kind.RISK or suggested is None:
        return None
    taken = set(annotation_list(review=review).exclude(rank=None).values_list("rank", flat=True))
    return None if suggested in taken else suggested  # taken: the risk goes last


def suggestion_accept(
    *, actor: User, suggestion: Suggestion, edits: dict[str, Any] | None = None
) -> Annotation:
    """Make a pending suggestion the reviewer's draft annotation, with `edits` applied (content
    fields, a rank, or another passage as `quote`/`position`). Once: a decided suggestion is a
    409. The annotation is created by the review desk's own service, with its checks."""
    edits = dict(edits or {})
    unknown = set(edits) - EDIT_FIELDS - PASSAGE_FIELDS
    if unknown:
        field = sorted(unknown)[0]
        raise CritiqueError(f"{field}: not a field of an annotation.", field=field)
    review = suggestion.draft.review
    _reviewer_draft_check(actor, review)
    with transaction.atomic():
        locked = _locked_pending(suggestion)
        values = {f: getattr(locked, f) for f in EDIT_FIELDS - {"rank"}}
        values.update({k: v for k, v in edits.items() if k in EDIT_FIELDS - {"rank"}})
        values["constraint"] = _constraint_for(
            review.revision.doc, values["constraint"], values["kind"]
        )
        annotation = annotation_create(
            actor=actor,
            review=review,
            rank=_rank(review, values["kind"], locked.rank, edits),
            **_passage(locked, edits),
            **values,
        )
        Suggestion.objects.filter(pk=locked.pk).update(
            state=Suggestion.State.ACCEPTED, annotation=annotation, decided_at=timezone.now()
        )
    logger.info(
        "critique.suggestion_accepted",
        extra={"suggestion_id": suggestion.pk, "annotation_id": annotation.pk},
    )
    return annotation


def suggestion_reject(*, actor: User, suggestion: Suggestion) -> Suggestion:
    """Reject a pending suggestion (again: a no-op; an accepted one: 409)."""
    _reviewer_draft_check(actor, suggestion.draft.review)
    with transaction.atomic():
        locked = Suggestion.objects.select_for_update().get(pk=suggestion.pk)
        if locked.state == Suggestion.State.ACCEPTED:
            raise Conflict("This suggestion was already accepted.", field="state")
        if locked.state == Suggestion.State.PENDING:
            locked.state = Suggestion.State.REJECTED
            locked.decided_at = timezone.now()
            locked.save(update_fields=["state", "decided_at"])
    return locked


# --- critique prompts and their scores on the practice documents --------------------------------


def practice_rows(*, docs: list[tuple[DesignDoc, Any]]) -> list[RowInput]:
    """One test-set row per practice document: its latest revision's text, its constraints and
    the checklist as variables; the document's title as the row's note."""
    return [
        RowInput(
            variables=critique_variables(
                text=revision_text(revision=revision), constraints=doc.constraints
            ),
            expected="",
            note=doc.title,
        )
        for doc, revision in docs
    ]


def practice_testset_create(
    *, actor: User, prompt: Prompt, role: str, docs: list[tuple[DesignDoc, Any]]
) -> TestSetRevision:
    """A test set "The practice documents" on `prompt` (an editor's), one row per document."""
    return testset_create(
        actor=actor,
        prompt=prompt,
        role=role,
        name=PRACTICE_TESTSET_NAME,
        rows=practice_rows(docs=docs),
    )


def practice_testset_ensure(
    *, actor: User, prompt: Prompt, role: str, docs: list[tuple[DesignDoc, Any]]
) -> TestSetRevision:
    """The latest revision of the prompt's practice test set, made first when it has none."""
    existing = testset_list_for_prompt(prompt_id=prompt.pk).filter(name=PRACTICE_TESTSET_NAME)
    testset = existing.first()
    if testset is not None:
        latest = testset.revisions.order_by("-number").first()
        if latest is not None:
            return latest
    return practice_testset_create(actor=actor, prompt=prompt, role=role, docs=docs)


def critique_prompt_copy(
    *, actor: User, docs: list[tuple[DesignDoc, Any]]
) -> tuple[Prompt, PromptVersion]:
    """A copy of the starter in the actor's own prompts, marked as a critique prompt, with the
    practice documents as a test set: edit it in the playground, score it, compare."""
    starter = starter_version_ensure()
    with transaction.atomic():
        prompt, version = prompt_create(
            actor=actor,
            title="My critique prompt",
            content=version_content(version=starter),
            message=f"Copied from the starter critique prompt (version {starter.pk})",
        )
        CritiquePrompt.objects.create(prompt=prompt)
        practice_testset_create(actor=actor, prompt=prompt, role=Role.OWNER, docs=docs)
    return prompt, version


def practice_evaluation_create(
    *,
    actor: User,
    prompt: Prompt,
    role: str,
    revision: TestSetRevision,
    versions: list[int],
    models: list[dict[str, str]] | None = None,
) -> Evaluation:
    """Score critique versions on the practice documents with the answer-key grader."""
    return evaluation_create(
        actor=actor,
        prompt=prompt,
        role=role,
        revision=revision,
        versions=versions,
        models=models or None,
        graders=[ANSWER_KEY_GRADER],
    )
