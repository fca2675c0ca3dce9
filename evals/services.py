"""Writes of test sets and evaluations (docs/evals.md).

Test sets: `testset_create` writes revision 1; `testset_revise` writes the next revision with the
rows it is given (rows are never edited in place). Evaluations: `evaluation_create` validates
everything a cell will need up front (a bad row is a 400 naming it, never 600 failed cells),
writes the targets and cells in one transaction, and hands the cells to workers on commit.

A cell is executed by `cell_execute`, which is safe to call any number of times for one cell: it
claims the cell, creates its run with an idempotency key naming the cell (a redelivery finds the
same run), executes that run through the playground's `run_execute` — which claims queued runs
only and never sends a call twice — and grades the finished run once. `cells_done` is
incremented by whichever call moved the cell to a finished state, so progress counts each cell
exactly once, and the call that counts the last cell finishes the evaluation.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TypeVar

from celery import current_app
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.contrib.auth.models import User
from django.core.files.uploadedfile import UploadedFile
from django.db import DEFAULT_DB_ALIAS, IntegrityError, connection, transaction
from django.db.models import F, Max, Model, Q, Sum
from django.utils import timezone

from common.auth import Viewer
from common.csvcells import csv_row
from common.exceptions import Forbidden, RateLimited
from common.jsonlimits import JsonRefused, json_loads_limited, json_surrogate_path
from common.rawsql import row_fetch
from playground.content import PLACEHOLDER, VersionContent
from playground.exceptions import ContentInvalid
from playground.models import Prompt, PromptVersion, Role, Run
from playground.runs.selectors import run_timings
from playground.runs.services import (
    run_cancel,
    run_claim,
    run_create,
    run_create_claimed,
    run_execute,
    run_execute_claimed,
    run_execute_created,
    run_variables_resolve,
)
from playground.selectors import version_content

from .dispatch import DEFERRED as DEFERRED  # re-exported: cell_execute returns it
from .dispatch import (
    NextCells,
    account_lock,
    cells_dispatch,
    cells_feed_in_close,
    cells_send_pending,
)
from .exceptions import EvalInvalid, SourceHidden
from .graders import (
    GRADER_TYPES,
    CellOutcome,
    Grade,
    GraderSpec,
    JudgeVerdict,
    cell_verdict,
    grade,
    grader_format_schema_problem,
    grader_spec_load,
    grader_spec_request,
    grader_specs_parse,
    judge_verdict_parse,
)
from .models import EvalCell, EvalTarget, Evaluation, TestCase, TestRow, TestSet, TestSetRevision
from .promptfoo import is_promptfoo_file, promptfoo_parse
from .selectors import (
    VERSION_FIELDS,
    CellRead,
    RowData,
    cell_for_worker,
    evaluation_facts,
    grade_reason_guard_register,
    row_values,
)
from .signals import evaluation_finished

logger = logging.getLogger(__name__)

VALUE_MAX_CHARS = 100_000
VARIABLE_NAME_MAX_CHARS = 100
VERSIONS_MAX = 10
MODELS_MAX = 6
REPEAT_MAX = 10
IMPORT_MAX_BYTES = 5 * 1024 * 1024
# A row is {variables: {name: text}, expected?, note?}: anything nested deeper is not a row.
IMPORT_LINE_MAX_DEPTH = 4

Status = Evaluation.Status
CellStatus = EvalCell.Status


# --- test sets --------------------------------------------------------------------------------


@dataclass(frozen=True)
class RowInput:
    variables: dict[str, str]
    expected: str
    note: str
    graders: tuple[dict[str, Any], ...] = ()  # validated specs for this row alone
    threshold: float | None = None  # pass when the weighted score reaches it (promptfoo's)


def _row_text(value: object, where: str, *, max_chars: int) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise EvalInvalid(f"{where} must be a string.", field=where)
    if len(value) > max_chars or "\x00" in value:
        raise EvalInvalid(f"{where}: at most {max_chars:,} characters, no NUL.", field=where)
    return value


def testset_rows_parse(raw: object) -> list[RowInput]:
    """`rows` of a request body → validated rows; EvalInvalid naming the row and field."""
    from .models import NOTE_MAX_CHARS

    if not isinstance(raw, list):
        raise EvalInvalid(
            "rows must be a list of {variables, expected?, note?, graders?, threshold?}.",
            field="rows",
        )
    limit = settings.EVAL_TESTSET_ROWS_MAX
    if len(raw) > limit:
        raise EvalInvalid(f"rows: at most {limit:,} rows in a test set.", field="rows")
    rows = []
    for index, row in enumerate(raw):
        where = f"rows.{index}"
        if not isinstance(row, dict):
            raise EvalInvalid(f"{where} must be an object.", field=where)
        unknown = sorted(set(row) - {"variables", "expected", "note", "graders", "threshold"})
        if unknown:
            raise EvalInvalid(
                f"{where}.{unknown[0]}: not a field of a row.", field=f"{where}.{unknown[0]}"
            )
        variables = row.get("variables", {})
        if not isinstance(variables, dict):
            raise EvalInvalid(
                f"{where}.variables must be an object of name → text.", field=f"{where}.variables"
            )
        checked: dict[str, str] = {}
        for name, value in variables.items():
            if not PLACEHOLDER.fullmatch("{{" + name + "}}") or len(name) > VARIABLE_NAME_MAX_CHARS:
                raise EvalInvalid(
                    f"{where}.variables: “{name[:40]}” is not a variable name.",
                    field=f"{where}.variables",
                )
            checked[name] = _row_text(value, f"{where}.variables.{name}", max_chars=VALUE_MAX_CHARS)
        rows.append(
            RowInput(
                variables=checked,
                expected=_row_text(
                    row.get("expected"), f"{where}.expected", max_chars=VALUE_MAX_CHARS
                ),
                note=_row_text(row.get("note"), f"{where}.note", max_chars=NOTE_MAX_CHARS),
                graders=_row_graders(row.get("graders"), where),
                threshold=_row_threshold(row.get("threshold"), where),
            )
        )
    return rows


def _row_graders(raw: object, where: str) -> tuple[dict[str, Any], ...]:
    if raw is None:
        return ()
    specs = grader_specs_parse(
        raw, extra=_extra_parsers, where_prefix=f"{where}.graders", allow_empty=True
    )
    return tuple(s.as_json() for s in specs)


def _row_threshold(raw: object, where: str) -> float | None:
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not 0 <= raw <= 1:
        # a threshold on the weighted score, which is from 0 to 1
        raise EvalInvalid(
            f"{where}.threshold must be a number from 0 to 1.", field=f"{where}.threshold"
        )
    return float(raw)


def row_json(row: RowData | RowInput) -> dict[str, Any]:
    """A row as `testset_rows_parse` reads it (graders and threshold only when set)."""
    body: dict[str, Any] = {"variables": row.variables, "expected": row.expected, "note": row.note}
    if row.graders:
        body["graders"] = [grader_spec_request(g) for g in row.graders]
    if row.threshold is not None:
        body["threshold"] = row.threshold
    return body


def testset_import_parse(*, data: bytes, filename: str) -> list[RowInput]:
    """A CSV or JSONL file → rows. CSV: a header row; `expected` and `note` columns are those
    fields, every other column a variable. JSONL: one row object per line, either
    `{variables, expected?, note?}` or a flat object read like a CSV row."""
    if len(data) > IMPORT_MAX_BYTES:
        raise EvalInvalid(f"file: at most {IMPORT_MAX_BYTES // (1024 * 1024)} MB.", field="file")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise EvalInvalid(f"file: not UTF-8 (byte {error.start}).", field="file") from None
    lower = filename.lower()
    if lower.endswith((".jsonl", ".ndjson", ".json")):
        raw = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            body = _import_line(line, number)
            raw.append(
                body if isinstance(body, dict) and "variables" in body else _flat_row(body, number)
            )
        return testset_rows_parse(raw)
    if lower.endswith((".csv", ".tsv", ".txt")):
        dialect = "excel-tab" if lower.endswith(".tsv") else "excel"
        reader = csv.DictReader(io.StringIO(text, newline=""), dialect=dialect)
        if not reader.fieldnames:
            raise EvalInvalid("file: the CSV has no header row.", field="file")
        try:
            raw = [_flat_row(record, number) for number, record in enumerate(reader, start=2)]
        except csv.Error as error:
            raise EvalInvalid(f"file: not valid CSV ({error}).", field="file") from None
        return testset_rows_parse(raw)
    raise EvalInvalid("file: name it .csv, .tsv or .jsonl.", field="file")


def _import_line(line: str, number: int) -> object:
    """One JSONL line → its value, or EvalInvalid naming the line: not JSON, nested deeper than
    IMPORT_LINE_MAX_DEPTH (never Python's RecursionError), or holding a lone surrogate such as
    `"\\ud800"` (valid JSON, but no database can store it)."""
    try:
        body = json_loads_limited(line, limit=IMPORT_LINE_MAX_DEPTH)
    except JsonRefused:
        raise EvalInvalid(
            f"file: line {number} nests deeper than {IMPORT_LINE_MAX_DEPTH} levels.", field="file"
        ) from None
    except ValueError:
        raise EvalInvalid(f"file: line {number} is not JSON.", field="file") from None
    path = json_surrogate_path(body)
    if path is not None:
        raise EvalInvalid(
            f"file: line {number}, {path}: must not contain lone surrogates (not valid UTF-8).",
            field="file",
        )
    return body


def testset_import_file(
    *, actor: User, upload: UploadedFile, judge_version: int | None = None
) -> list[RowInput]:
    """An uploaded file's rows, reading at most IMPORT_MAX_BYTES + 1 bytes of it (a larger file
    is refused without being read whole). A promptfoo config (YAML, or CSV with `__expected`)
    brings each row's graders and threshold (evals/promptfoo.py); `judge_version` is the judge
    its `llm-rubric` assertions become (a prompt version `actor` may read)."""
    data = upload.read(IMPORT_MAX_BYTES + 1)
    name = upload.name or ""
    if not is_promptfoo_file(filename=name, head=data[:4096]):
        return testset_import_parse(data=data, filename=name)
    return promptfoo_rows(actor=actor, data=data, filename=name, judge_version=judge_version).rows


@dataclass(frozen=True)
class PromptfooImport:
    description: str  # the config's `description`, "" without one
    rows: list[RowInput]


def promptfoo_rows(
    *, actor: User, data: bytes, filename: str, judge_version: int | None
) -> PromptfooImport:
    """A promptfoo config's tests as validated rows (400 naming what cannot be imported)."""
    from playground.selectors import version_get_for_user

    from .exceptions import NotFound

    parsed = promptfoo_parse(data=data, filename=filename, judge_version=judge_version)
    rows = testset_rows_parse(
        [
            {
                "variables": r.variables,
                "expected": r.expected,
                "note": r.note,
                "graders": [grader_spec_request(g) for g in r.graders],
                "threshold": r.threshold,
            }
            for r in parsed.rows
        ]
    )
    if judge_version is not None and any(g["type"] == "llm-judge" for r in rows for g in r.graders):
        try:
            version_get_for_user(user=actor, version_id=judge_version)
        except NotFound:
            raise EvalInvalid(
                "judge_version: no such prompt version visible to you.", field="judge_version"
            ) from None
    return PromptfooImport(description=parsed.description, rows=rows)


