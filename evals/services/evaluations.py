"""Writes of evaluations (docs/evals.md): create, dispatch, cancel, and the periodic reaper.

`evaluation_create` validates everything a cell will need up front (a bad row is a 400 naming it,
never 600 failed cells), holds the account's share and daily budget, writes the targets and cells
in one transaction, and hands the cells to workers on commit (`evaluation_dispatch`; each cell
is then executed by `evals.services.cells.cell_execute`). `evaluations_reap` and
`evaluations_redispatch_stalled` recover cells and evaluations whose worker went away.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import F, Max, Q
from django.utils import timezone

from common.exceptions import Forbidden, RateLimited
from playground.exceptions import ContentInvalid
from playground.models import Prompt, PromptVersion, Run
from playground.runs.services import run_variables_resolve, runs_cancel
from playground.selectors import version_content

from ..dispatch import cells_dispatch, cells_send_pending
from ..exceptions import EvalInvalid
from ..graders import GraderSpec, grader_format_schema_problem, grader_spec_load, grader_specs_parse
from ..models import EvalCell, EvalTarget, Evaluation, TestRow, TestSetRevision
from ..selectors import row_values
from .cells import cell_close, cell_execute, cell_grade, finished_announce
from .grader_registry import spec_parsers
from .sources import judges_check
from .testsets import editor_check

logger = logging.getLogger(__name__)

VERSIONS_MAX = 10
MODELS_MAX = 6
REPEAT_MAX = 10

Status = Evaluation.Status
CellStatus = EvalCell.Status


# --- evaluations ------------------------------------------------------------------------------


@dataclass(frozen=True)
class TargetInput:
    version: PromptVersion
    provider: str
    model: str


def evaluation_targets_parse(
    *, prompt: Prompt, versions: object, models: object
) -> list[TargetInput]:
    """versions × models → targets. No `models`: each version with its own provider and model."""
    from playground.models import MODEL_MAX_CHARS
    from playground.text.content import DEFAULT_MODELS, PROVIDERS

    if not isinstance(versions, list) or not versions or len(versions) > VERSIONS_MAX:
        raise EvalInvalid(
            f"versions: a list of 1–{VERSIONS_MAX} version ids of this prompt.", field="versions"
        )
    if any(isinstance(v, bool) or not isinstance(v, int) for v in versions) or len(
        set(versions)
    ) != len(versions):
        raise EvalInvalid("versions: distinct integer ids.", field="versions")
    found = {v.pk: v for v in PromptVersion.objects.filter(prompt=prompt, pk__in=versions)}
    missing = [v for v in versions if v not in found]
    if missing:
        raise EvalInvalid(
            f"versions: {missing[0]} is not a version of this prompt.", field="versions"
        )
    if models in (None, []):
        return [TargetInput(found[v], found[v].provider, found[v].model) for v in versions]
    if not isinstance(models, list) or len(models) > MODELS_MAX:
        raise EvalInvalid(
            f"models: a list of at most {MODELS_MAX} {{provider, model}}.", field="models"
        )
    chosen: list[tuple[str, str]] = []
    for index, item in enumerate(models):
        where = f"models.{index}"
        if not isinstance(item, dict) or item.get("provider") not in PROVIDERS:
            raise EvalInvalid(
                f"{where}.provider must be one of {', '.join(PROVIDERS)}.",
                field=f"{where}.provider",
            )
        model = item.get("model") or DEFAULT_MODELS[item["provider"]]
        if not isinstance(model, str) or len(model) > MODEL_MAX_CHARS:
            raise EvalInvalid(
                f"{where}.model: 1–{MODEL_MAX_CHARS} characters.", field=f"{where}.model"
            )
        chosen.append((item["provider"], model.strip()))
    if len(set(chosen)) != len(chosen):
        raise EvalInvalid("models: each provider and model once.", field="models")
    return [TargetInput(found[v], p, m) for v in versions for p, m in chosen]


def _repeat_parse(value: object) -> int:
    if value is None:
        return 1
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= REPEAT_MAX:
        raise EvalInvalid(f"repeat: a whole number from 1 to {REPEAT_MAX}.", field="repeat")
    return value


def _format_schemas_check(*, specs: list[GraderSpec], targets: list[TargetInput]) -> None:
    """A `json-schema` grader without a schema uses each version's response format: it must be
    within the same limits as a grader's own schema (docs/evals.md, Graders under a budget)."""
    for index, spec in enumerate(specs):
        for target in targets:
            problem = grader_format_schema_problem(spec, target.version.response_format)
            if problem is not None:
                raise EvalInvalid(
                    f"graders.{index}.schema: v{target.version.number}'s response format"
                    f" cannot be used: {problem}.",
                    field=f"graders.{index}.schema",
                )


