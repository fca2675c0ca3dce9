"""Reads of test sets and evaluations, always scoped to the requesting user.

Who may read follows the prompt's roles (playground.selectors): owners, editors and viewers read
test sets and evaluations; share links never reach them. Anything else is NotFound (404).
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import Count, Q, QuerySet
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Substr

from common.auth import Viewer
from common.lru import LruCache
from common.rawsql import row_fetch
from common.registry import Registry
from common.selectors import object_id_parse
from playground.models import PromptVersion, Role
from playground.selectors import prompt_access_get_for_user

from .exceptions import NotFound
from .models import EvalCell, EvalTarget, Evaluation, TestCase, TestRow, TestSet, TestSetRevision


@dataclass(frozen=True)
class TestSetAccess:
    testset: TestSet
    revision: TestSetRevision  # the requested revision, or the latest
    role: str
    latest_number: int


@dataclass(frozen=True)
class EvaluationAccess:
    evaluation: Evaluation
    role: str


def testset_get_for_user(
    *, user: Viewer, testset_id: object, revision: object = None
) -> TestSetAccess:
    try:
        testset = TestSet.objects.select_related("prompt").get(pk=object_id_parse(testset_id))
    except TestSet.DoesNotExist:
        raise NotFound from None
    access = prompt_access_get_for_user(
        user=user, prompt_id=testset.prompt_id, min_role=Role.VIEWER
    )
    revisions = testset.revisions.order_by("-number")
    latest = revisions.first()
    if latest is None:
        raise NotFound
    chosen = latest
    if revision not in (None, ""):
        found = revisions.filter(number=object_id_parse(revision)).first()
        if found is None:
            raise NotFound
        chosen = found
    return TestSetAccess(
        testset=testset, revision=chosen, role=access.role, latest_number=latest.number
    )


def testset_list_for_prompt(*, prompt_id: int) -> QuerySet[TestSet]:
    """Test sets of an already-authorised prompt, newest first."""
    return TestSet.objects.filter(prompt_id=prompt_id).order_by("-created_at", "-id")


@dataclass(frozen=True)
class RowData:
    """One row of a revision with its content."""

    position: int
    variables: dict[str, str]
    expected: str
    note: str
    graders: list[dict[str, Any]]
    threshold: float | None = None


def testset_rows(*, revision: TestSetRevision) -> list[RowData]:
    """Every row of the revision, whole (the test set's own table, API and export)."""
    rows = TestCase.objects.filter(revision=revision).order_by("position")
    return [
        RowData(
            position=position,
            variables=dict(variables),
            expected=expected,
            note=note,
            graders=list(graders or []),
            threshold=threshold,
        )
        for position, variables, expected, note, graders, threshold in rows.values_list(
            "position",
            "content__variables",
            "content__expected",
            "content__note",
            "content__graders",
            "content__threshold",
        )
    ]


def _value_of(name: str, *, field: str, max_chars: int | None) -> Any:
    value: Any = KeyTextTransform(name, field)
    return value if max_chars is None else Substr(value, 1, max_chars)


def row_values(
    *, content_ids: Collection[int], names: Collection[str], max_chars: int | None = None
) -> dict[int, dict[str, str]]:
    """The values of `names` only in each stored row (by TestRow id), each cut to `max_chars`
    when given: the database extracts them, so a row's other variables — the ones no version
    declares, however large — never reach this process. Names a row lacks are left out."""
    ordered = sorted(set(names))
    if not content_ids:
        return {}
    fields = {
        f"v{i}": _value_of(name, field="variables", max_chars=max_chars)
        for i, name in enumerate(ordered)
    }
    found: dict[int, dict[str, str]] = {}
    rows = TestRow.objects.filter(pk__in=list(content_ids)).annotate(**fields)
    for pk, *extracted in rows.values_list("pk", *fields):
        found[pk] = {
            name: value for name, value in zip(ordered, extracted, strict=True) if value is not None
        }
    return found


# What a worker reads of a cell to execute it, in one statement compiled once (and, on
# PostgreSQL, prepared: common.rawsql): the cell; what may change of its evaluation (its status,
# for a cancel) and the prompt's owner (the access check, per cell); its column and version by
# id (what never changes of them comes from `evaluation_facts`); its row's expected text,
# graders and threshold; and the row's values of the variables the version declares, extracted
# by the database (a row's undeclared variables never reach the worker, issue #31).
_CELL_SQL = """
SELECT cell.status, cell.run_id, cell.target_id, cell.row_id, cell.provider, cell.repeat_index,
    cell.grade_attempts, cell.evaluation_id, evaluation.status, evaluation.created_at,
    evaluation.created_by_id, evaluation.prompt_id, prompt.owner_id, tc.content_id,
    content.expected, content.graders, content.threshold, {declared}
FROM evals_evalcell cell
JOIN evals_evaluation evaluation ON evaluation.id = cell.evaluation_id
JOIN playground_prompt prompt ON prompt.id = evaluation.prompt_id
JOIN evals_evaltarget target ON target.id = cell.target_id
JOIN playground_promptversion pv ON pv.id = target.version_id
JOIN evals_testcase tc ON tc.id = cell.row_id
JOIN evals_testrow content ON content.id = tc.content_id
WHERE cell.id = %s
"""
# {declared name: the row's value or null}, one key look-up per declared name.
_DECLARED = {
    "postgresql": "(SELECT jsonb_object_agg(name, content.variables ->> name)"
    " FROM jsonb_object_keys(pv.variables) AS name)",
    "sqlite": "(SELECT json_group_object(name.key,"
    " json_extract(content.variables, '$.\"' || name.key || '\"'))"
    " FROM json_each(pv.variables) AS name)",
}
_CELL_SQLS = {vendor: _CELL_SQL.format(declared=sql) for vendor, sql in _DECLARED.items()}
# Columns 0-14 and 17 are left as the driver gives them (column 9, the evaluation's created_at,
# is only a key of the facts cache); the row's graders and threshold are converted.
_CELL_FIELDS = (
    *(None,) * 15,
    TestRow._meta.get_field("graders"),
    TestRow._meta.get_field("threshold"),
    None,
)


@dataclass(frozen=True)
class CellRead:
    """A cell as `cell_for_worker` read it (ids, and what its execution and grading need)."""

    cell_id: int
    status: str
    run_id: int | None
    target_id: int
    row_id: int
    provider: str
    repeat_index: int
    grade_attempts: int
    evaluation_id: int
    evaluation_status: str
    evaluation_key: str  # names the evaluation for `evaluation_facts`: its id and creation
    created_by_id: int
    prompt_id: int
    prompt_owner_id: int
    content_id: int
    expected: str
    graders: list[dict[str, Any]]
    threshold: float | None
    variables: dict[str, str]  # the row's values of the version's declared variables


def cell_for_worker(*, cell_id: int) -> CellRead | None:
    """The cell a worker is about to execute, in one read (None: no such cell). Not scoped to a
    user: the worker acts for the evaluation's author, whose access the caller checks with the
    prompt's owner read here (evals.services.sources.sources_visible_check)."""
    sql = _CELL_SQLS["postgresql" if connection.vendor == "postgresql" else "sqlite"]
    row = row_fetch(sql, [cell_id], _CELL_FIELDS)
    if row is None:
        return None
    values = row[17]
    if isinstance(values, str):
        values = json.loads(values)
    return CellRead(
        cell_id=cell_id,
        status=row[0],
        run_id=row[1],
        target_id=row[2],
        row_id=row[3],
        provider=row[4],
        repeat_index=row[5],
        grade_attempts=row[6],
        evaluation_id=row[7],
        evaluation_status=row[8],
        evaluation_key=f"{row[7]}@{row[9]}",
        created_by_id=row[10],
        prompt_id=row[11],
        prompt_owner_id=row[12],
        content_id=row[13],
        expected=row[14],
        graders=list(row[15] or []),
        threshold=row[16],
        variables={k: v for k, v in (values or {}).items() if v is not None},
    )


@dataclass(frozen=True)
class TargetFacts:
    """A column of an evaluation as it was created: never changes."""

    position: int
    provider: str
    model: str
    version_id: int
    version_values: tuple[Any, ...]  # the version's concrete fields, in `VERSION_FIELDS` order


VERSION_FIELDS = tuple(f.attname for f in PromptVersion._meta.concrete_fields)


@dataclass(frozen=True)
class EvaluationFacts:
    """What never changes of an evaluation (fixed when it was created): what a worker keeps
    between its cells instead of reading it with each (`evaluation_facts`)."""

    key: str
    created_at: datetime
    testset_revision_id: int
    repeat: int
    cells_total: int
    graders: list[dict[str, Any]]
    targets: dict[int, TargetFacts]
    size: int  # about how many bytes it holds, for the cache's budget


def _facts_size(facts: EvaluationFacts) -> int:
    return facts.size


# Evaluation key (its id and creation time, so a row deleted and another created with its id is
# never served what the first held) → its facts; only what never changes, so never stale.
_facts_cache: LruCache[EvaluationFacts] = LruCache(
    bound=lambda: int(settings.EVAL_CELL_CACHE_BYTES), cost=_facts_size
)


def evaluation_facts(*, key: str) -> EvaluationFacts:
    """The facts of the evaluation `CellRead.evaluation_key` names, from this process's cache
    (bounded by EVAL_CELL_CACHE_BYTES) or read (two statements) and kept."""
    found = _facts_cache.get(key)
    if found is not None:
        return found
    evaluation_id = int(key.split("@", 1)[0])
    evaluation = Evaluation.objects.only(
        "created_at", "testset_revision_id", "repeat", "cells_total", "graders"
    ).get(pk=evaluation_id)
    targets = {
        target.pk: TargetFacts(
            position=target.position,
            provider=target.provider,
            model=target.model,
            version_id=target.version_id,
            version_values=tuple(getattr(target.version, name) for name in VERSION_FIELDS),
        )
        for target in EvalTarget.objects.filter(evaluation_id=evaluation_id).select_related(
            "version"
        )
    }
    size = len(json.dumps(evaluation.graders)) + sum(
        512 + len(json.dumps(t.version_values, default=str)) for t in targets.values()
    )
    facts = EvaluationFacts(
        key=key,
        created_at=evaluation.created_at,
        testset_revision_id=evaluation.testset_revision_id,
        repeat=evaluation.repeat,
        cells_total=evaluation.cells_total,
        graders=list(evaluation.graders),
        targets=targets,
        size=size,
    )
    # A cell cascades with its evaluation: the row read by the key's id is the one the key
    # names (its creation time only tells it from a later evaluation given the same id).
    _facts_cache.put(key, facts)
    return facts


def testset_version_for_export(*, testset: TestSet, version: object) -> PromptVersion | None:
    """The version of the test set's prompt a promptfoo export runs: the one named (a 400 when
    it is not a version of this prompt), else the newest; None when the prompt has none."""
    from .exceptions import EvalInvalid

    versions = PromptVersion.objects.filter(prompt_id=testset.prompt_id)
    if version in (None, ""):
        return versions.order_by("-number").first()
    try:
        pk = int(str(version))
    except ValueError:
        raise EvalInvalid("version: the id of a version of this prompt.", field="version") from None
    found = versions.filter(pk=pk).first()
    if found is None:
        raise EvalInvalid("version: not a version of this prompt.", field="version")
    return found


def evaluation_get_for_user(*, user: Viewer, evaluation_id: object) -> EvaluationAccess:
    try:
        evaluation = Evaluation.objects.select_related(
            "prompt", "testset_revision__testset", "created_by"
        ).get(pk=object_id_parse(evaluation_id))
    except Evaluation.DoesNotExist:
        raise NotFound from None
    access = prompt_access_get_for_user(
        user=user, prompt_id=evaluation.prompt_id, min_role=Role.VIEWER
    )
    return EvaluationAccess(evaluation=evaluation, role=access.role)


def evaluation_list_for_prompt(*, prompt_id: int, limit: int = 20) -> list[Evaluation]:
    return list(
        Evaluation.objects.filter(prompt_id=prompt_id)
        .select_related("testset_revision__testset", "created_by")
        .order_by("-created_at", "-id")[:limit]
    )


@dataclass(frozen=True)
class ColumnSummary:
    """One column of the matrix (a target) summed up."""

    target_id: int
    position: int
    version_id: int
    version_number: int
    provider: str
    model: str
    cells: int
    passed: int
    failed: int
    errors: int
    pending: int
    pass_rate: float | None  # passed / graded; None before anything was graded
    mean_score: float | None
    latency_p50_ms: int | None
    latency_p95_ms: int | None
    input_tokens: int
    output_tokens: int
    cost_usd: float | None  # None unless EVAL_PRICES names the model

    def as_json(self) -> dict[str, Any]:
        return {
            "target": self.target_id,
            "version": self.version_id,
            "version_number": self.version_number,
            "provider": self.provider,
            "model": self.model,
            "cells": self.cells,
            "passed": self.passed,
            "failed": self.failed,
            "errors": self.errors,
            "pending": self.pending,
            "pass_rate": self.pass_rate,
            "mean_score": self.mean_score,
            "latency_p50_ms": self.latency_p50_ms,
            "latency_p95_ms": self.latency_p95_ms,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": self.cost_usd,
        }


def _percentile(values: list[int], fraction: float) -> int | None:
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return round(cuts[max(0, min(98, round(fraction * 100) - 1))])


def duration_ms(start: datetime | None, end: datetime | None) -> int | None:
    """Milliseconds between two moments, None while either is unknown."""
    if start is None or end is None:
        return None
    return max(0, round((end - start).total_seconds() * 1000))


def evaluation_targets(*, evaluation: Evaluation) -> list[EvalTarget]:
    return list(evaluation.targets.select_related("version").order_by("position"))


def evaluation_summary(*, evaluation: Evaluation) -> list[ColumnSummary]:
    """Per column: pass/fail/error counts, pass rate, mean score, latency p50/p95, tokens and
    cost. One query for the cells (bounded by EVAL_CELLS_MAX), one for the targets."""
    targets = evaluation_targets(evaluation=evaluation)
    rows = EvalCell.objects.filter(evaluation=evaluation).values_list(
        "target_id",
        "status",
        "passed",
        "score",
        "run__input_tokens",
        "run__output_tokens",
        "run__started_at",
        "run__finished_at",
    )
    by_target: dict[int, list[tuple[Any, ...]]] = {t.pk: [] for t in targets}
    for row in rows:
        by_target[row[0]].append(row)
    prices: dict[str, list[float]] = settings.EVAL_PRICES
    summaries = []
    for target in targets:
        cells = by_target[target.pk]
        graded = [c for c in cells if c[1] == EvalCell.Status.GRADED]
        passed = sum(1 for c in graded if c[2])
        latencies = sorted(
            ms
            for c in cells
            if (ms := duration_ms(c[6], c[7])) is not None and c[1] == EvalCell.Status.GRADED
        )
        input_tokens = sum(c[4] or 0 for c in cells)
        output_tokens = sum(c[5] or 0 for c in cells)
        price = prices.get(f"{target.provider}/{target.model}")
        summaries.append(
            ColumnSummary(
                target_id=target.pk,
                position=target.position,
                version_id=target.version_id,
                version_number=target.version.number,
                provider=target.provider,
                model=target.model,
                cells=len(cells),
                passed=passed,
                failed=len(graded) - passed,
                errors=sum(1 for c in cells if c[1] == EvalCell.Status.ERROR),
                pending=sum(1 for c in cells if c[1] not in EvalCell.FINISHED),
                pass_rate=round(passed / len(graded), 4) if graded else None,
                mean_score=round(sum(c[3] or 0 for c in graded) / len(graded), 4)
                if graded
                else None,
                latency_p50_ms=_percentile(latencies, 0.5),
                latency_p95_ms=_percentile(latencies, 0.95),
                input_tokens=input_tokens,
                output_tokens=output_tokens,
                cost_usd=round((input_tokens * price[0] + output_tokens * price[1]) / 1e6, 6)
                if price
                else None,
            )
        )
    return summaries


# Grade types whose reason may tell what only some readers may know (the answer-key grader's
# scorecard tells of a practice document's key): type → (reader, the grade's `secret`) → may
# the reader see the reason. Filled by the app that registers the grader
# (evals.services.grader_registry.grader_register); a grade of such a type shows its score and
# `passed` only, unless the guard says yes (docs/evals.md, Results).
reason_guards: Registry[Callable[[Viewer, str], bool]] = Registry("grade reason guard")
REASON_HIDDEN = "Reason hidden: it would tell what only readers of the grader's key may see."


def grade_reason_guard_register(*, type: str, may_read: Callable[[Viewer, str], bool]) -> None:  # noqa: A002
    reason_guards.register(type, may_read)


class GradeReader:
    """The grades one reader may see: `secret` (what a reason is about) is never shown, and a
    guarded type's reason only when its guard allows it (asked once per secret)."""

    def __init__(self, reader: Viewer | None) -> None:
        self.reader = reader  # None: the operator's own command, which reads everything
        self._answers: dict[tuple[str, str], bool] = {}

    def _may_read(self, kind: str, secret: str) -> bool:
        guard = reason_guards.get(kind)
        if guard is None or self.reader is None:
            return True
        key = (kind, secret)
        if key not in self._answers:
            self._answers[key] = bool(secret) and guard(self.reader, secret)
        return self._answers[key]

    def grades(self, grades: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
        shown = []
        for grade in grades or []:
            item = {k: v for k, v in grade.items() if k != "secret"}
            if not self._may_read(str(grade.get("type", "")), str(grade.get("secret") or "")):
                item["reason"] = REASON_HIDDEN
            shown.append(item)
        return shown


@dataclass(frozen=True)
class CellResult:
    cell_id: int
    row_position: int
    row_variables: dict[str, str]  # only the names the caller asked for
    target_id: int
    version_id: int
    version_number: int  # what pages call the version (v9); `version_id` is its database id
    provider: str
    model: str
    repeat_index: int
    status: str
    run_id: int | None
    output: str
    grades: list[dict[str, Any]]
    passed: bool | None
    score: float | None
    error: str
    latency_ms: int | None
    input_tokens: int | None
    output_tokens: int | None

    def as_json(self) -> dict[str, Any]:
        return {
            "cell": self.cell_id,
            "row": self.row_position,
            "version": self.version_id,
            "version_number": self.version_number,
            "provider": self.provider,
            "model": self.model,
            "repeat": self.repeat_index,
            "status": self.status,
            "run": self.run_id,
            "output": self.output,
            "grades": self.grades,
            "passed": self.passed,
            "score": self.score,
            "error": self.error,
            "latency_ms": self.latency_ms,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
        }

    def export_json(self) -> dict[str, Any]:
        """A cell as the JSON download writes it: `version` as pages name it ("v9"), the
        database id beside it as `version_id` (the API's `version` stays the id)."""
        body = self.as_json()
        del body["version_number"]
        body["version"] = f"v{self.version_number}"
        return {
            "cell": body.pop("cell"),
            "row": body.pop("row"),
            "version": body.pop("version"),
            "version_id": self.version_id,
            **body,
        }


# The columns a result reads, by name: never a whole row of the test set (its variables may
# hold megabytes no version declares) nor a whole run.
_RESULT_COLUMNS = (
    "pk",
    "row__position",
    "target_id",
    "target__version_id",
    "target__version__number",
    "target__provider",
    "target__model",
    "repeat_index",
    "status",
    "run_id",
    "run__output",
    "grades",
    "passed",
    "score",
    "error",
    "run__started_at",
    "run__finished_at",
    "run__input_tokens",
    "run__output_tokens",
)
# Cells a streamed export holds in memory at a time.
RESULTS_CHUNK = 100


def _results_query(
    *, evaluation: Evaluation, only_failures: bool, variables: Collection[str]
) -> QuerySet[EvalCell, dict[str, Any]]:
    cells = EvalCell.objects.filter(evaluation=evaluation)
    if only_failures:
        cells = cells.exclude(status=EvalCell.Status.GRADED, passed=True)
    names = sorted(set(variables))
    extracted = {
        f"var_{i}": KeyTextTransform(name, "row__content__variables")
        for i, name in enumerate(names)
    }
    values: QuerySet[EvalCell, dict[str, Any]] = cells.order_by(
        "row__position", "target__position", "repeat_index"
    ).values(*_RESULT_COLUMNS, **extracted)
    return values


def _result(item: dict[str, Any], names: list[str], reader: GradeReader) -> CellResult:
    has_run = item["run_id"] is not None
    return CellResult(
        cell_id=item["pk"],
        row_position=item["row__position"],
        row_variables={
            name: item[f"var_{i}"] for i, name in enumerate(names) if item[f"var_{i}"] is not None
        },
        target_id=item["target_id"],
        version_id=item["target__version_id"],
        version_number=item["target__version__number"],
        provider=item["target__provider"],
        model=item["target__model"],
        repeat_index=item["repeat_index"],
        status=item["status"],
        run_id=item["run_id"],
        output=item["run__output"] if has_run else "",
        grades=reader.grades(item["grades"]),
        passed=item["passed"],
        score=item["score"],
        error=item["error"],
        latency_ms=duration_ms(item["run__started_at"], item["run__finished_at"]),
        input_tokens=item["run__input_tokens"] if has_run else None,
        output_tokens=item["run__output_tokens"] if has_run else None,
    )


def evaluation_results(
    *,
    evaluation: Evaluation,
    reader: Viewer | None,
    offset: int = 0,
    limit: int = 100,
    only_failures: bool = False,
    variables: Collection[str] = (),
) -> tuple[list[CellResult], int]:
    """A page of cells in matrix order (row, column, repeat) and the count of all that match,
    with the row's values of `variables` only. Grades as `reader` may see them (None: an
    operator's command)."""
    query = _results_query(evaluation=evaluation, only_failures=only_failures, variables=variables)
    total = query.count()
    names = sorted(set(variables))
    grades = GradeReader(reader)
    page = [_result(item, names, grades) for item in query[offset : offset + limit]]
    return page, total


def evaluation_results_stream(
    *, evaluation: Evaluation, reader: Viewer | None
) -> Iterator[CellResult]:
    """Every cell in matrix order, read through one server-side cursor RESULTS_CHUNK cells at a
    time (for exports: memory bounded by a chunk, one query whatever the number of cells)."""
    grades = GradeReader(reader)
    query = _results_query(evaluation=evaluation, only_failures=False, variables=())
    for item in query.iterator(chunk_size=RESULTS_CHUNK):
        yield _result(item, [], grades)


@dataclass(frozen=True)
class VersionPassRate:
    evaluation_id: int  # the newest finished evaluation that ran the version
    passed: int
    graded: int

    @property
    def rate(self) -> float:
        return round(self.passed / self.graded, 4)


def version_pass_rates(*, prompt_id: int, version_ids: list[int]) -> dict[int, VersionPassRate]:
    """The pass rate of each version in the newest finished evaluation that ran it (for the
    version tree); versions with no graded cell there are left out. Two queries, whatever the
    number of versions."""
    latest: dict[int, int] = {}
    targets = (
        EvalTarget.objects.filter(
            evaluation__prompt_id=prompt_id,
            evaluation__status=Evaluation.Status.DONE,
            version_id__in=version_ids,
        )
        .order_by("-evaluation__created_at", "-evaluation_id")
        .values_list("version_id", "evaluation_id")
    )
    for version_id, evaluation_id in targets:
        latest.setdefault(version_id, evaluation_id)
    if not latest:
        return {}
    counts: dict[int, list[int]] = {}
    graded = (
        EvalCell.objects.filter(
            evaluation_id__in=set(latest.values()),
            status=EvalCell.Status.GRADED,
            target__version_id__in=list(latest),
        )
        .values_list("evaluation_id", "target__version_id")
        .annotate(passed=Count("pk", filter=Q(passed=True)), graded=Count("pk"))
        .order_by()
    )
    for evaluation_id, version_id, passed, total in graded:
        if latest.get(version_id) == evaluation_id:
            tally = counts.setdefault(version_id, [0, 0])
            tally[0] += passed
            tally[1] += total
    return {
        v: VersionPassRate(evaluation_id=latest[v], passed=p, graded=n)
        for v, (p, n) in counts.items()
        if n
    }


def evaluation_wait(*, evaluation: Evaluation, timeout: float, poll: float = 0.25) -> bool:
    """Re-read `evaluation` until it has finished (True) or `timeout` seconds went by (False):
    for the commands that start an evaluation and report on it."""
    deadline = time.monotonic() + timeout
    while True:
        evaluation.refresh_from_db()
        if evaluation.status in Evaluation.FINISHED:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(poll)


@dataclass(frozen=True)
class VersionEvaluation:
    """One finished evaluation's column for a version: what a change request's gate reads."""

    evaluation_id: int
    testset_id: int
    testset_name: str
    graders: list[dict[str, Any]]
    passed: int
    graded: int
    finished_at: datetime | None

    @property
    def pass_rate(self) -> float | None:
        return round(self.passed / self.graded, 4) if self.graded else None


def evaluations_of_version(
    *, prompt_id: int, version_id: int, testset_id: int | None = None, limit: int = 20
) -> list[VersionEvaluation]:
    """The newest finished (`done`) evaluations that ran `version_id`, optionally of one test
    set, with the version's passed and graded cells in each (two queries)."""
    evaluations = Evaluation.objects.filter(
        prompt_id=prompt_id, status=Evaluation.Status.DONE, targets__version_id=version_id
    )
    if testset_id is not None:
        evaluations = evaluations.filter(testset_revision__testset_id=testset_id)
    rows = list(
        evaluations.select_related("testset_revision__testset")
        .distinct()
        .order_by("-created_at", "-id")[:limit]
    )
    counts: dict[int, tuple[int, int]] = {
        evaluation_id: (passed, graded)
        for evaluation_id, passed, graded in EvalCell.objects.filter(
            evaluation_id__in=[e.pk for e in rows],
            status=EvalCell.Status.GRADED,
            target__version_id=version_id,
        )
        .values_list("evaluation_id")
        .annotate(passed=Count("pk", filter=Q(passed=True)), graded=Count("pk"))
        .order_by()
    }
    return [
        VersionEvaluation(
            evaluation_id=e.pk,
            testset_id=e.testset_revision.testset_id,
            testset_name=e.testset_revision.testset.name,
            graders=list(e.graders),
            passed=counts.get(e.pk, (0, 0))[0],
            graded=counts.get(e.pk, (0, 0))[1],
            finished_at=e.finished_at,
        )
        for e in rows
    ]
