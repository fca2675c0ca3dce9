"""Evaluation pages: a prompt's test sets and evaluations, the test-set table editor, the
results matrix with its progress bar, cancel, export, and "Save as test case" from a run.
Parse, call one service or selector, render."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from asgiref.sync import sync_to_async
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.handlers.asgi import ASGIRequest
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from common.auth import request_actor
from common.csvcells import csv_row
from common.exceptions import DomainError, Forbidden
from playground.models import Role
from playground.runs.selectors import RunAccess, run_get_for_user
from playground.selectors import (
    prompt_access_get_for_user,
    prompt_list_visible,
    version_content,
    version_id_by_number_for_user,
    version_in_prompt,
)
from playground.text.content import PROVIDERS

from .exceptions import NotFound
from .models import TestSetRevision
from .pages import FILTERS, PromptEvalsPage, evaluation_page_build, testset_page_build
from .selectors import (
    CellResult,
    evaluation_get_for_user,
    evaluation_list_for_prompt,
    evaluation_results_stream,
    testset_get_for_user,
    testset_list_for_prompt,
    testset_rows,
)
from .services.evaluations import evaluation_cancel, evaluation_create
from .services.grader_registry import grader_types, graders_registered
from .services.testsets import (
    RowInput,
    row_json,
    testset_create,
    testset_import_file,
    testset_revise,
    testset_rows_parse,
)


def _prompt_access(request: HttpRequest, prompt_id: int) -> Any:
    try:
        return prompt_access_get_for_user(
            user=request.user, prompt_id=prompt_id, min_role=Role.VIEWER
        )
    except NotFound:
        raise Http404 from None


def _testset(request: HttpRequest, testset_id: int, revision: Any = None) -> Any:
    try:
        return testset_get_for_user(user=request.user, testset_id=testset_id, revision=revision)
    except NotFound:
        raise Http404 from None


def _evaluation(request: HttpRequest, evaluation_id: int) -> Any:
    try:
        return evaluation_get_for_user(user=request.user, evaluation_id=evaluation_id)
    except NotFound:
        raise Http404 from None


# --- a prompt's evaluations -------------------------------------------------------------------


def _graders_from_form(user: Any, post: Any) -> list[dict[str, Any]]:
    """The grader builder's fields → grader specs (blank fields add nothing)."""
    graders: list[dict[str, Any]] = [
        {"type": kind}
        for kind in post.getlist("g_registered")
        if kind in dict(graders_registered())
    ]
    if post.get("g_expected"):
        graders.append({"type": post["g_expected"]})  # equals / contains on the row's expected
    for kind in ("contains", "not-contains"):
        if post.get(f"g_{kind}"):
            graders.append({"type": kind, "value": post[f"g_{kind}"]})
    if post.get("g_regex"):
        graders.append({"type": "regex", "pattern": post["g_regex"]})
    for kind in ("json-valid", "json-schema"):
        if post.get(f"g_{kind}"):
            graders.append({"type": kind})
    for kind in ("max-latency-ms", "max-output-tokens"):
        raw = post.get(f"g_{kind}", "").strip()
        if raw:
            graders.append({"type": kind, "limit": _number(raw, kind)})
    if post.get("g_judge_rubric", "").strip():
        graders.append(
            {
                "type": "llm-judge",
                "rubric": post["g_judge_rubric"],
                "judge_version": _judge_version(user, post),
            }
        )
    return graders


def _number(raw: str, what: str) -> Any:
    try:
        return int(raw)
    except ValueError:
        raise DomainError(f"{what}: a whole number.", field=what) from None


def _chosen_version(prompt: Any, given: str | None) -> int | None:
    """The id of the version `?v=` names: `v9` by its number (what links carry), a bare
    integer by its id (older links); None for none or one not in this prompt."""
    if not given:
        return None
    try:
        return version_in_prompt(prompt=prompt, version_id=given).pk
    except NotFound:
        return None


def _judge_version(user: Any, post: Any) -> int:
    """The judge's version id from the form's prompt and version number ("3" or "v3")."""
    raw = post.get("g_judge_number", "").strip()
    number = raw[1:] if raw[:1] in ("v", "V") else raw
    if not number.isdigit():
        raise DomainError(
            "judge version: the version number of the judge prompt (3 or v3).",
            field="judge version",
        )
    try:
        return version_id_by_number_for_user(
            user=user, prompt_id=post.get("g_judge_prompt", ""), number=number
        )
    except NotFound:
        raise DomainError(
            f"judge version: the judge prompt has no v{int(number)} you can read.",
            field="judge version",
        ) from None