def _flat_row(record: object, number: int) -> dict[str, Any]:
    if not isinstance(record, dict):
        raise EvalInvalid(f"file: line {number} is not an object.", field="file")
    if None in record:
        raise EvalInvalid(f"file: line {number} has more cells than the header.", field="file")
    variables = {k: v for k, v in record.items() if k not in ("expected", "note")}
    return {"variables": variables, "expected": record.get("expected"), "note": record.get("note")}


def testset_export(*, revision: TestSetRevision, rows: list[RowData], fmt: str) -> str:
    """The rows as CSV (variables as columns, then expected and note) or JSONL."""
    if fmt == "jsonl":
        return "".join(
            json.dumps(
                {"variables": r.variables, "expected": r.expected, "note": r.note},
                ensure_ascii=False,
            )
            + "\n"
            for r in rows
        )
    names: dict[str, None] = {}
    for row in rows:
        for name in row.variables:
            names.setdefault(name, None)
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(csv_row([*names, "expected", "note"]))
    for row in rows:
        writer.writerow(
            csv_row([*(row.variables.get(n, "") for n in names), row.expected, row.note])
        )
    return out.getvalue()


def testset_export_promptfoo(
    *,
    testset: TestSet,
    revision: TestSetRevision,
    rows: list[RowData],
    version: PromptVersion | None,
    source_url: str,
) -> str:
    """The rows and their graders as a promptfooconfig.yaml running `version` (400 naming a
    grader promptfoo has no assertion for)."""
    from .promptfoo import ExportRow, promptfoo_export

    return promptfoo_export(
        title=f"{testset.name} (r{revision.number})",
        rows=[
            ExportRow(r.variables, r.expected, r.note, list(r.graders), r.threshold) for r in rows
        ],
        content=version_content(version=version) if version is not None else None,
        version_label=(f"{testset.prompt.title} v{version.number}" if version is not None else ""),
        source_url=source_url,
    )


