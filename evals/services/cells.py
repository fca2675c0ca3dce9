"""Executing one cell of an evaluation (docs/evals.md).

A cell is executed by `cell_execute`, which is safe to call any number of times for one cell: it
claims the cell, creates its run with an idempotency key naming the cell (a redelivery finds the
same run), executes that run through the playground's `run_execute` — which claims queued runs
only and never sends a call twice — and grades the finished run once. `cells_done` is
incremented by whichever call moved the cell to a finished state, so progress counts each cell
exactly once, and the call that counts the last cell finishes the evaluation.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from celery import current_app
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, IntegrityError, connection, transaction
from django.db.models import F, Model, Q
from django.utils import timezone

from common.exceptions import Forbidden
from common.rawsql import row_fetch
from playground.exceptions import ContentInvalid
from playground.models import Prompt, PromptVersion, Run
from playground.runs.selectors import run_timings
from playground.runs.services import (
    run_claim,
    run_create,
    run_create_claimed,
    run_execute,
    run_execute_claimed,
    run_execute_created,
    run_fail,
)
from playground.selectors import version_content
from playground.text.content import VersionContent

from ..dispatch import DEFERRED as DEFERRED  # re-exported: cell_execute returns it
from ..dispatch import NextCells, account_lock, cells_feed_in_close
from ..exceptions import SourceHidden
from ..graders import (
    CellOutcome,
    Grade,
    GraderSpec,
    JudgeVerdict,
    cell_verdict,
    grade,
    grader_spec_load,
    judge_verdict_parse,
)
from ..models import EvalCell, EvalTarget, Evaluation, TestCase, TestRow
from ..selectors import (
    VERSION_FIELDS,
    CellRead,
    cell_for_worker,
    evaluation_facts,
    row_values,
)
from ..signals import evaluation_finished
from .grader_registry import grade_fns
from .sources import judge_version_visible, sources_visible_check

logger = logging.getLogger(__name__)

Status = Evaluation.Status
CellStatus = EvalCell.Status


# --- executing one cell -----------------------------------------------------------------------


def _row_variables(content: VersionContent, row: TestCase) -> dict[str, str]:
    """The row's values for the names the version declares (a test set serves every version of
    its prompt, and a version may not use every column). Only those are read from the
    database: a row's undeclared variables never reach the worker."""
    declared = content.get("variables") or {}
    if not declared:
        return {}  # nothing to read
    return row_values(content_ids=[row.content_id], names=declared).get(row.content_id, {})


_CLAIM_SQL = """
UPDATE evals_evalcell SET status = 'running', run_id = %s, grade_attempts = grade_attempts + 1
WHERE id = %s AND status = 'queued' AND %s > (
    SELECT count(*) FROM evals_evalcell running
    WHERE running.provider = %s AND running.status = 'running'
)
RETURNING id
"""


_CLAIM_FIELDS = (None,)


def _cell_claim(cell: EvalCell, *, run_id: int) -> bool:
    """queued → running with its new run, in one conditional update that also holds the
    provider's cap (EVAL_PROVIDER_CONCURRENCY, counted across every worker) and counts the
    grading start that follows in this worker (`grade_attempts`: a worker that dies from here
    on has used one): False when the cell was not queued any more or its provider is at its
    cap."""
    cap = settings.EVAL_PROVIDER_CONCURRENCY.get(
        cell.provider, settings.EVAL_PROVIDER_CONCURRENCY_DEFAULT
    )
    return row_fetch(_CLAIM_SQL, [run_id, cell.pk, cap, cell.provider], _CLAIM_FIELDS) is not None


class _NotClaimed(Exception):
    """Leaves the claim's transaction, rolling back the run created for it."""