def evaluation_create(
    *,
    actor: User,
    prompt: Prompt,
    role: str,
    revision: TestSetRevision,
    versions: object,
    models: object = None,
    graders: object,
    repeat: object = None,
    extra_graders: Mapping[str, Callable[..., GraderSpec]] | None = None,
) -> Evaluation:
    """An evaluation of `revision` × targets × `repeat`, every cell queued, workers told on
    commit. Every row's variables are resolved against every version first."""
    editor_check(role)
    if revision.testset.prompt_id != prompt.pk:
        raise EvalInvalid("testset: not a test set of this prompt.", field="testset")
    targets = evaluation_targets_parse(prompt=prompt, versions=versions, models=models)
    rows = list(revision.rows.order_by("position"))  # positions and content ids only
    row_graders = dict(
        TestRow.objects.filter(pk__in={row.content_id for row in rows}).values_list("pk", "graders")
    )
    if not rows:
        raise EvalInvalid("testset: the revision has no rows.", field="testset")
    # Graders may be left out when every row brings its own (an imported promptfoo config).
    specs = grader_specs_parse(
        graders,
        extra={**spec_parsers, **(extra_graders or {})},
        allow_empty=all(row_graders.get(row.content_id) for row in rows),
    )
    judges_check(actor=actor, specs=specs)
    _format_schemas_check(specs=specs, targets=targets)
    for row in rows:
        judges_check(
            actor=actor,
            specs=[grader_spec_load(body) for body in row_graders.get(row.content_id) or []],
            where=f"rows.{row.position - 1}.graders",
        )
    times = _repeat_parse(repeat)
    total = len(rows) * len(targets) * times
    if total > settings.EVAL_CELLS_MAX:
        raise EvalInvalid(
            f"This evaluation would have {total:,} cells; at most {settings.EVAL_CELLS_MAX:,}.",
            field="versions",
        )
    contents = {t.version.pk: version_content(version=t.version) for t in targets}
    values = {
        pk: row_values(
            content_ids={r.content_id for r in rows}, names=content.get("variables") or {}
        )
        for pk, content in contents.items()
    }
    for target in targets:
        content = contents[target.version.pk]
        for row in rows:
            given = values[target.version.pk].get(row.content_id, {})
            try:
                run_variables_resolve(content=content, given=given)
            except ContentInvalid as error:
                raise EvalInvalid(
                    f"rows.{row.position - 1}: for v{target.version.number}, {error.message}",
                    field=f"rows.{row.position - 1}.variables",
                ) from None
    _user_share_check(actor)
    with transaction.atomic():
        _user_budget_check(actor, total)
        evaluation = Evaluation.objects.create(
            prompt=prompt,
            testset_revision=revision,
            created_by=actor,
            graders=[s.as_json() for s in specs],
            repeat=times,
            cells_total=total,
        )
        made = EvalTarget.objects.bulk_create(
            EvalTarget(
                evaluation=evaluation,
                position=i,
                version=t.version,
                provider=t.provider,
                model=t.model,
            )
            for i, t in enumerate(targets)
        )
        EvalCell.objects.bulk_create(
            EvalCell(
                evaluation=evaluation,
                target=target,
                row=row,
                repeat_index=k,
                provider=target.provider,
            )
            for row in rows
            for target in made
            for k in range(times)
        )
        transaction.on_commit(lambda: _dispatch(evaluation.pk))
    logger.info("evaluation.created", extra={"evaluation_id": evaluation.pk, "cells": total})
    return evaluation