def _editor_check(role: str) -> None:
    if role not in (Role.OWNER, Role.EDITOR):
        raise Forbidden(
            "You have read-only access to this prompt: test sets and evaluations need an editor."
        )


def row_canonical(row: RowInput) -> bytes:
    """The row's content as canonical JSON (keys sorted, compact, UTF-8): its SHA-256 names the
    stored content and its length is what the storage quota counts."""
    body: dict[str, Any] = {
        "expected": row.expected,
        "graders": list(row.graders),
        "note": row.note,
        "variables": row.variables,
    }
    if row.threshold is not None:
        body["threshold"] = row.threshold
    return json.dumps(
        body,
        ensure_ascii=False,
        sort_keys=True,
        separators=(",", ":"),
    ).encode("utf-8")


def testset_storage_used(*, user_id: int) -> int:
    """Bytes of test-set row content the user stored (each distinct row once per test set)."""
    used = TestRow.objects.filter(created_by_id=user_id).aggregate(n=Sum("size"))["n"]
    return int(used or 0)


def _rows_store(*, actor: User, testset: TestSet, rows: list[RowInput]) -> list[int]:
    """The stored content id of each row, storing only content the test set does not hold yet;
    past EVAL_TESTSET_STORAGE_PER_USER bytes of new content, RateLimited (429)."""
    bodies = [row_canonical(r) for r in rows]
    shas = [hashlib.sha256(b).hexdigest() for b in bodies]
    ids: dict[str, int] = dict(
        TestRow.objects.filter(testset=testset, sha256__in=set(shas)).values_list("sha256", "pk")
    )
    new: dict[str, TestRow] = {}
    for row, body, sha in zip(rows, bodies, shas, strict=True):
        if sha in ids or sha in new:
            continue
        new[sha] = TestRow(
            testset=testset,
            sha256=sha,
            variables=row.variables,
            expected=row.expected,
            note=row.note,
            graders=list(row.graders),
            threshold=row.threshold,
            size=len(body),
            created_by=actor,
        )
    added = sum(r.size for r in new.values())
    if added:
        quota = settings.EVAL_TESTSET_STORAGE_PER_USER
        used = testset_storage_used(user_id=actor.pk)
        if used + added > quota:
            raise RateLimited(
                f"Test-set storage quota: you store {used:,} bytes of rows and this save adds"
                f" {added:,}; the limit is {quota:,} (EVAL_TESTSET_STORAGE_PER_USER).",
                retry_after=settings.EVAL_RETRY_SECONDS,
            )
        for made in TestRow.objects.bulk_create(new.values()):
            ids[made.sha256] = made.pk
    return [ids[sha] for sha in shas]