def _rows(count: int) -> str:
    """ "1 row", "2 rows"."""
    return f"{count} row" if count == 1 else f"{count} rows"


def _models_from_form(post: Any) -> list[dict[str, str]]:
    chosen = []
    for index in (1, 2):
        provider = post.get(f"provider_{index}", "")
        if provider:
            chosen.append({"provider": provider, "model": post.get(f"model_{index}", "").strip()})
    return chosen


@login_required
def prompt_evals_view(request: HttpRequest, prompt_id: int) -> HttpResponse:
    access = _prompt_access(request, prompt_id)
    prompt = access.prompt
    if request.method == "POST":
        return _prompt_evals_post(request, access)
    page = PromptEvalsPage(
        prompt=prompt,
        role=access.role,
        testsets=list(testset_list_for_prompt(prompt_id=prompt.pk)[:50]),
        evaluations=evaluation_list_for_prompt(prompt_id=prompt.pk),
        versions=list(prompt.versions.order_by("-number")[:50]),
        chosen_version=_chosen_version(prompt, request.GET.get("v")),
        judge_prompts=list(prompt_list_visible(user=request.user).order_by("title")[:50]),
        can_edit=access.role in (Role.OWNER, Role.EDITOR),
        providers=tuple(PROVIDERS),
        grader_types=grader_types(),
        graders_registered=graders_registered(),
    )
    return render(request, "evals/prompt_evals.html", {"section": "playground", "page": page})


def _new_testset_rows(request: HttpRequest) -> list[RowInput]:
    """A new test set's rows: the uploaded file's, or one blank row to start the table."""
    upload = request.FILES.get("file")
    if upload is None:
        return [RowInput(variables={}, expected="", note="")]
    return testset_import_file(
        actor=request_actor(request),
        upload=upload,
        judge_version=_import_judge_version(request.POST),
    )


def _prompt_evals_post(request: HttpRequest, access: Any) -> HttpResponse:
    prompt = access.prompt
    here = reverse("evals:prompt", args=[prompt.pk])
    try:
        if request.POST.get("action") == "testset":
            revision = testset_create(
                actor=request_actor(request),
                prompt=prompt,
                role=access.role,
                name=request.POST.get("name", ""),
                rows=_new_testset_rows(request),
            )
            return redirect("evals:testset", testset_id=revision.testset_id)
        testset = testset_get_for_user(user=request.user, testset_id=request.POST.get("testset"))
        evaluation = evaluation_create(
            actor=request_actor(request),
            prompt=prompt,
            role=access.role,
            revision=testset.revision,
            versions=sorted(int(v) for v in request.POST.getlist("versions") if v.isdigit()),
            models=_models_from_form(request.POST),
            graders=_graders_from_form(request.user, request.POST),
            repeat=_number(request.POST.get("repeat") or "1", "repeat"),
        )
    except NotFound:
        messages.error(request, "Choose one of this prompt's test sets.")
        return redirect(here)
    except Forbidden as error:
        raise PermissionDenied(error.message) from None
    except DomainError as error:
        messages.error(request, error.message)
        return redirect(here)
    return redirect("evals:evaluation", evaluation_id=evaluation.pk)


# --- test sets --------------------------------------------------------------------------------


def _import_judge_version(post: Any) -> int | None:
    raw = post.get("judge_version", "").strip()
    return int(_number(raw, "judge_version")) if raw else None


def _rows_from_form(post: Any, existing: Sequence[Any] = ()) -> list[dict[str, Any]]:
    """The table editor's fields → rows: `col` (the variable names, in column order), then per
    row `var-<i>-<j>`, `expected-<i>`, `note-<i>`; a row whose `delete-<i>` is ticked, or whose
    every cell is blank, is left out. Row i of `existing` (the revision the form showed) keeps
    its own graders and threshold, which the table does not edit."""
    columns = [name.strip() for name in post.getlist("col")]
    count = int(post.get("rows", "0")) if post.get("rows", "0").isdigit() else 0
    rows = []
    for i in range(min(count, 100_000)):
        if post.get(f"delete-{i}"):
            continue
        variables = {name: post.get(f"var-{i}-{j}", "") for j, name in enumerate(columns) if name}
        row = {
            "variables": variables,
            "expected": post.get(f"expected-{i}", ""),
            "note": post.get(f"note-{i}", ""),
        }
        if i < len(existing):
            kept = row_json(existing[i])
            for key in ("graders", "threshold"):
                if key in kept:
                    row[key] = kept[key]
        if any(variables.values()) or row["expected"] or row["note"]:
            rows.append(row)
    return rows