# One statement closes a cell and counts it on PostgreSQL (no BEGIN/COMMIT round trips): the
# cell's conditional update, and the evaluation's count — which also finishes it with its last
# cell — only when the cell moved. The ORM's two updates in a transaction elsewhere. With the
# fair feed (a cell's task on the broker), the statement takes the account's feed lock first
# (`{lock}`: a condition on no column, so it is checked once, before any row is locked, whether
# the cell moves or not), and the feed's one statement follows in the same transaction.
_CLOSE_SQL = """
WITH {owner}moved AS (
    UPDATE evals_evalcell SET {columns}
    WHERE id = %s AND status IN ('queued', 'running'){lock}
    RETURNING evaluation_id
)
UPDATE evals_evaluation SET
    cells_done = cells_done + 1,
    status = CASE WHEN cells_done >= cells_total - 1 AND status IN ('queued', 'running')
        THEN 'done' ELSE status END,
    finished_at = CASE WHEN cells_done >= cells_total - 1 AND status IN ('queued', 'running')
        THEN %s ELSE finished_at END
WHERE id IN (SELECT evaluation_id FROM moved)
RETURNING id, prompt_id, status = 'done' AND cells_done = cells_total
"""
# The account's feed lock, as `account_lock` takes it (evals/dispatch.py).
_CLOSE_OWNER = "owner AS (SELECT id FROM auth_user WHERE id = %s FOR NO KEY UPDATE),\n"
_CLOSE_LOCK = " AND EXISTS (SELECT 1 FROM owner)"
_CLOSE_FIELDS = (None, None, None)
_CLOSE_COLUMNS = ("status", "finished_at", "grades", "passed", "score", "error")


def _count_finished(evaluation_id: int) -> None:
    """One more cell finished: bump the count, and finish the evaluation with its last cell.
    One statement for every cell but the last: the increment that cannot be the last (or whose
    evaluation is not queued or running any more) matches first; the one that finds the count
    at the total less one finishes the evaluation, and only it announces the end."""
    last = Q(cells_done__gte=F("cells_total") - 1, status__in=(Status.QUEUED, Status.RUNNING))
    evaluation = Evaluation.objects.filter(pk=evaluation_id)
    if evaluation.exclude(last).update(cells_done=F("cells_done") + 1):
        return
    if evaluation.filter(last).update(
        cells_done=F("cells_done") + 1, status=Status.DONE, finished_at=timezone.now()
    ):
        # The row stays locked until commit: no other increment finishes it too.
        prompt_id = evaluation.values_list("prompt_id", flat=True).get()
        finished_announce(evaluation_id, prompt_id, Status.DONE)
        return
    # Neither matched: between the two, the evaluation stopped being queued or running (a
    # cancel, on a database that lets another writer in between); the cell is still counted.
    evaluation.update(cells_done=F("cells_done") + 1)


def finished_announce(evaluation_id: int, prompt_id: int, status: str) -> None:
    transaction.on_commit(
        lambda: evaluation_finished.send(
            sender=Evaluation, evaluation_id=evaluation_id, prompt_id=prompt_id, status=status
        ),
        robust=True,  # a listener's failure does not fail the cell that finished it
    )


def cell_close(
    cell_id: int, evaluation_id: int, *, status: str, feed: NextCells | None = None, **fields: Any
) -> bool:
    """Close the cell (queued or running → `status`) and count it; with `feed`, hand over the
    account's next cells in the same transaction (one commit for both). False when the cell
    was finished already (the feed is done all the same)."""
    now = timezone.now()
    feeds = feed is not None and not current_app.conf.task_always_eager
    if connection.vendor == "postgresql" and (feeds or not connection.in_atomic_block):
        values = {"status": status, "finished_at": now, **fields}
        names = [name for name in _CLOSE_COLUMNS if name in values]
        columns = ", ".join(
            f"{name} = %s::jsonb" if name == "grades" else f"{name} = %s" for name in names
        )
        params = [json.dumps(values[n]) if n == "grades" else values[n] for n in names]
        if not feeds:
            sql = _CLOSE_SQL.format(owner="", columns=columns, lock="")
            row = row_fetch(sql, [*params, cell_id, now], _CLOSE_FIELDS)
        else:
            assert feed is not None
            sql = _CLOSE_SQL.format(owner=_CLOSE_OWNER, columns=columns, lock=_CLOSE_LOCK)
            with transaction.atomic():
                row = row_fetch(sql, [feed.user_id, *params, cell_id, now], _CLOSE_FIELDS)
                cells_feed_in_close(feed=feed)
                # Only the statement that brought the count to the total sees done == total
                # (the row is locked by the update), so the listeners hear of it once.
                if row is not None and row[2]:
                    finished_announce(evaluation_id, row[1], Status.DONE)
            return row is not None
        if row is None:
            return False
        # Only the statement that brought the count to the total sees done == total (the row is
        # locked by the update), so the evaluation's listeners hear of it once, as below.
        if row[2]:
            finished_announce(evaluation_id, row[1], Status.DONE)
        return True
    with transaction.atomic():
        if feeds:
            assert feed is not None
            account_lock(user_id=feed.user_id)  # first, as in the statement above
        moved = EvalCell.objects.filter(
            pk=cell_id, status__in=(CellStatus.QUEUED, CellStatus.RUNNING)
        ).update(status=status, finished_at=now, **fields)
        if moved:
            _count_finished(evaluation_id)
        cells_feed_in_close(feed=feed)
    return bool(moved)