def _revision_write(
    *,
    actor: User,
    testset: TestSet,
    number: int,
    rows: list[RowInput],
    message: str,
    kept: list[int] | None = None,
) -> TestSetRevision:
    """Revision `number`: the rows of `kept` (content ids, in order) then `rows`."""
    content_ids = [*(kept or []), *_rows_store(actor=actor, testset=testset, rows=rows)]
    revision = TestSetRevision.objects.create(
        testset=testset,
        number=number,
        message=message,
        row_count=len(content_ids),
        created_by=actor,
    )
    TestCase.objects.bulk_create(
        TestCase(revision=revision, position=i, content_id=content_id)
        for i, content_id in enumerate(content_ids, start=1)
    )
    return revision


def testset_create(
    *, actor: User, prompt: Prompt, role: str, name: object, rows: list[RowInput]
) -> TestSetRevision:
    """A new test set of `prompt` with its first revision."""
    from common.limits import TITLE_MAX_CHARS

    _editor_check(role)
    if not isinstance(name, str) or not name.strip() or len(name) > TITLE_MAX_CHARS:
        raise EvalInvalid(f"name: 1–{TITLE_MAX_CHARS} characters.", field="name")
    with transaction.atomic():
        testset = TestSet.objects.create(prompt=prompt, name=name.strip(), created_by=actor)
        revision = _revision_write(actor=actor, testset=testset, number=1, rows=rows, message="")
    logger.info("testset.created", extra={"testset_id": testset.pk, "rows": len(rows)})
    return revision