@login_required
def testset_view(request: HttpRequest, testset_id: int) -> HttpResponse:
    access = _testset(request, testset_id, request.GET.get("revision"))
    if request.method == "POST":
        return _testset_post(request, access)
    latest_version = access.testset.prompt.versions.order_by("-number").first()
    declared = (
        list((version_content(version=latest_version).get("variables") or {}).keys())
        if latest_version
        else []
    )
    page = testset_page_build(
        testset=access.testset,
        revision=access.revision,
        latest_number=access.latest_number,
        role=access.role,
        declared=declared,
    )
    return render(request, "evals/testset.html", {"section": "playground", "page": page})


def _testset_post(request: HttpRequest, access: Any) -> HttpResponse:
    here = reverse("evals:testset", args=[access.testset.pk])
    try:
        if request.POST.get("action") == "import":
            upload = request.FILES.get("file")
            if upload is None:
                raise DomainError(
                    "Choose a CSV, JSONL or promptfooconfig.yaml file to import.", field="file"
                )
            rows = testset_import_file(
                actor=request_actor(request),
                upload=upload,
                judge_version=_import_judge_version(request.POST),
            )
            message = f"Imported {_rows(len(rows))} from {upload.name}"
            append = True  # the kept rows are pointed at, not read and stored again
        else:
            rows = testset_rows_parse(
                _rows_from_form(request.POST, testset_rows(revision=access.revision))
            )
            message = request.POST.get("message", "")
            append = False
        revision = testset_revise(
            actor=request_actor(request),
            testset=access.testset,
            role=access.role,
            rows=rows,
            message=message[:500],
            based_on=access.revision.number,
            append=append,
        )
    except Forbidden as error:
        raise PermissionDenied(error.message) from None
    except DomainError as error:
        messages.error(request, error.message)
        return redirect(here)
    messages.success(request, f"Saved revision {revision.number} with {_rows(revision.row_count)}.")
    return redirect(here)


def _row_save(request: HttpRequest, run_access: RunAccess, row: RowInput) -> TestSetRevision:
    """The run's row in a new test set, or appended to one of the run's prompt (a new
    revision: its rows, then this one)."""
    run = run_access.run
    prompt = run.version.prompt
    if request.POST.get("testset") == "new":
        return testset_create(
            actor=request_actor(request),
            prompt=prompt,
            role=run_access.role,
            name=request.POST.get("name") or f"Cases from {prompt.title}"[:200],
            rows=[row],
        )
    access = testset_get_for_user(user=request.user, testset_id=request.POST.get("testset"))
    if access.testset.prompt_id != prompt.pk:
        raise NotFound
    return testset_revise(
        actor=request_actor(request),
        testset=access.testset,
        role=access.role,
        rows=[row],
        message=f"Added run #{run.pk}",
        append=True,
    )


@login_required
def run_to_testcase_view(request: HttpRequest, run_id: int) -> HttpResponse:
    """ "Save as test case": the run's variables become a row, its output the row's expected
    output, appended as a new revision of a test set of the run's prompt."""
    try:
        run_access = run_get_for_user(user=request.user, run_id=run_id)
    except NotFound:
        raise Http404 from None
    if not run_access.variables_visible:
        raise Http404  # another account's run: its values are theirs
    run = run_access.run
    prompt = run.version.prompt
    sets = list(testset_list_for_prompt(prompt_id=prompt.pk)[:50])
    if request.method != "POST":
        return render(
            request,
            "evals/run_to_testcase.html",
            {"section": "playground", "run": run, "prompt": prompt, "testsets": sets},
        )
    row = RowInput(
        variables=dict(run.variables or {}), expected=run.output, note=f"from run #{run.pk}"
    )
    try:
        revision = _row_save(request, run_access, row)
    except NotFound:
        raise Http404 from None
    except Forbidden as error:
        raise PermissionDenied(error.message) from None
    except DomainError as error:
        messages.error(request, error.message)
        return redirect("evals:from-run", run_id=run.pk)
    messages.success(
        request, f"Run #{run.pk} is row {revision.row_count} of revision {revision.number}."
    )
    return redirect("evals:testset", testset_id=revision.testset_id)


# --- evaluations ------------------------------------------------------------------------------


def _compare(request: HttpRequest, columns: int) -> tuple[int, int] | None:
    a, b = request.GET.get("a", ""), request.GET.get("b", "")
    if not (a.isdigit() and b.isdigit()):
        return None
    pair = (int(a), int(b))
    return pair if all(0 <= p < columns for p in pair) and pair[0] != pair[1] else None


