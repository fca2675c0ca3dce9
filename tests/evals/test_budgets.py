"""Graders under a budget that cannot hang a worker (issue #31; docs/evals.md, "Graders under a
budget"): JSON Schema patterns run by `regex` with a timeout, schema size and `$ref` limits
checked at creation, a reaper that survives one bad cell, a cell given up after its grading
started too often, imports that refuse deep nesting and lone surrogates naming the line, CSV
exports with formula cells neutralised.

The time-limit half (a real Celery worker's soft limit on a poisoned cell) is in
tests/evals/test_workers.py."""

from __future__ import annotations

import csv
import io
import json
import multiprocessing

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from evals.graders import CellOutcome, grade, grader_specs_parse
from evals.models import EvalCell, Evaluation, TestSetRevision
from evals.services import testsets
from evals.services.cells import _cell_run, cell_grade
from evals.services.evaluations import evaluation_create, evaluations_reap
from playground.models import Role
from playground.runs.services import run_execute
from tests.factories import api_client_for, make_user
from tests.playground.exportkit.providers import Behaviour
from tests.playground.factories import make_prompt

pytestmark = pytest.mark.django_db

# The issue's pattern, and one that even `regex` needs exponential time for on a long word.
ISSUE_PATTERN = r"^(\w+\s?)*$"
POISON = r"^(\w|\w\w)*$"
LONG_WORD = "a" * 60 + "!"


@pytest.fixture
def owner():
    return make_user("owner")


def _schema_spec(schema):
    return grader_specs_parse([{"type": "json-schema", "schema": schema}])[0]


def _grade_in_child(schema, output, answer) -> None:
    answer.put(grade(_schema_spec(schema), CellOutcome(output=output)).reason)


def _finished_reason(schema, output: str) -> str:
    """The grade's reason, graded in a child process: the old grader held the CPU inside `re`
    (no signal, no timeout reaches it), and this test must end either way."""
    context = multiprocessing.get_context("fork")
    answer = context.Queue()
    child = context.Process(target=_grade_in_child, args=(schema, output, answer), daemon=True)
    child.start()
    child.join(60)  # a hang detector, not a performance figure: the budget is a quarter second
    if child.is_alive():
        child.kill()
        child.join()
        pytest.fail("grading the poisoned schema did not finish")
    return str(answer.get(timeout=5))


def test_a_poisoned_schema_pattern_finishes_its_grade():
    for schema, output in [
        ({"properties": {"a": {"pattern": POISON}}}, json.dumps({"a": LONG_WORD})),
        ({"patternProperties": {POISON: {}}}, json.dumps({LONG_WORD: 1})),
        (
            {"patternProperties": {POISON: {}}, "additionalProperties": False},
            json.dumps({LONG_WORD: 1}),
        ),
        ({"properties": {"a": {"pattern": ISSUE_PATTERN}}}, json.dumps({"a": "a" * 40 + "!"})),
    ]:
        reason = _finished_reason(schema, output)
        assert "longer than" in reason or "does not match" in reason, reason


def test_every_schema_pattern_runs_under_the_regex_budget(settings):
    """With no budget at all, every pattern keyword gives up at once (so each one is run by the
    budgeted matcher, never by jsonschema's `re`)."""
    settings.EVAL_REGEX_BUDGET_SECONDS = 0
    for schema, value in [
        ({"properties": {"a": {"pattern": "^x"}}}, {"a": "xyz"}),
        ({"patternProperties": {"^x": {"type": "string"}}}, {"xy": "s"}),
        (
            {
                "properties": {"b": {}},
                "additionalProperties": False,
                "patternProperties": {"^x": {}},
            },
            {"xy": 1},
        ),
    ]:
        result = grade(_schema_spec(schema), CellOutcome(output=json.dumps(value)))
        assert not result.passed
        assert "longer than 0 s" in result.reason, (schema, result.reason)