def _cell_run(cell: EvalCell) -> int:
    """The cell's run id, created on first use (idempotent per cell)."""
    if cell.run_id is not None:
        return cell.run_id
    created = _run_new(cell)
    if EvalCell.objects.filter(pk=cell.pk, run__isnull=True).update(run=created):
        return created
    run_id = EvalCell.objects.values_list("run_id", flat=True).get(pk=cell.pk)
    assert run_id is not None
    return int(run_id)


def _run_key(cell: EvalCell) -> str:
    return f"eval-cell-{cell.pk}"


def _run_new(cell: EvalCell) -> int:
    """The cell's run (its idempotency key names the cell: a second call finds the first)."""
    target = cell.target
    content = version_content(version=target.version)
    created = run_create(
        actor=cell.evaluation.created_by,
        version=target.version,
        variables=_row_variables(content, cell.row),
        idempotency_key=_run_key(cell),
        provider=target.provider,
        model=target.model,
        enqueue=False,
    )
    return created.run.pk


def _evaluation_started(evaluation: Evaluation) -> None:
    if evaluation.status == Status.QUEUED:
        Evaluation.objects.filter(pk=evaluation.pk, status=Status.QUEUED).update(
            status=Status.RUNNING
        )


def _cell_start(cell: EvalCell, variables: dict[str, str]) -> tuple[int, Run | None, bool]:
    """Claim a queued cell with its run: (the run's id, the run when this call created it
    claimed, for `run_execute_created`, whether this call claimed an older run, for
    `run_execute_claimed`); _NotClaimed when the cell was taken or its provider is at its cap.

    The run is created already claimed (`run_create_claimed`: one insert) and the cell claimed
    with it, in one transaction: one commit. A worker that dies in between leaves the cell
    queued, with no run, for the next delivery; a claim that fails rolls the run back. A
    cancel that lands after the commit finds the run through the cell and cancels it
    (evaluation_cancel), and run_execute_claimed then does not send it; one that landed before
    has cancelled the queued cell, and the claim fails. A queued cell has no run (both commit
    together), so the run is not looked up first: should one exist all the same (a cell left
    by an older version of this code), the key's unique constraint rolls the claim back and
    the cell goes the way that finds the run. `variables`: the row's values of the variables
    the version declares (`_cell_read`)."""
    target = cell.target
    try:
        with transaction.atomic():
            run = run_create_claimed(
                actor_id=cell.evaluation.created_by_id,
                version=target.version,
                variables=variables,
                idempotency_key=_run_key(cell),
                provider=target.provider,
                model=target.model,
            )
            if not _cell_claim(cell, run_id=run.pk):
                raise _NotClaimed
            _evaluation_started(cell.evaluation)
        return run.pk, run, False
    except IntegrityError:
        pass
    with transaction.atomic():
        run_id = _run_new(cell)
        if not _cell_claim(cell, run_id=run_id):
            raise _NotClaimed
        _evaluation_started(cell.evaluation)
        return run_id, None, run_claim(run_id=run_id)


M = TypeVar("M", bound=Model)