@login_required
def evaluation_view(request: HttpRequest, evaluation_id: int) -> HttpResponse:
    access = _evaluation(request, evaluation_id)
    shown = request.GET.get("show", "all")
    page_number = request.GET.get("page", "1")
    page = evaluation_page_build(
        evaluation=access.evaluation,
        user=request.user,
        user_id=request_actor(request).pk,
        shown_filter=shown if shown in FILTERS else "all",
        page=int(page_number) if page_number.isdigit() else 1,
        compare=_compare(request, access.evaluation.targets.count()),
    )
    template = (
        "evals/_progress.html"
        if request.GET.get("fragment") == "progress"
        else "evals/evaluation.html"
    )
    return render(request, template, {"section": "playground", "page": page})


@login_required
@require_POST
def evaluation_cancel_view(request: HttpRequest, evaluation_id: int) -> HttpResponse:
    access = _evaluation(request, evaluation_id)
    try:
        evaluation_cancel(actor=request_actor(request), evaluation=access.evaluation)
    except Forbidden as error:
        raise PermissionDenied(error.message) from None
    messages.success(
        request, "Cancelled: no new cell starts; running ones stop at their next write."
    )
    return redirect("evals:evaluation", evaluation_id=evaluation_id)


CSV_COLUMNS = (
    "row",
    "version",  # as pages name it (v9); the database id is `version_id`
    "version_id",
    "provider",
    "model",
    "repeat",
    "status",
    "passed",
    "score",
    "latency_ms",
    "output_tokens",
    "output",
    "grades",
)


def _csv_row(r: CellResult) -> list[Any]:
    grades = "; ".join(
        f"{g['type']}: {'pass' if g['passed'] else 'fail'} ({g['reason']})" for g in r.grades
    )
    return [
        r.row_position,
        f"v{r.version_number}",
        r.version_id,
        r.provider,
        r.model,
        r.repeat_index,
        r.status,
        "" if r.passed is None else r.passed,
        "" if r.score is None else r.score,
        r.latency_ms or "",
        r.output_tokens or "",
        r.output,
        grades,
    ]


def _csv_lines(results: Iterator[CellResult]) -> Iterator[str]:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CSV_COLUMNS)
    for result in results:
        writer.writerow(csv_row(_csv_row(result)))
        yield out.getvalue()
        out.seek(0)
        out.truncate()
    yield out.getvalue()


# An export's pieces are gathered up to this many characters per write.
EXPORT_PIECE_CHARS = 64 * 1024


def _pieces(lines: Iterator[str]) -> list[str]:
    """The next lines of an export, up to EXPORT_PIECE_CHARS ([] at the end)."""
    taken: list[str] = []
    size = 0
    for line in lines:
        taken.append(line)
        size += len(line)
        if size >= EXPORT_PIECE_CHARS:
            break
    return taken


async def _async_body(lines: Iterator[str]) -> AsyncIterator[str]:
    """The export under ASGI: Django would read a sync iterator whole into a list before
    sending it, so each piece is pulled on the request's own thread (the one whose database
    connection holds the cursor) as the previous one is sent."""
    pull = sync_to_async(_pieces, thread_sensitive=True)
    while pieces := await pull(lines):
        yield "".join(pieces)


def _json_lines(results: Iterator[CellResult]) -> Iterator[str]:
    yield "["
    first = True
    for result in results:
        yield ("\n" if first else ",\n") + json.dumps(result.export_json(), ensure_ascii=False)
        first = False
    yield "\n]\n"


@login_required
def evaluation_export_view(
    request: HttpRequest, evaluation_id: int, fmt: str
) -> StreamingHttpResponse:
    """Every cell with its output and grades, as CSV or JSON, streamed from one cursor a chunk
    of cells at a time (evals.selectors.evaluation_results_stream): a worker holds a chunk,
    never the whole matrix."""
    if fmt not in ("csv", "json"):
        raise Http404
    access = _evaluation(request, evaluation_id)
    results = evaluation_results_stream(evaluation=access.evaluation, reader=request.user)
    lines = _json_lines(results) if fmt == "json" else _csv_lines(results)
    body: Iterator[str] | AsyncIterator[str] = (
        _async_body(lines) if isinstance(request, ASGIRequest) else lines
    )
    response = StreamingHttpResponse(
        body, content_type="application/json" if fmt == "json" else "text/csv; charset=utf-8"
    )
    name = f"evaluation-{evaluation_id}.{fmt}"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