@pytest.mark.parametrize(
    ("schema", "needle"),
    [
        ({"$ref": "#"}, "recursive"),
        ({"properties": {"next": {"$ref": "#"}}}, "recursive"),
        (
            {
                "$defs": {"a": {"items": {"$ref": "#/$defs/b"}}, "b": {"$ref": "#/$defs/a"}},
                "$ref": "#/$defs/a",
            },
            "recursive",
        ),
        ({"$ref": "https://example.com/schema.json"}, "only local references"),
        ({"$ref": "#/$defs/missing"}, "points to nothing"),
        ({"$dynamicRef": "#meta"}, "only local references"),
        (
            # each level uses the next twice: 2¹⁶ parts once expanded
            {
                "$defs": {
                    **{f"d{i}": {"anyOf": [{"$ref": f"#/$defs/d{i + 1}"}] * 2} for i in range(16)},
                    "d16": {"type": "string"},
                },
                "$ref": "#/$defs/d0",
            },
            "expanded",
        ),
        ({"enum": ["x" * 70_000]}, "bytes of JSON"),
    ],
)
def test_a_schema_past_its_limits_is_a_400_naming_the_field(schema, needle):
    owner = make_user("schemer")
    prompt, version = make_prompt(owner, provider="echo", model="echo-1")
    client = api_client_for(owner)
    testset = client.post(
        f"/api/v1/prompts/{prompt.pk}/testsets/",
        {"name": "t", "rows": [{"variables": {"design": "x"}}]},
        format="json",
    ).json()
    response = client.post(
        f"/api/v1/prompts/{prompt.pk}/evals/",
        {
            "testset": testset["id"],
            "versions": [version.pk],
            "graders": [
                {"type": "contains", "value": "x"},
                {"type": "json-schema", "schema": schema},
            ],
        },
        format="json",
    )
    assert response.status_code == 400, response.content
    assert response.json()["field"] == "graders.1.schema"
    assert needle in response.json()["detail"]
    assert not Evaluation.objects.exists()


def test_a_versions_recursive_response_format_is_a_400_for_a_schemaless_grader(owner):
    """A `json-schema` grader with no schema of its own uses each version's response format,
    which is held to the same limits."""
    recursive = {"name": "r", "schema": {"$ref": "#"}}
    prompt, version = make_prompt(owner, provider="echo", model="echo-1", response_format=recursive)
    client = api_client_for(owner)
    testset = client.post(
        f"/api/v1/prompts/{prompt.pk}/testsets/",
        {"name": "t", "rows": [{"variables": {"design": "x"}}]},
        format="json",
    ).json()
    response = client.post(
        f"/api/v1/prompts/{prompt.pk}/evals/",
        {"testset": testset["id"], "versions": [version.pk], "graders": [{"type": "json-schema"}]},
        format="json",
    )
    assert response.status_code == 400, response.content
    assert response.json()["field"] == "graders.0.schema"
    assert "v1's response format" in response.json()["detail"]
    assert "recursive" in response.json()["detail"]


def test_a_local_acyclic_ref_is_still_accepted_and_applied():
    spec = _schema_spec(
        {"$defs": {"item": {"type": "string"}}, "type": "array", "items": {"$ref": "#/$defs/item"}}
    )
    assert grade(spec, CellOutcome(output='["a", "b"]')).passed
    assert not grade(spec, CellOutcome(output='["a", 1]')).passed


def _finished_unseen(owner, prompt, version, graders) -> EvalCell:
    """A cell whose run finished while no worker was there to grade it."""
    revision = testsets.testset_create(
        actor=owner,
        prompt=prompt,
        role=Role.OWNER,
        name="t",
        rows=testsets.testset_rows_parse([{"variables": {"design": "x"}}]),
    )
    evaluation = evaluation_create(
        actor=owner,
        prompt=prompt,
        role=Role.OWNER,
        revision=revision,
        versions=[version.pk],
        graders=graders,
    )
    cell = EvalCell.objects.select_related("evaluation", "target", "row").get(evaluation=evaluation)
    EvalCell.objects.filter(pk=cell.pk).update(status="running")
    run_execute(run_id=_cell_run(cell))
    return cell


def test_the_reaper_survives_a_bad_cell_and_recovers_the_others(owner, providers):
    """A cell whose grader was stored before the checks (a recursive `$ref`, a grader type no
    app registers any more) used to crash the reaper every minute, so nobody's stalled cell
    recovered; now the bad cells end with a reason and the good one is graded."""
    prompt, version = make_prompt(owner)  # anthropic, through the loopback server
    providers.plan(*[Behaviour(text='{"a": 1}')] * 3)
    bad_ref = _finished_unseen(owner, prompt, version, [{"type": "json-valid"}])
    Evaluation.objects.filter(pk=bad_ref.evaluation_id).update(
        graders=[{"type": "json-schema", "schema": {"$ref": "#"}}]
    )
    gone = _finished_unseen(owner, prompt, version, [{"type": "json-valid"}])
    Evaluation.objects.filter(pk=gone.evaluation_id).update(graders=[{"type": "retired-grader"}])
    good = _finished_unseen(owner, prompt, version, [{"type": "json-valid"}])

    evaluations_reap()

    statuses = {c.pk: c for c in EvalCell.objects.filter(pk__in=[bad_ref.pk, gone.pk, good.pk])}
    assert (statuses[good.pk].status, statuses[good.pk].passed) == ("graded", True)
    assert statuses[bad_ref.pk].status == "graded"
    assert "recursive" in statuses[bad_ref.pk].grades[0]["reason"]
    assert statuses[gone.pk].status == "error"
    assert "Grading failed" in statuses[gone.pk].error
    assert not EvalCell.objects.filter(status="running").exists()