def _loaded(model: type[M], /, **values: Any) -> M:
    """An instance of `model` as the ORM would load it with these fields only (the others
    deferred: read on first use, never a silent default)."""
    names = [f.attname for f in model._meta.concrete_fields if f.attname in values]
    return model.from_db(DEFAULT_DB_ALIAS, names, [values[name] for name in names])


def _cell_read(cell_id: int) -> tuple[EvalCell, dict[str, str]] | None:
    """The cell with its evaluation, prompt, column, version and row content, and its row's
    values of the version's declared variables: one read per cell (`cell_for_worker`: what may
    change — the cell, the evaluation's status, the prompt's owner — and the row), the rest of
    the evaluation from this process's cache (`evaluation_facts`: its graders, columns and
    versions never change)."""
    read: CellRead | None = cell_for_worker(cell_id=cell_id)
    if read is None:
        return None
    facts = evaluation_facts(key=read.evaluation_key)
    column = facts.targets[read.target_id]
    evaluation = _loaded(
        Evaluation,
        id=read.evaluation_id,
        prompt_id=read.prompt_id,
        testset_revision_id=facts.testset_revision_id,
        created_by_id=read.created_by_id,
        graders=facts.graders,
        repeat=facts.repeat,
        status=read.evaluation_status,
        cells_total=facts.cells_total,
        created_at=facts.created_at,
    )
    evaluation.prompt = _loaded(Prompt, id=read.prompt_id, owner_id=read.prompt_owner_id)
    target = _loaded(
        EvalTarget,
        id=read.target_id,
        evaluation_id=read.evaluation_id,
        position=column.position,
        version_id=column.version_id,
        provider=column.provider,
        model=column.model,
    )
    target.version = PromptVersion.from_db(DEFAULT_DB_ALIAS, VERSION_FIELDS, column.version_values)
    row = _loaded(TestCase, id=read.row_id, content_id=read.content_id)
    row.content = _loaded(
        TestRow,
        id=read.content_id,
        expected=read.expected,
        graders=read.graders,
        threshold=read.threshold,
    )
    cell = _loaded(
        EvalCell,
        id=cell_id,
        evaluation_id=read.evaluation_id,
        target_id=read.target_id,
        row_id=read.row_id,
        repeat_index=read.repeat_index,
        provider=read.provider,
        run_id=read.run_id,
        status=read.status,
        grade_attempts=read.grade_attempts,
    )
    cell.evaluation, cell.target, cell.row = evaluation, target, row
    return cell, read.variables


def cell_execute(*, cell_id: int, feed: NextCells | None = None) -> str:
    """Execute and grade one cell; returns the cell's status, or DEFERRED when its provider is
    at its concurrency cap (the caller tries again shortly). Safe to repeat.

    One read brings what the cell needs (`_cell_read`): the cell, its evaluation's status, the
    prompt's owner (the access check, made for every cell), its row's content and declared
    values; what never changes of the evaluation (graders, columns, versions) is kept by the
    worker between cells. The grading uses them again."""
    found = _cell_read(cell_id)
    if found is None:
        return "missing"
    cell, variables = found
    if cell.status in EvalCell.FINISHED:
        return cell.status
    evaluation = cell.evaluation
    if evaluation.status == Status.CANCELLED:
        cell_close(cell.pk, evaluation.pk, status=CellStatus.CANCELLED, feed=feed)
        return CellStatus.CANCELLED
    try:
        sources_visible_check(evaluation=evaluation)
    except SourceHidden as error:
        cell_close(cell.pk, evaluation.pk, status=CellStatus.ERROR, error=error.message, feed=feed)
        return CellStatus.ERROR
    if cell.status != CellStatus.QUEUED:
        # A redelivered running cell: its run is found (or made), executed if still queued
        # (a running one whose worker went silent is failed), then graded as the reaper would.
        try:
            run_id = _cell_run(cell)
        except (ContentInvalid, Forbidden) as error:
            cell_close(
                cell.pk, evaluation.pk, status=CellStatus.ERROR, error=error.message, feed=feed
            )
            return CellStatus.ERROR
        run_execute(run_id=run_id)
        return cell_grade(cell_id=cell.pk, feed=feed)
    try:
        run_id, created, claimed = _cell_start(cell, variables)
    except _NotClaimed:
        status = EvalCell.objects.values_list("status", flat=True).get(pk=cell.pk)
        return DEFERRED if status == CellStatus.QUEUED else status
    except (ContentInvalid, Forbidden) as error:
        cell_close(cell.pk, evaluation.pk, status=CellStatus.ERROR, error=error.message, feed=feed)
        return CellStatus.ERROR
    if created is not None:
        run = run_execute_created(run=created)  # graded as written: not read back
    else:
        if claimed:
            run_execute_claimed(run_id=run_id)
        else:
            run_execute(run_id=run_id)
        run = Run.objects.get(pk=run_id)
    # The cell as claimed: running, with its run, its first grading start already counted.
    cell.status, cell.run_id = CellStatus.RUNNING, run_id
    return _cell_grade(cell, run, counted=True, feed=feed)


