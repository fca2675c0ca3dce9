"""Writes of test sets (docs/evals.md, Test sets).

`testset_create` writes revision 1; `testset_revise` writes the next revision with the rows it is
given (rows are never edited in place). Rows come from the API's JSON, from an uploaded file
(JSON lines, CSV or a promptfoo file), and go out as CSV, JSON lines or promptfoo rows.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import logging
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.files.uploadedfile import UploadedFile
from django.db import IntegrityError, transaction
from django.db.models import Max, Sum

from common.csvcells import csv_row
from common.exceptions import Forbidden, RateLimited
from common.jsonlimits import JsonRefused, json_loads_limited, json_surrogate_path
from playground.models import Prompt, PromptVersion, Role
from playground.selectors import version_content
from playground.text.content import PLACEHOLDER

from ..exceptions import EvalInvalid
from ..graders import grader_spec_request, grader_specs_parse
from ..models import TestCase, TestRow, TestSet, TestSetRevision
from ..promptfoo import is_promptfoo_file, promptfoo_parse
from ..selectors import RowData
from .grader_registry import spec_parsers

logger = logging.getLogger(__name__)

VALUE_MAX_CHARS = 100_000
VARIABLE_NAME_MAX_CHARS = 100
IMPORT_MAX_BYTES = 5 * 1024 * 1024
# A row is {variables: {name: text}, expected?, note?}: anything nested deeper is not a row.
IMPORT_LINE_MAX_DEPTH = 4


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
    from ..models import NOTE_MAX_CHARS

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
        raw, extra=spec_parsers, where_prefix=f"{where}.graders", allow_empty=True
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

    from ..exceptions import NotFound

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
    from ..promptfoo import ExportRow, promptfoo_export

    return promptfoo_export(
        title=f"{testset.name} (r{revision.number})",
        rows=[
            ExportRow(r.variables, r.expected, r.note, list(r.graders), r.threshold) for r in rows
        ],
        content=version_content(version=version) if version is not None else None,
        version_label=(f"{testset.prompt.title} v{version.number}" if version is not None else ""),
        source_url=source_url,
    )


def editor_check(role: str) -> None:
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

    editor_check(role)
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

    editor_check(role)
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
