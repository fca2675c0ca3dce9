"""Page models of the evaluation pages: frozen dataclasses the templates read."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings

from playground.diffing import inline_words_diff
from playground.models import Prompt, PromptVersion, Role

from .models import EvalCell, Evaluation, TestCase, TestSet, TestSetRevision
from .selectors import ColumnSummary, duration_ms, evaluation_summary, testset_rows

FILTERS = ("all", "failures", "disagree")


@dataclass(frozen=True)
class TestSetPage:
    __test__ = False  # not a pytest test class, despite the name

    testset: TestSet
    revision: TestSetRevision
    latest_number: int
    rows: list[TestCase]
    columns: list[str]  # variable names, in first-use order, then the version's declared ones
    revisions: list[TestSetRevision]
    can_edit: bool


def testset_page_build(
    *,
    testset: TestSet,
    revision: TestSetRevision,
    latest_number: int,
    role: str,
    declared: list[str],
) -> TestSetPage:
    rows = testset_rows(revision=revision)
    columns: dict[str, None] = {}
    for row in rows:
        for name in row.variables:
            columns.setdefault(name, None)
    for name in declared:
        columns.setdefault(name, None)
    return TestSetPage(
        testset=testset,
        revision=revision,
        latest_number=latest_number,
        rows=rows,
        columns=list(columns),
        revisions=list(testset.revisions.order_by("-number")[:20]),
        can_edit=role in (Role.OWNER, Role.EDITOR) and revision.number == latest_number,
    )


@dataclass(frozen=True)
class MatrixCell:
    cell_id: int
    status: str
    output: str
    grades: list[dict[str, Any]]
    passed: bool | None
    error: str
    latency_ms: int | None
    output_tokens: int | None
    run_id: int | None


@dataclass(frozen=True)
class MatrixColumn:
    label: str
    cells: list[MatrixCell]  # one per repeat


@dataclass(frozen=True)
class MatrixRow:
    position: int
    variables: dict[str, str]
    expected: str
    note: str
    columns: list[MatrixColumn]
    disagree: bool
    failed: bool
    diff: list[tuple[int, str]] | None  # word diff of the compared columns' first outputs


@dataclass(frozen=True)
class EvaluationPage:
    evaluation: Evaluation
    prompt: Prompt
    columns: list[ColumnSummary]
    rows: list[MatrixRow]
    shown_filter: str
    rows_total: int
    rows_shown: int
    page: int
    pages: int
    percent: int
    finished: bool
    can_cancel: bool
    compare: tuple[int, int] | None  # column positions whose outputs are diffed


def evaluation_page_build(
    *,
    evaluation: Evaluation,
    user_id: int,
    shown_filter: str,
    page: int,
    compare: tuple[int, int] | None,
) -> EvaluationPage:
    """The matrix, a page of rows at a time (EVAL_PAGE_ROWS): cells of those rows only, with
    their runs, in one query."""
    columns = evaluation_summary(evaluation=evaluation)
    positions = {c.target_id: i for i, c in enumerate(columns)}
    labels = [
        f"{i + 1}. v{c.version_number} · {c.provider}/{c.model}" for i, c in enumerate(columns)
    ]
    revision = evaluation.testset_revision
    status_rows = EvalCell.objects.filter(evaluation=evaluation).values_list(
        "row_id", "target_id", "passed", "status"
    )
    verdicts: dict[int, list[bool | None]] = {}
    statuses: dict[int, set[str]] = {}
    for row_id, target_id, passed, status in status_rows:
        verdicts.setdefault(row_id, []).append(passed)
        statuses.setdefault(row_id, set()).add(status)
        del target_id

    def disagree(row_id: int) -> bool:
        return len({v for v in verdicts.get(row_id, []) if v is not None}) > 1

    def failed(row_id: int) -> bool:
        return any(v is False for v in verdicts.get(row_id, [])) or "error" in statuses.get(
            row_id, set()
        )

    all_rows = list(revision.rows.order_by("position").values_list("pk", flat=True))
    if shown_filter == "failures":
        all_rows = [r for r in all_rows if failed(r)]
    elif shown_filter == "disagree":
        all_rows = [r for r in all_rows if disagree(r)]
    size = settings.EVAL_PAGE_ROWS
    pages = max(1, -(-len(all_rows) // size))
    page = min(max(1, page), pages)
    wanted = all_rows[(page - 1) * size : page * size]
    rows = {r.pk: r for r in TestCase.objects.filter(pk__in=wanted)}
    grid: dict[int, list[list[MatrixCell]]] = {r: [[] for _ in columns] for r in wanted}
    cells = (
        EvalCell.objects.filter(evaluation=evaluation, row_id__in=wanted)
        .select_related("run")
        .order_by("repeat_index")
    )
    for cell in cells:
        run = cell.run
        grid[cell.row_id][positions[cell.target_id]].append(
            MatrixCell(
                cell_id=cell.pk,
                status=cell.status,
                output=run.output if run is not None else "",
                grades=list(cell.grades or []),
                passed=cell.passed,
                error=cell.error,
                latency_ms=duration_ms(run.started_at, run.finished_at)
                if run is not None
                else None,
                output_tokens=run.output_tokens if run is not None else None,
                run_id=cell.run_id,
            )
        )
    matrix = []
    for row_id in wanted:
        row = rows[row_id]
        per_column = grid[row_id]
        diff = None
        if compare is not None:
            a, b = (per_column[i] if i < len(per_column) else [] for i in compare)
            if a and b:
                diff = inline_words_diff(a[0].output, b[0].output)
        matrix.append(
            MatrixRow(
                position=row.position,
                variables=dict(row.variables),
                expected=row.expected,
                note=row.note,
                columns=[MatrixColumn(label=labels[i], cells=c) for i, c in enumerate(per_column)],
                disagree=disagree(row_id),
                failed=failed(row_id),
                diff=diff,
            )
        )
    total = evaluation.cells_total or 1
    finished = evaluation.status in Evaluation.FINISHED
    return EvaluationPage(
        evaluation=evaluation,
        prompt=evaluation.prompt,
        columns=columns,
        rows=matrix,
        shown_filter=shown_filter,
        rows_total=revision.row_count,
        rows_shown=len(all_rows),
        page=page,
        pages=pages,
        percent=min(100, round(100 * evaluation.cells_done / total)),
        finished=finished,
        can_cancel=not finished
        and user_id in (evaluation.created_by_id, evaluation.prompt.owner_id),
        compare=compare,
    )


@dataclass(frozen=True)
class PromptEvalsPage:
    prompt: Prompt
    role: str
    testsets: list[TestSet]
    evaluations: list[Evaluation]
    versions: list[PromptVersion]
    chosen_version: int | None
    judge_prompts: list[Prompt]  # prompts the user can read, for the LLM judge
    can_edit: bool
    providers: tuple[str, ...]
    grader_types: tuple[str, ...]
    graders_registered: tuple[tuple[str, str], ...]  # (type, what the form says of it)