def _user_share_check(actor: User) -> None:
    """At most EVALS_ACTIVE_PER_USER evaluations queued or running per user (429)."""
    active = Evaluation.objects.filter(
        created_by=actor, status__in=(Status.QUEUED, Status.RUNNING)
    ).count()
    if active >= settings.EVALS_ACTIVE_PER_USER:
        raise RateLimited(
            f"You have {active} evaluations running; wait for one to finish or cancel it.",
            retry_after=settings.EVAL_RETRY_SECONDS,
        )


def _user_budget_check(actor: User, total: int) -> None:
    """At most EVAL_USER_CELLS_PER_DAY cells in the evaluations `actor` started in the last 24
    hours (a 429 whose Retry-After is when enough of them leave the window; a 400 for an
    evaluation larger than the whole budget). Call inside the creating transaction: the
    account's row is locked, so parallel creations are counted one after the other."""
    budget = int(settings.EVAL_USER_CELLS_PER_DAY)
    if total > budget:
        raise EvalInvalid(
            f"This evaluation would have {total:,} cells; an account may start at most"
            f" {budget:,} a day (EVAL_USER_CELLS_PER_DAY).",
            field="versions",
        )
    list(User.objects.select_for_update().filter(pk=actor.pk).values_list("pk", flat=True))
    now = timezone.now()
    window = timedelta(days=1)
    recent = list(
        Evaluation.objects.filter(created_by=actor, created_at__gt=now - window)
        .order_by("created_at")
        .values_list("created_at", "cells_total")
    )
    used = sum(cells for _, cells in recent)
    if used + total <= budget:
        return
    freed = 0
    wait = int(window.total_seconds())
    for created_at, cells in recent:
        freed += cells
        if used - freed + total <= budget:
            wait = int((created_at + window - now).total_seconds()) + 1
            break
    raise RateLimited(
        f"Your evaluations started {used:,} cells in the last 24 hours; with this one's {total:,}"
        f" that is more than the {budget:,} an account may start a day"
        f" (EVAL_USER_CELLS_PER_DAY). Try again in {wait} s.",
        retry_after=max(1, wait),
    )


def _dispatch(evaluation_id: int) -> None:
    evaluation_dispatch(evaluation_id=evaluation_id)


def evaluation_dispatch(*, evaluation_id: int, unfinished: bool = False) -> None:
    """Hand the evaluation's queued cells (with `unfinished`, its running ones too) to whatever
    executes them (evals/dispatch.py): Celery tasks, or threads of this process when eager."""
    cells_dispatch(evaluation_id=evaluation_id, execute=_cell_execute_by_id, unfinished=unfinished)


def _cell_execute_by_id(cell_id: int) -> str:
    return cell_execute(cell_id=cell_id)