def testset_revise(
    *,
    actor: User,
    testset: TestSet,
    role: str,
    rows: list[RowInput],
    message: object = "",
    based_on: int | None = None,
    append: bool = False,
) -> TestSetRevision:
    """The next revision of `testset` with `rows` (with `append`, the latest revision's rows
    then `rows`: the kept rows are pointed at, never read or copied). With `based_on` (the
    revision number the editor started from), a save that lost a race is a 409 instead of
    silently replacing the other save's rows."""
    from common.limits import MESSAGE_MAX_CHARS

    _editor_check(role)
    if not isinstance(message, str) or len(message) > MESSAGE_MAX_CHARS:
        raise EvalInvalid(f"message: at most {MESSAGE_MAX_CHARS} characters.", field="message")
    for _attempt in range(3):
        try:
            with transaction.atomic():
                latest = testset.revisions.aggregate(n=Max("number"))["n"] or 0
                if based_on is not None and based_on != latest:
                    from common.exceptions import Conflict

                    raise Conflict(
                        f"based_on: the test set moved on to revision {latest} since you opened"
                        f" r{based_on}.",
                        field="based_on",
                    )
                kept: list[int] = []
                if append and latest:
                    kept = list(
                        TestCase.objects.filter(revision__testset=testset, revision__number=latest)
                        .order_by("position")
                        .values_list("content_id", flat=True)
                    )
                limit = settings.EVAL_TESTSET_ROWS_MAX
                if len(kept) + len(rows) > limit:
                    raise EvalInvalid(f"rows: at most {limit:,} rows in a test set.", field="rows")
                return _revision_write(
                    actor=actor,
                    testset=testset,
                    number=latest + 1,
                    rows=rows,
                    message=message,
                    kept=kept,
                )
        except IntegrityError:
            continue  # a concurrent save took the number; read the latest again
    raise EvalInvalid("The test set is being saved by someone else; try again.", field="rows")


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
    from playground.content import DEFAULT_MODELS, MODEL_MAX_CHARS, PROVIDERS

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


def _row_variables(content: VersionContent, row: TestCase) -> dict[str, str]:
    """The row's values for the names the version declares (a test set serves every version of
    its prompt, and a version may not use every column). Only those are read from the
    database: a row's undeclared variables never reach the worker."""
    declared = content.get("variables") or {}
    if not declared:
        return {}  # nothing to read
    return row_values(content_ids=[row.content_id], names=declared).get(row.content_id, {})


def _repeat_parse(value: object) -> int:
    if value is None:
        return 1
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= REPEAT_MAX:
        raise EvalInvalid(f"repeat: a whole number from 1 to {REPEAT_MAX}.", field="repeat")
    return value


JUDGE_HIDDEN = "judge no longer visible"
TESTSET_HIDDEN = "test set no longer visible"