def test_a_cell_whose_grading_never_finishes_is_given_up(owner, inline_runs, settings):
    """Each start of a cell's grading is counted; a cell whose grading killed its worker that
    many times is an error instead of a message handed over for ever."""
    prompt, version = make_prompt(owner, provider="echo", model="echo-1")
    cell = _finished_unseen(owner, prompt, version, [{"type": "contains", "value": "Echo"}])
    EvalCell.objects.filter(pk=cell.pk).update(grade_attempts=settings.EVAL_CELL_GRADE_ATTEMPTS_MAX)
    assert cell_grade(cell_id=cell.pk) == "error"
    cell.refresh_from_db()
    assert "never finished" in cell.error
    assert Evaluation.objects.get(pk=cell.evaluation_id).status == "done"


# --- imports ------------------------------------------------------------------------------------


def _import(client, testset_id: int, name: str, data: bytes):
    return client.post(
        f"/api/v1/testsets/{testset_id}/import/",
        {"file": SimpleUploadedFile(name, data)},
        format="multipart",
    )


def test_jsonl_import_refuses_deep_nesting_and_lone_surrogates_naming_the_line(owner):
    prompt, _ = make_prompt(owner, provider="echo", model="echo-1")
    client = api_client_for(owner)
    testset = client.post(
        f"/api/v1/prompts/{prompt.pk}/testsets/",
        {"name": "t", "rows": [{"variables": {"design": "x"}}]},
        format="json",
    ).json()
    good = b'{"variables": {"design": "fine"}}\n'
    for data, needle in [
        (good + b"[" * 100_000 + b"]" * 100_000 + b"\n", "line 2 nests deeper"),
        (good + b'{"variables": {"design": ' + b"[" * 50 + b"]" * 50 + b"}}\n", "line 2 nests"),
        (good + good + b'{"design": "\\ud800"}\n', "line 3, design: must not contain lone"),
        (good + b'{"variables": {"\\udfff": "x"}}\n', "line 2"),
    ]:
        response = _import(client, testset["id"], "rows.jsonl", data)
        assert response.status_code == 400, response.content[:200]
        assert needle in response.json()["detail"]
        assert response.json()["field"] == "file"
    assert TestSetRevision.objects.filter(testset_id=testset["id"]).count() == 1


# --- CSV exports ----------------------------------------------------------------------------------

FORMULAS = ['=HYPERLINK("http://x")', "+1+1", "-2+3", "@SUM(A1)", "\tcmd", "\rcmd"]


def test_testset_csv_export_neutralises_formula_cells(owner):
    prompt, _ = make_prompt(owner, provider="echo", model="echo-1")
    client = api_client_for(owner)
    rows = [{"variables": {"design": f}, "expected": f, "note": f} for f in FORMULAS]
    testset = client.post(
        f"/api/v1/prompts/{prompt.pk}/testsets/", {"name": "t", "rows": rows}, format="json"
    ).json()
    exported = client.get(f"/api/v1/testsets/{testset['id']}/export/?format=csv")
    records = list(csv.reader(io.StringIO(exported.content.decode())))
    for column in range(3):
        assert [r[column] for r in records[1:]] == ["'" + f for f in FORMULAS]
    # JSONL keeps the text exactly.
    jsonl = client.get(f"/api/v1/testsets/{testset['id']}/export/?format=jsonl").content
    assert [json.loads(line)["expected"] for line in jsonl.splitlines()] == FORMULAS


def test_evaluation_csv_export_neutralises_formula_cells(
    owner, providers, settings, django_capture_on_commit_callbacks
):
    settings.EVAL_EAGER_MODE = "inline"
    prompt, version = make_prompt(owner)  # anthropic, through the loopback server
    providers.plan(*[Behaviour(text=f) for f in FORMULAS])
    client = api_client_for(owner)
    rows = [{"variables": {"design": f"row {i}"}} for i in range(len(FORMULAS))]
    testset = client.post(
        f"/api/v1/prompts/{prompt.pk}/testsets/", {"name": "t", "rows": rows}, format="json"
    ).json()
    with django_capture_on_commit_callbacks(execute=True):
        started = client.post(
            f"/api/v1/prompts/{prompt.pk}/evals/",
            {
                "testset": testset["id"],
                "versions": [version.pk],
                "graders": [{"type": "json-valid"}],
            },
            format="json",
        )
    assert started.status_code == 201, started.content
    client.force_login(owner)
    body = b"".join(
        client.get(f"/evals/{started.json()['id']}/export.csv").streaming_content
    ).decode()
    records = list(csv.DictReader(io.StringIO(body)))
    assert sorted(r["output"] for r in records) == sorted("'" + f for f in FORMULAS)
    for record in records:
        for cell in record.values():
            assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), cell