def cell_grade(*, cell_id: int, feed: NextCells | None = None) -> str:
    """Grade a cell whose run has finished (a no-op otherwise); returns the cell's status."""
    cell = (
        EvalCell.objects.select_related("evaluation", "row__content", "target__version", "run")
        .defer("row__content__variables")
        .get(pk=cell_id)
    )
    if cell.status in EvalCell.FINISHED:
        return cell.status
    return _cell_grade(cell, cell.run, counted=False, feed=feed)


def _cell_grade(
    cell: EvalCell, run: Run | None, *, counted: bool, feed: NextCells | None = None
) -> str:
    """Grade `cell` (read just now, not finished) from its `run`; `counted`: this grading
    start is already counted in `grade_attempts` (by the claim)."""
    if run is None or run.status not in Run.FINISHED:
        return cell.status
    if run.status != Run.Status.DONE:
        status = CellStatus.CANCELLED if run.status == Run.Status.CANCELLED else CellStatus.ERROR
        cell_close(cell.pk, cell.evaluation_id, status=status, error=run.error[:2000], feed=feed)
        return status
    if not counted and not _grade_attempt(cell, feed):
        return CellStatus.ERROR
    price = settings.EVAL_PRICES.get(f"{cell.target.provider}/{cell.target.model}")
    outcome = CellOutcome(
        output=run.output,
        tool_calls=list(run.tool_calls or []),
        latency_ms=run_timings(run=run).total_ms,
        output_tokens=run.output_tokens,
        expected=cell.row.content.expected,
        response_format=cell.target.version.response_format,
        variables=dict(run.variables or {}),
        cost_usd=(
            ((run.input_tokens or 0) * price[0] + (run.output_tokens or 0) * price[1]) / 1e6
            if price
            else None
        ),
    )
    try:
        specs = cell_specs(cell=cell)
        grades = cell_grades(cell=cell, outcome=outcome, specs=specs)
        verdict = cell_verdict(specs, grades, threshold=cell.row.content.threshold)
    except SourceHidden as error:
        cell_close(
            cell.pk, cell.evaluation_id, status=CellStatus.ERROR, error=error.message, feed=feed
        )
        return CellStatus.ERROR
    except SoftTimeLimitExceeded:
        raise  # the cell task closes the cell with the time limit's reason
    except Exception as error:
        # A grader that breaks (a spec stored before a check existed, a bug) fails its cell with
        # the reason; it must not leave the cell running for the reaper to trip on every minute.
        logger.exception("evaluation.cell_grading_failed", extra={"cell_id": cell.pk})
        cell_close(
            cell.pk,
            cell.evaluation_id,
            status=CellStatus.ERROR,
            error=f"Grading failed ({type(error).__name__}); the graders could not judge this"
            " output.",
            feed=feed,
        )
        return CellStatus.ERROR
    cell_close(
        cell.pk,
        cell.evaluation_id,
        status=CellStatus.GRADED,
        grades=[g.as_json() for g in grades],
        passed=verdict.passed,
        score=verdict.score,
        feed=feed,
    )
    return CellStatus.GRADED