def _judge_version(*, actor: User, spec: GraderSpec) -> PromptVersion:
    """The llm-judge's version if `actor` may still read it; SourceHidden otherwise."""
    from playground.selectors import version_get_for_user

    from .exceptions import NotFound

    try:
        return version_get_for_user(user=actor, version_id=spec.options["judge_version"])
    except NotFound:
        raise SourceHidden(JUDGE_HIDDEN) from None


def sources_visible_check(*, evaluation: Evaluation) -> None:
    """SourceHidden unless the evaluation's author may still read its prompt (and so the test
    set and versions) and every judge: checked as each cell runs, so a revoked grant stops
    the cells still to run."""
    from playground.selectors import prompt_readable_by

    # The prompt as read with the cell (cell_execute joins it): when the author owns it, as
    # is usual, no query is needed; a grant is read now otherwise.
    if not prompt_readable_by(user_id=evaluation.created_by_id, prompt=evaluation.prompt):
        raise SourceHidden(TESTSET_HIDDEN)
    for body in evaluation.graders:
        spec = grader_spec_load(body)
        if spec.type == "llm-judge":
            _judge_version(actor=evaluation.created_by, spec=spec)


def judges_check(*, actor: User, specs: list[GraderSpec], where: str = "graders") -> None:
    """Every llm-judge's prompt version is one `actor` may read (a 400 naming it otherwise)."""
    from playground.selectors import version_get_for_user

    from .exceptions import NotFound

    for index, spec in enumerate(specs):
        if spec.type != "llm-judge":
            continue
        try:
            version_get_for_user(user=actor, version_id=spec.options["judge_version"])
        except NotFound:
            raise EvalInvalid(
                f"{where}.{index}.judge_version: no such prompt version visible to you.",
                field=f"{where}.{index}.judge_version",
            ) from None


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
    _editor_check(role)
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
        extra={**_extra_parsers, **(extra_graders or {})},
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
            _finished_announce(evaluation.pk, evaluation.prompt_id, Status.CANCELLED)
    if moved:
        running = Run.objects.filter(
            eval_cell__evaluation=evaluation, status__in=(Run.Status.QUEUED, Run.Status.RUNNING)
        ).select_related("version__prompt")
        for run in running:
            run_cancel(actor=evaluation.created_by, run=run)
        logger.info("evaluation.cancelled", extra={"evaluation_id": evaluation.pk})
    evaluation.refresh_from_db()
    return evaluation


# --- executing one cell -----------------------------------------------------------------------


# The claim (`_cell_claim`): one statement compiled once (prepared on PostgreSQL).
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
        _finished_announce(evaluation_id, prompt_id, Status.DONE)
        return
    # Neither matched: between the two, the evaluation stopped being queued or running (a
    # cancel, on a database that lets another writer in between); the cell is still counted.
    evaluation.update(cells_done=F("cells_done") + 1)


def _finished_announce(evaluation_id: int, prompt_id: int, status: str) -> None:
    transaction.on_commit(
        lambda: evaluation_finished.send(
            sender=Evaluation, evaluation_id=evaluation_id, prompt_id=prompt_id, status=status
        ),
        robust=True,  # a listener's failure does not fail the cell that finished it
    )


