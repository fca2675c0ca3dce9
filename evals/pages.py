"""Page models of the evaluation pages: frozen dataclasses the templates read."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models.functions import Substr

from common.auth import Viewer
from playground.models import Prompt, PromptVersion, Role
from playground.text.diffing import inline_words_diff

from .models import EvalCell, EvalTarget, Evaluation, TestCase, TestSet, TestSetRevision
from .selectors import (
    ColumnSummary,
    GradeReader,
    RowData,
    duration_ms,
    evaluation_summary,
    row_values,
    testset_rows,
)

FILTERS = ("all", "failures", "disagree")


@dataclass(frozen=True)
class TestSetPage:
    __test__ = False  # not a pytest test class, despite the name

    testset: TestSet
    revision: TestSetRevision
    latest_number: int
    rows: list[RowData]
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


# A row's value on the results page is cut to this many characters by the database (the page
# shows 300; the whole value is in the test set's own table and export).
PAGE_VALUE_CHARS = 1_000
# Rows of the results matrix on one page (each row holds a cell per column and repeat).
PAGE_ROWS = 25


def _cut(value: str) -> str:
    return value if len(value) <= PAGE_VALUE_CHARS else value[:PAGE_VALUE_CHARS] + " …"


def evaluation_page_build(
    *,
    evaluation: Evaluation,
    user: Viewer,
    user_id: int,
    shown_filter: str,
    page: int,
    compare: tuple[int, int] | None,
) -> EvaluationPage:
    """The matrix, a page of rows at a time (PAGE_ROWS): cells of those rows only, with
    the columns of their runs they show, in one query; of each row only the variables some
    column's version declares, cut to PAGE_VALUE_CHARS by the database (a row's undeclared
    variables never reach this process). Grades as `user` may see them."""
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
    size = PAGE_ROWS
    pages = max(1, -(-len(all_rows) // size))
    page = min(max(1, page), pages)
    wanted = all_rows[(page - 1) * size : page * size]
    rows = {
        pk: (position, content_id, expected, note)
        for pk, position, content_id, expected, note in TestCase.objects.filter(
            pk__in=wanted
        ).values_list(
            "pk",
            "position",
            "content_id",
            Substr("content__expected", 1, PAGE_VALUE_CHARS + 1),
            "content__note",
        )
    }
    declared: set[str] = set()
    for names in EvalTarget.objects.filter(evaluation=evaluation).values_list(
        "version__variables", flat=True
    ):
        declared.update(names or {})
    values = row_values(
        content_ids={r[1] for r in rows.values()},
        names=declared,
        max_chars=PAGE_VALUE_CHARS + 1,
    )
    grid: dict[int, list[list[MatrixCell]]] = {r: [[] for _ in columns] for r in wanted}
    cells = (
        EvalCell.objects.filter(evaluation=evaluation, row_id__in=wanted)
        .order_by("repeat_index")
        .values_list(
            "pk",
            "row_id",
            "target_id",
            "status",
            "run_id",
            "run__output",
            "grades",
            "passed",
            "error",
            "run__started_at",
            "run__finished_at",
            "run__output_tokens",
        )
    )
    reader = GradeReader(user)
    for (
        cell_id,
        row_id,
        target_id,
        status,
        run_id,
        output,
        grades,
        passed,
        error,
        started_at,
        finished_at,
        output_tokens,
    ) in cells:
        grid[row_id][positions[target_id]].append(
            MatrixCell(
                cell_id=cell_id,
                status=status,
                output=output if run_id is not None else "",
                grades=reader.grades(grades),
                passed=passed,
                error=error,
                latency_ms=duration_ms(started_at, finished_at),
                output_tokens=output_tokens if run_id is not None else None,
                run_id=run_id,
            )
        )
    matrix = []
    for row_id in wanted:
        position, content_id, expected, note = rows[row_id]
        per_column = grid[row_id]
        diff = None
        if compare is not None:
            a, b = (per_column[i] if i < len(per_column) else [] for i in compare)
            if a and b:
                diff = inline_words_diff(a[0].output, b[0].output)
        matrix.append(
            MatrixRow(
                position=position,
                variables={
                    name: _cut(value) for name, value in sorted(values.get(content_id, {}).items())
                },
                expected=_cut(expected),
                note=note,
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