def _grade_attempt(cell: EvalCell, feed: NextCells | None = None) -> bool:
    """Count one more start of the cell's grading (one conditional update); past
    EVAL_CELL_GRADE_ATTEMPTS_MAX the cell is closed as an error instead (False): its grading
    killed or outlasted a worker each time, and handing it over again would only take the next
    one. A cell's first start is counted by its claim (`_cell_claim`); this counts the starts
    of a redelivery or of the reaper."""
    limit = settings.EVAL_CELL_GRADE_ATTEMPTS_MAX
    if EvalCell.objects.filter(pk=cell.pk, grade_attempts__lt=limit).update(
        grade_attempts=F("grade_attempts") + 1
    ):
        return True
    cell_close(
        cell.pk,
        cell.evaluation_id,
        status=CellStatus.ERROR,
        error=f"Grading was started {limit} times and never finished (its worker died or"
        " ran out of time each time); given up.",
        feed=feed,
    )
    return False


def cell_time_out(*, cell_id: int, feed: NextCells | None = None) -> str:
    """The cell's task ran past EVAL_CELL_SOFT_TIME_LIMIT: the cell is an error with that reason,
    and its run, if still going, is failed (the call's worker is this one, which stops now).
    Returns the cell's status (a cell that had already finished keeps it)."""
    cell = EvalCell.objects.filter(pk=cell_id).values("evaluation_id", "run_id").first()
    if cell is None:
        return "missing"
    limit = settings.EVAL_CELL_SOFT_TIME_LIMIT
    reason = f"The cell took longer than its time limit ({limit} s) and was stopped."
    if cell["run_id"] is not None:
        run_fail(run_id=cell["run_id"], reason=reason)
    cell_close(cell_id, cell["evaluation_id"], status=CellStatus.ERROR, error=reason, feed=feed)
    logger.warning("evaluation.cell_timed_out", extra={"cell_id": cell_id, "limit_s": limit})
    return EvalCell.objects.values_list("status", flat=True).get(pk=cell_id)


def cell_specs(*, cell: EvalCell) -> list[GraderSpec]:
    """The cell's graders: the evaluation's, then its row's own."""
    return [
        grader_spec_load(body)
        for body in [*cell.evaluation.graders, *(cell.row.content.graders or [])]
    ]


def cell_grades(
    *, cell: EvalCell, outcome: CellOutcome, specs: list[GraderSpec] | None = None
) -> list[Grade]:
    specs = cell_specs(cell=cell) if specs is None else specs
    judge = _judge_for(cell)
    return [grade(spec, outcome, judge=judge, extra=grade_fns) for spec in specs]


def _judge_for(cell: EvalCell) -> Callable[[GraderSpec, CellOutcome], JudgeVerdict]:
    """The llm-judge's call: the judge's prompt version run (as a Run, idempotent per cell and
    grader) with `rubric`, `output`, `expected` and `input` for whichever of those it declares."""

    def judge(spec: GraderSpec, outcome: CellOutcome) -> JudgeVerdict:
        # Read through the author's access now, not at creation: a revoked grant stops the
        # next judge call (docs/evals.md, Graders).
        version = judge_version_visible(actor=cell.evaluation.created_by, spec=spec)
        content = version_content(version=version)
        offered = {
            "rubric": spec.value or "",
            "output": outcome.output,
            "expected": outcome.expected,
            "input": json.dumps(outcome.variables, ensure_ascii=False),
        }
        declared = content.get("variables") or {}
        rubric_hash = hashlib.sha256((spec.value or "").encode()).hexdigest()[:16]
        key = f"eval-cell-{cell.pk}-judge-{spec.options['judge_version']}-{rubric_hash}"
        try:
            created = run_create(
                actor=cell.evaluation.created_by,
                version=version,
                variables={k: v for k, v in offered.items() if k in declared},
                idempotency_key=key,
                provider=spec.options.get("provider"),
                model=spec.options.get("model"),
                enqueue=False,
            )
        except ContentInvalid as error:
            raise ValueError(f"The judge's prompt could not run: {error.message}") from None
        run_execute(run_id=created.run.pk)
        run = Run.objects.get(pk=created.run.pk)
        if run.status != Run.Status.DONE:
            raise ValueError(f"The judge's run {run.status}: {run.error or 'no reply'}")
        return judge_verdict_parse(run.output)

    return judge
