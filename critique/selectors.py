"""Reads of the critique bridge, scoped to the requesting user.

A draft and its suggestions are the reviewer's alone: anyone else gets NotFound, as for a
missing id. A critique version is one the user may run (viewer access in the playground) or
the built-in starter, which every signed-in account may run.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from common.auth import Viewer
from common.selectors import object_id_parse
from evals.selectors import evaluation_list_for_prompt, evaluation_results
from playground.models import Prompt, PromptVersion
from playground.selectors import prompt_list_visible, version_get_for_user
from reviews.models import DesignDoc, DocRevision, Review
from reviews.practice.selectors import (
    HumanAggregate,
    practice_doc_list,
    practice_human_scores,
)
from reviews.selectors import doc_detail

from .exceptions import NotFound
from .models import CritiquePrompt, ReviewDraft, Suggestion


def draft_version_for_user(*, user: Viewer, version_id: object) -> PromptVersion:
    """A version the user may draft with: one of the starter's (every account may run it) or
    one the user may run. The starter's current version, which may have to be created first,
    is a write: callers that draft with the starter call `services.starter_version_ensure`."""
    starter = CritiquePrompt.objects.filter(starter=True).values_list("prompt_id", flat=True)
    version = PromptVersion.objects.filter(
        pk=object_id_parse(version_id), prompt_id__in=starter
    ).first()
    if version is not None:
        return version
    return version_get_for_user(user=user, version_id=version_id)


def draft_get_for_user(*, user: Viewer, draft_id: object) -> ReviewDraft:
    draft = (
        ReviewDraft.objects.select_related("review__revision__doc", "run")
        .filter(pk=object_id_parse(draft_id))
        .first()
    )
    if draft is None or not user.is_authenticated or draft.review.reviewer_id != user.pk:
        raise NotFound
    return draft


def suggestion_get_for_user(*, user: Viewer, suggestion_id: object) -> Suggestion:
    suggestion = (
        Suggestion.objects.select_related("draft__review__revision__doc")
        .filter(pk=object_id_parse(suggestion_id))
        .first()
    )
    if (
        suggestion is None
        or not user.is_authenticated
        or suggestion.draft.review.reviewer_id != user.pk
    ):
        raise NotFound
    return suggestion


def suggestion_list(*, draft: ReviewDraft, after: int = -1) -> QuerySet[Suggestion]:
    """A draft's suggestions in the reply's order (those past position `after`)."""
    return Suggestion.objects.filter(draft=draft, position__gt=after).order_by("position")


def draft_latest_for_review(*, user: Viewer, review: Review) -> ReviewDraft | None:
    """The reviewer's newest draft of this review (None for anyone else)."""
    if not user.is_authenticated or review.reviewer_id != user.pk:
        return None
    return (
        ReviewDraft.objects.select_related("run", "review__revision")
        .filter(review=review)
        .order_by("-created_at", "-id")
        .first()
    )


@dataclass(frozen=True)
class VersionChoice:
    version_id: int | None  # None: the starter
    label: str


# Versions offered by "Draft with…" besides the starter: the newest of the user's critiques.
DRAFT_CHOICES_MAX = 20


def draft_version_choices(*, user: Viewer) -> list[VersionChoice]:
    """What "Draft with…" offers: the starter, then the newest versions of the critique
    prompts the user may run (any other version can be given by id through the API)."""
    choices = [VersionChoice(version_id=None, label="Starter critique prompt (built in)")]
    prompts = critique_prompts_visible(user=user)
    versions = (
        PromptVersion.objects.filter(prompt__in=prompts)
        .select_related("prompt")
        .order_by("-created_at", "-id")[:DRAFT_CHOICES_MAX]
    )
    choices += [
        VersionChoice(version_id=v.pk, label=f"{v.prompt.title} — v{v.number}") for v in versions
    ]
    return choices


def critique_prompts_visible(*, user: Viewer) -> QuerySet[Prompt]:
    """The critique prompts (copies of the starter) the user may see, newest first."""
    return prompt_list_visible(user=user).filter(critique__starter=False).order_by("-id")


# --- the leaderboard --------------------------------------------------------------------------


@dataclass(frozen=True)
class PracticeDocColumn:
    doc_id: int
    title: str
    body_sha: str