def evaluation_cancel(*, actor: User, evaluation: Evaluation) -> Evaluation:
    """Cancel: queued cells are cancelled at once (no new provider call starts after this
    returns), running cells' runs are cancelled and their workers stop at their next write.
    The evaluation's author or the prompt's owner only. A finished evaluation is left as is."""
    if actor.pk not in (evaluation.created_by_id, evaluation.prompt.owner_id):
        raise Forbidden("Only the person who started this evaluation, or the owner, can cancel it.")
    now = timezone.now()
    with transaction.atomic():
        moved = Evaluation.objects.filter(
            pk=evaluation.pk, status__in=(Status.QUEUED, Status.RUNNING)
        ).update(status=Status.CANCELLED, finished_at=now)
        if moved:
            cancelled = EvalCell.objects.filter(
                evaluation=evaluation, status=CellStatus.QUEUED
            ).update(status=CellStatus.CANCELLED, finished_at=now)
            Evaluation.objects.filter(pk=evaluation.pk).update(
                cells_done=F("cells_done") + cancelled
            )
            finished_announce(evaluation.pk, evaluation.prompt_id, Status.CANCELLED)
    if moved:
        # As run_cancel cancels one (their stream readers are told), in one update. The cells'
        # runs are the author's: evals creates them as the evaluation's author.
        runs_cancel(
            actor=evaluation.created_by, runs=Run.objects.filter(eval_cell__evaluation=evaluation)
        )
        logger.info("evaluation.cancelled", extra={"evaluation_id": evaluation.pk})
    evaluation.refresh_from_db()
    return evaluation


def evaluations_reap() -> int:
    """Periodic: grade cells whose run finished while no cell task was there to see it (a
    worker killed after the run ended, a run failed by the stale-run reaper), then hand every
    stalled evaluation's unfinished cells to workers again, and every account's cells not yet
    handed over (within its share, evals/dispatch.py). Returns the cells graded."""
    stuck = EvalCell.objects.filter(
        status=CellStatus.RUNNING, run__status__in=Run.FINISHED
    ).values_list("pk", flat=True)[:500]
    count = 0
    for cell_id in list(stuck):
        # One bad cell must not stop the reaper: every other stalled cell and evaluation still
        # recovers (issue #31). The cell that broke is an error with the reason.
        try:
            if cell_grade(cell_id=cell_id) in EvalCell.FINISHED:
                count += 1
        except SoftTimeLimitExceeded:
            raise
        except Exception as error:
            logger.exception("evaluation.reap_cell_failed", extra={"cell_id": cell_id})
            evaluation_id = EvalCell.objects.values_list("evaluation_id", flat=True).get(pk=cell_id)
            cell_close(
                cell_id,
                evaluation_id,
                status=CellStatus.ERROR,
                error=f"Grading failed ({type(error).__name__}).",
            )
    evaluations_redispatch_stalled()
    # Cells the broker never got (it was down when they were accepted) go to it now.
    cells_send_pending()
    return count


def evaluations_redispatch_stalled() -> list[int]:
    """Evaluations queued or running with no cell finished and no hand-off for
    EVAL_STALL_SECONDS get their unfinished cells' tasks again; returns their ids.

    What it recovers: a worker killed with cell messages reserved (prefetched, or waiting out
    a deferral) holds them unacknowledged until the broker's visibility timeout, an hour on
    Redis, and a cell it had claimed is `running` with no task left to finish it. A repeated
    task is harmless: a finished cell is left alone, a queued run is claimed once, a running
    run with a fresh heartbeat is left to its worker and one gone silent is failed, never sent
    again (`cell_execute`). Each evaluation is claimed by moving `dispatched_at`, so two
    reapers never hand it over twice."""
    now = timezone.now()
    cutoff = now - timedelta(seconds=settings.EVAL_STALL_SECONDS)
    stalled = (
        Evaluation.objects.filter(
            status__in=(Status.QUEUED, Status.RUNNING), dispatched_at__lt=cutoff
        )
        .annotate(last_finished=Max("cells__finished_at"))
        .filter(Q(last_finished__isnull=True) | Q(last_finished__lt=cutoff))
        .values_list("pk", "dispatched_at")[:100]
    )
    handed: list[int] = []
    for evaluation_id, dispatched_at in list(stalled):
        if Evaluation.objects.filter(pk=evaluation_id, dispatched_at=dispatched_at).update(
            dispatched_at=now
        ):
            evaluation_dispatch(evaluation_id=evaluation_id, unfinished=True)
            handed.append(evaluation_id)
    if handed:
        logger.warning("evaluation.redispatched", extra={"evaluation_ids": handed})
    return handed