def _cell_close(
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
                    _finished_announce(evaluation_id, row[1], Status.DONE)
            return row is not None
        if row is None:
            return False
        # Only the statement that brought the count to the total sees done == total (the row is
        # locked by the update), so the evaluation's listeners hear of it once, as below.
        if row[2]:
            _finished_announce(evaluation_id, row[1], Status.DONE)
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
        _cell_close(cell.pk, evaluation.pk, status=CellStatus.CANCELLED, feed=feed)
        return CellStatus.CANCELLED
    try:
        sources_visible_check(evaluation=evaluation)
    except SourceHidden as error:
        _cell_close(cell.pk, evaluation.pk, status=CellStatus.ERROR, error=error.message, feed=feed)
        return CellStatus.ERROR
    if cell.status != CellStatus.QUEUED:
        # A redelivered running cell: its run is found (or made), executed if still queued
        # (a running one whose worker went silent is failed), then graded as the reaper would.
        try:
            run_id = _cell_run(cell)
        except (ContentInvalid, Forbidden) as error:
            _cell_close(
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
        _cell_close(cell.pk, evaluation.pk, status=CellStatus.ERROR, error=error.message, feed=feed)
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
        _cell_close(cell.pk, cell.evaluation_id, status=status, error=run.error[:2000], feed=feed)
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
        _cell_close(
            cell.pk, cell.evaluation_id, status=CellStatus.ERROR, error=error.message, feed=feed
        )
        return CellStatus.ERROR
    except SoftTimeLimitExceeded:
        raise  # the cell task closes the cell with the time limit's reason
    except Exception as error:
        # A grader that breaks (a spec stored before a check existed, a bug) fails its cell with
        # the reason; it must not leave the cell running for the reaper to trip on every minute.
        logger.exception("evaluation.cell_grading_failed", extra={"cell_id": cell.pk})
        _cell_close(
            cell.pk,
            cell.evaluation_id,
            status=CellStatus.ERROR,
            error=f"Grading failed ({type(error).__name__}); the graders could not judge this"
            " output.",
            feed=feed,
        )
        return CellStatus.ERROR
    _cell_close(
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
    _cell_close(
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
        Run.objects.filter(
            pk=cell["run_id"], status__in=(Run.Status.QUEUED, Run.Status.RUNNING)
        ).update(status=Run.Status.FAILED, finished_at=timezone.now(), error=reason)
    _cell_close(cell_id, cell["evaluation_id"], status=CellStatus.ERROR, error=reason, feed=feed)
    logger.warning("evaluation.cell_timed_out", extra={"cell_id": cell_id, "limit_s": limit})
    return EvalCell.objects.values_list("status", flat=True).get(pk=cell_id)


# Grader types other apps add (the answer-key grader of critique/): type → grade function, and
# type → spec parser (so the API and pages accept the type like a built-in one).
_extra_graders: dict[str, Callable[[GraderSpec, CellOutcome], Grade]] = {}
_extra_parsers: dict[str, Callable[..., GraderSpec]] = {}
_extra_labels: dict[str, str] = {}


def grader_register(
    *,
    type: str,  # noqa: A002
    grade_fn: Callable[[GraderSpec, CellOutcome], Grade],
    parse_fn: Callable[..., GraderSpec] | None = None,
    label: str = "",
    reason_visible: Callable[[Viewer, str], bool] | None = None,
) -> None:
    """Add a grader type (`label`: what the evaluation form says of it; it takes no options
    there). With `reason_visible(reader, secret)`, the type's reasons are shown only to readers
    it allows (given the grade's `secret`); everyone else sees the score alone."""
    if reason_visible is not None:
        grade_reason_guard_register(type=type, may_read=reason_visible)
    _extra_graders[type] = grade_fn
    if parse_fn is not None:
        _extra_parsers[type] = parse_fn
    _extra_labels[type] = label or type


def grader_types() -> tuple[str, ...]:
    """Every grader type an evaluation may name: the built-in ones, then those other apps
    registered."""
    return (*GRADER_TYPES, *(t for t in _extra_graders if t not in GRADER_TYPES))


def graders_registered() -> tuple[tuple[str, str], ...]:
    """The grader types other apps registered, with what the form says of each."""
    return tuple(_extra_labels.items())


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
    return [grade(spec, outcome, judge=judge, extra=_extra_graders) for spec in specs]


def _judge_for(cell: EvalCell) -> Callable[[GraderSpec, CellOutcome], JudgeVerdict]:
    """The llm-judge's call: the judge's prompt version run (as a Run, idempotent per cell and
    grader) with `rubric`, `output`, `expected` and `input` for whichever of those it declares."""

    def judge(spec: GraderSpec, outcome: CellOutcome) -> JudgeVerdict:
        # Read through the author's access now, not at creation: a revoked grant stops the
        # next judge call (docs/evals.md, Graders).
        version = _judge_version(actor=cell.evaluation.created_by, spec=spec)
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
            _cell_close(
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