@dataclass(frozen=True)
class LeaderRow:
    """One critique version on one model, scored per practice document (0–1, None: not run)."""

    prompt_title: str
    version_id: int
    version_number: int
    provider: str
    model: str
    scores: tuple[float | None, ...]  # in the columns' order
    mean: float | None  # over the documents scored
    evaluation_id: int
    starter: bool
    evaluation_visible: bool  # the user may open the evaluation's page


@dataclass(frozen=True)
class HumanRow:
    scores: tuple[float | None, ...]
    reviews: tuple[int, ...]
    mean: float | None


@dataclass(frozen=True)
class Leaderboard:
    columns: tuple[PracticeDocColumn, ...]
    rows: tuple[LeaderRow, ...]  # best mean first
    humans: HumanRow


# Bounded cost: this many critique prompts, evaluations per prompt and cells per evaluation.
LEADER_PROMPTS_MAX = 10
LEADER_EVALUATIONS_PER_PROMPT = 10
LEADER_CELLS_MAX = 600


def practice_columns(*, user: Viewer) -> list[tuple[DesignDoc, DocRevision]]:
    """The practice documents (with a key) and their latest revisions, in question order."""
    out = []
    for doc in practice_doc_list(user=user):
        latest = doc_detail(doc=doc).latest
        if latest is not None:
            out.append((doc, latest))
    return out


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _answer_key_evaluations(prompt_id: int) -> list[Any]:
    return [
        e
        for e in evaluation_list_for_prompt(
            prompt_id=prompt_id, limit=LEADER_EVALUATIONS_PER_PROMPT
        )
        if any(g.get("type") == "answer-key" for g in e.graders)
    ]


def leaderboard_for_user(*, user: Viewer) -> Leaderboard:
    """Critique versions × models scored by the answer-key grader on the practice documents
    (the newest evaluation of each version and model counts), beside the anonymous mean of
    people's submitted reviews. Only the starter's and the user's visible critique prompts."""
    docs = practice_columns(user=user)
    columns = tuple(
        PracticeDocColumn(doc_id=d.pk, title=d.title, body_sha=r.body_sha) for d, r in docs
    )
    by_sha = {c.body_sha: i for i, c in enumerate(columns)}
    starter_ids = set(
        CritiquePrompt.objects.filter(starter=True).values_list("prompt_id", flat=True)
    )
    own = list(critique_prompts_visible(user=user)[:LEADER_PROMPTS_MAX])
    prompts = list(Prompt.objects.filter(pk__in=starter_ids)) + own
    seen: set[tuple[int, str, str]] = set()
    rows: list[LeaderRow] = []
    for prompt in prompts:
        for evaluation in _answer_key_evaluations(prompt.pk):
            cells, _ = evaluation_results(
                evaluation=evaluation,
                reader=user,
                limit=LEADER_CELLS_MAX,
                variables=("document",),
            )
            per: dict[tuple[int, str, str], list[list[float]]] = {}
            for cell in cells:
                if cell.score is None:
                    continue
                sha = hashlib.sha256(cell.row_variables.get("document", "").encode()).hexdigest()
                if sha not in by_sha:
                    continue
                key = (cell.version_id, cell.provider, cell.model)
                per.setdefault(key, [[] for _ in columns])[by_sha[sha]].append(cell.score)
            numbers = dict(
                PromptVersion.objects.filter(pk__in={k[0] for k in per}).values_list("pk", "number")
            )
            for key, lists in per.items():
                if key in seen:  # a newer evaluation of this version and model counts
                    continue
                seen.add(key)
                scores = tuple(_mean(values) for values in lists)
                rows.append(
                    LeaderRow(
                        prompt_title=prompt.title,
                        version_id=key[0],
                        version_number=numbers.get(key[0], 0),
                        provider=key[1],
                        model=key[2],
                        scores=scores,
                        mean=_mean([s for s in scores if s is not None]),
                        evaluation_id=evaluation.pk,
                        starter=prompt.pk in starter_ids,
                        evaluation_visible=prompt.pk not in starter_ids,
                    )
                )
    rows.sort(key=lambda r: (-(r.mean or 0.0), r.prompt_title, r.version_number))
    humans: dict[int, HumanAggregate] = practice_human_scores()
    human_scores = tuple(
        humans[c.doc_id].mean_score if c.doc_id in humans else None for c in columns
    )
    return Leaderboard(
        columns=columns,
        rows=tuple(rows),
        humans=HumanRow(
            scores=human_scores,
            reviews=tuple(humans[c.doc_id].reviews if c.doc_id in humans else 0 for c in columns),
            mean=_mean([s for s in human_scores if s is not None]),
        ),
    )
