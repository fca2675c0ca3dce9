"""promptfoo configs in and out (evals/promptfoo.py): every mapped assertion type graded as
promptfoo's docs say, `not-` forms, weights and thresholds, safe YAML, the API's import and
export, and the shipped example imported, evaluated, exported and re-imported."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from django.core.files.uploadedfile import SimpleUploadedFile

from evals.exceptions import EvalInvalid
from evals.graders import (
    CellOutcome,
    Grade,
    JudgeVerdict,
    cell_verdict,
    grade,
    grader_spec_load,
)
from evals.models import EvalCell, TestCase
from evals.promptfoo import promptfoo_parse
from tests.factories import api_client_for, make_user
from tests.playground.factories import make_prompt

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "promptfooconfig.yaml"


def _config(asserts: list[dict], **test: object) -> bytes:
    body = {"tests": [{"vars": {"design": "a cache"}, "assert": asserts, **test}]}
    return yaml.safe_dump(body).encode()


def _verdict(assertion: dict, outcome: CellOutcome, *, judge=None) -> Grade:
    (row,) = promptfoo_parse(
        data=_config([assertion]), filename="promptfooconfig.yaml", judge_version=7
    ).rows
    (spec,) = [grader_spec_load(body) for body in row.graders]
    return grade(spec, outcome, judge=judge)


def out(text: str, **kw: object) -> CellOutcome:
    return CellOutcome(output=text, **kw)  # type: ignore[arg-type]


# (assertion, output, passes) — each as promptfoo's docs describe the type.
CASES = [
    ({"type": "equals", "value": "Paris"}, "Paris", True),
    # promptfoo's equals is exact: a trailing newline fails it (Redline's own equals trims).
    ({"type": "equals", "value": "Paris"}, "Paris\n", False),
    ({"type": "not-equals", "value": "Paris"}, "Rome", True),
    ({"type": "not-equals", "value": "Paris"}, "Paris", False),
    ({"type": "contains", "value": "cache"}, "a cache here", True),
    ({"type": "contains", "value": "Cache"}, "a cache here", False),
    ({"type": "not-contains", "value": "TODO"}, "done", True),
    ({"type": "not-contains", "value": "TODO"}, "a TODO", False),
    ({"type": "icontains", "value": "POSTGRESQL"}, "use PostgreSQL", True),
    # Redline folds Unicode case (ß ~ SS); promptfoo lower-cases: docs/evals.md says so.
    ({"type": "icontains", "value": "STRASSE"}, "die Straße", True),
    ({"type": "not-icontains", "value": "as an ai"}, "As an AI model", False),
    ({"type": "not-icontains", "value": "as an ai"}, "Sure.", True),
    ({"type": "starts-with", "value": "Review"}, "Review: ok", True),
    ({"type": "starts-with", "value": "Review"}, " Review: ok", False),
    ({"type": "not-starts-with", "value": "Sorry"}, "Sorry, no", False),
    ({"type": "contains-any", "value": ["cdn", "cache"]}, "a cache", True),
    ({"type": "contains-any", "value": "cdn, queue"}, "a cache", False),
    ({"type": "contains-all", "value": ["a", "cache"]}, "a cache", True),
    ({"type": "contains-all", "value": "cache, queue"}, "a cache", False),
    ({"type": "not-contains-all", "value": "cache, queue"}, "a cache", True),
    ({"type": "icontains-any", "value": ["CACHE"]}, "a cache", True),
    ({"type": "icontains-all", "value": ["CACHE", "QUEUE"]}, "a cache", False),
    ({"type": "regex", "value": r"\d{3} ms"}, "p99 250 ms", True),
    ({"type": "not-regex", "value": r"\bTODO\b"}, "a TODO", False),
    ({"type": "is-json"}, '{"a": 1}', True),
    ({"type": "is-json"}, "{a: 1}", False),
    ({"type": "is-json"}, '{"a": NaN}', False),
    ({"type": "not-is-json"}, "prose", True),
    ({"type": "is-json", "value": {"type": "object", "required": ["a"]}}, '{"b": 1}', False),
    ({"type": "is-json", "value": {"type": "object", "required": ["a"]}}, '{"a": 1}', True),
    ({"type": "contains-json"}, 'Here: {"a": [1, 2]} done', True),
    ({"type": "contains-json"}, "no json {here", False),
    ({"type": "contains-json"}, 'only {"a": Infinity}', False),
    (
        {"type": "contains-json", "value": {"type": "object", "required": ["b"]}},
        'x {"a": 1} y {"b": 2}',
        True,
    ),
    ({"type": "not-contains-json"}, "prose", True),
    ({"type": "levenshtein", "value": "kitten"}, "sitting", True),  # 3 ≤ default 5
    ({"type": "levenshtein", "value": "kitten", "threshold": 2}, "sitting", False),
    ({"type": "levenshtein", "value": "abc", "threshold": 0}, "abc", True),
    ({"type": "not-levenshtein", "value": "kitten", "threshold": 2}, "sitting", True),
]


@pytest.mark.parametrize(("assertion", "output", "passes"), CASES)
def test_each_mapped_assertion_type_grades_as_promptfoo_documents_it(assertion, output, passes):
    result = _verdict(assertion, out(output))
    assert result.passed is passes, result.reason


def test_latency_and_cost_take_their_limit_from_threshold():
    latency = {"type": "latency", "threshold": 500}
    assert _verdict(latency, out("x", latency_ms=499)).passed
    assert not _verdict(latency, out("x", latency_ms=501)).passed
    assert _verdict({"type": "not-latency", "threshold": 500}, out("x", latency_ms=900)).passed
    cost = {"type": "cost", "threshold": 0.002}
    assert _verdict(cost, out("x", cost_usd=0.001)).passed
    assert not _verdict(cost, out("x", cost_usd=0.003)).passed
    assert not _verdict(cost, out("x")).passed  # no price known: it fails, saying so


def test_llm_rubric_becomes_the_judge_with_its_threshold():
    def judge(spec, outcome):
        assert spec.value == "Mentions a cache"
        return JudgeVerdict(score=0.7, reason="it does")

    assertion = {"type": "llm-rubric", "value": "Mentions a cache"}
    assert _verdict(assertion, out("x"), judge=judge).passed
    assert not _verdict({**assertion, "threshold": 0.8}, out("x"), judge=judge).passed
    negated = _verdict({**assertion, "type": "not-llm-rubric"}, out("x"), judge=judge)
    assert not negated.passed


def test_assertion_values_are_filled_from_the_tests_vars():
    result = _verdict({"type": "contains", "value": "{{ design }}"}, out("about a cache"))
    assert result.passed


def test_weights_and_thresholds_decide_a_cell_as_promptfoo_scores_a_test():
    asserts = [
        {"type": "contains", "value": "cache", "weight": 3},
        {"type": "is-json", "weight": 1},
    ]
    (row,) = promptfoo_parse(
        data=_config(asserts, threshold=0.7), filename="c.yaml", judge_version=None
    ).rows
    assert row.threshold == 0.7
    specs = [grader_spec_load(b) for b in row.graders]
    grades = [grade(s, out("a cache")) for s in specs]
    # weighted score 3/4: passes the 0.7 threshold although is-json failed
    verdict = cell_verdict(specs, grades, threshold=row.threshold)
    assert (verdict.passed, verdict.score) == (True, 0.75)
    assert not cell_verdict(specs, grades, threshold=0.8).passed
    assert not cell_verdict(specs, grades).passed  # no threshold: every grader must pass
    assert cell_verdict(specs, grades, threshold=0).passed is False  # 0 is no threshold


def test_default_test_asserts_come_first_and_vars_merge():
    data = yaml.safe_dump(
        {
            "defaultTest": {
                "vars": {"tone": "dry"},
                "assert": [{"type": "contains", "value": "x"}],
                "threshold": 0.5,
            },
            "tests": [{"vars": {"design": "d"}, "assert": [{"type": "is-json"}]}],
        }
    ).encode()
    (row,) = promptfoo_parse(data=data, filename="p.yaml", judge_version=None).rows
    assert row.variables == {"tone": "dry", "design": "d"}
    assert [g["type"] for g in row.graders] == ["contains", "json-valid"]
    assert row.threshold == 0.5


@pytest.mark.parametrize(
    ("data", "named"),
    [
        (_config([{"type": "javascript", "value": "output.length > 3"}]), "javascript"),
        (_config([{"type": "similar", "value": "x"}]), "similar"),
        (_config([{"type": "not-rouge-n", "value": "x"}]), "not-rouge-n"),
        (_config([{"type": "contains", "value": "x", "transform": "output"}]), "transform"),
        (_config([{"type": "llm-rubric", "value": "good"}]), "judge_version"),
        (_config([{"type": "contains", "value": "{{ missing }}"}]), "template"),
        (_config([{"type": "is-json", "value": "file://schema.json"}]), "file://"),
        (_config([{"type": "latency"}]), "threshold"),
        (b"tests: file://tests/*.yaml\n", "tests"),
        (b"tests:\n  - vars: {design: [a, b]}\n", "list"),
        (b"!!python/object/apply:os.system ['true']\n", "YAML"),
        (b"a: [\n", "YAML"),
    ],
)
def test_what_cannot_be_imported_is_refused_naming_it(data, named):
    judge = None if named == "judge_version" else 3
    with pytest.raises(EvalInvalid) as caught:
        promptfoo_parse(data=data, filename="promptfooconfig.yaml", judge_version=judge)
    assert named in caught.value.message


def test_an_alias_bomb_is_refused_without_expanding_it():
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join(['*a' + str(i - 1)] * 10)}]" for i in range(1, 9)]
    lines += ["tests: [{vars: {design: d}, assert: [{type: contains-any, value: *a8}]}]"]
    with pytest.raises(EvalInvalid) as caught:
        promptfoo_parse(data="\n".join(lines).encode(), filename="c.yaml", judge_version=None)
    assert "values" in caught.value.message


def test_promptfoo_csv_with_expected_columns():
    data = (
        b"design,__expected,__expected2,__description\n"
        b"a cache,contains: cache,not-icontains: TODO,first\n"
        b"a queue,A queue.,levenshtein(2): a queu,second\n"
        b'a db,is-json,"icontains-any: DB, database",third\n'
    )
    rows = promptfoo_parse(data=data, filename="tests.csv", judge_version=None).rows
    assert [r.note for r in rows] == ["first", "second", "third"]
    assert [(g["type"], g.get("value")) for g in rows[0].graders] == [
        ("contains", "cache"),
        ("not-contains", "TODO"),
    ]
    assert rows[1].expected == "A queue."
    assert rows[1].graders[0] == {
        "type": "equals",
        "value": "A queue.",
        "ignore_case": False,
        "trim": False,
    }
    assert rows[1].graders[1] == {"type": "levenshtein", "value": "a queu", "limit": 2.0}
    assert rows[2].graders[1]["values"] == ["DB", "database"]


# --- through the API --------------------------------------------------------------------------


@pytest.fixture
def owner(db):
    return make_user("owner")


@pytest.fixture
def prompt(owner):
    prompt, _ = make_prompt(owner, provider="echo", model="echo-1", system="")
    return prompt


def _upload(client, prompt, data: bytes, name="promptfooconfig.yaml", **extra):
    return client.post(
        f"/api/v1/prompts/{prompt.pk}/testsets/import/",
        {"file": SimpleUploadedFile(name, data), **extra},
        format="multipart",
    )


def _rows(body):
    return [
        (r["variables"], r["expected"], r["note"], r["graders"], r["threshold"])
        for r in body["rows"]
    ]


def test_the_example_imports_evaluates_exports_and_reimports_the_same(
    owner, prompt, settings, django_capture_on_commit_callbacks
):
    settings.EVAL_EAGER_MODE = "inline"
    settings.RUN_ECHO_DELAY_MS = 0
    client = api_client_for(owner)
    imported = _upload(client, prompt, EXAMPLE.read_bytes())
    assert imported.status_code == 201, imported.content
    body = imported.json()
    assert body["name"] == "Design review smoke tests"
    assert len(body["rows"]) == 4
    first = body["rows"][0]
    assert [g["type"] for g in first["graders"]] == [
        "not-contains",
        "max-latency-ms",
        "contains",
        "contains-any",
        "starts-with",
    ]
    assert first["graders"][4]["weight"] == 2 and first["graders"][4]["metric"] == "framing"
    assert body["rows"][1]["threshold"] == 0.6

    # evaluate: no evaluation-level grader needed, every row brings its own
    with django_capture_on_commit_callbacks(execute=True):
        started = client.post(
            f"/api/v1/prompts/{prompt.pk}/evals/",
            {"testset": body["id"], "versions": [prompt.versions.get().pk], "graders": []},
            format="json",
        )
    assert started.status_code == 201, started.content
    cells = list(EvalCell.objects.filter(evaluation_id=started.json()["id"]))
    assert len(cells) == 4 and all(c.status == "graded" for c in cells)
    by_row = {c.row.position: c for c in cells}
    # row 2: is-json fails on the echo's prose, the 0.6 threshold passes the row at 4/5
    assert [g["passed"] for g in by_row[2].grades] == [True, True, True, True, False]
    assert by_row[2].passed and by_row[2].score == pytest.approx(0.8)

    exported = client.get(f"/api/v1/testsets/{body['id']}/export/?format=promptfoo")
    assert exported.status_code == 200
    assert exported["Content-Type"].startswith("application/yaml")
    config = yaml.safe_load(exported.content)
    assert config["providers"] == [
        {"id": "echo", "config": {"temperature": 0.5, "max_tokens": 512}}
    ]
    assert "{{design}}" in config["prompts"][0]["raw"]
    again = _upload(client, prompt, exported.content)
    assert again.status_code == 201, again.content
    assert _rows(again.json()) == _rows(body)


def test_llm_rubric_round_trips_with_its_judge_and_an_unreadable_judge_is_refused(owner, prompt):
    client = api_client_for(owner)
    judge_prompt, judge = make_prompt(owner, title="Judge", provider="echo", model="echo-1")
    data = _config([{"type": "llm-rubric", "value": "Names a cache", "threshold": 0.6}])
    made = _upload(client, prompt, data, judge_version=judge.pk)
    assert made.status_code == 201, made.content
    (grader,) = made.json()["rows"][0]["graders"]
    assert grader == {
        "type": "llm-judge",
        "rubric": "Names a cache",
        "judge_version": judge.pk,
        "threshold": 0.6,
    }
    exported = client.get(f"/api/v1/testsets/{made.json()['id']}/export/?format=promptfoo")
    again = _upload(client, prompt, exported.content, judge_version=judge.pk)
    assert _rows(again.json()) == _rows(made.json())

    stranger = make_user("stranger")
    _, theirs = make_prompt(stranger, title="Theirs", provider="echo", model="echo-1")
    refused = _upload(client, prompt, data, judge_version=theirs.pk)
    assert refused.status_code == 400
    assert refused.json()["field"] == "judge_version"


def test_an_unsupported_assertion_is_a_400_naming_it_and_nothing_is_written(owner, prompt):
    client = api_client_for(owner)
    before = TestCase.objects.count()
    response = _upload(client, prompt, _config([{"type": "python", "value": "True"}]))
    assert response.status_code == 400
    assert "“python”" in response.json()["detail"]
    assert response.json()["field"] == "tests.0.assert.0.type"
    assert TestCase.objects.count() == before


def test_an_export_refuses_a_grader_promptfoo_cannot_run(owner, prompt):
    client = api_client_for(owner)
    rows = [{"variables": {"design": "d"}, "graders": [{"type": "max-output-tokens", "limit": 5}]}]
    made = client.post(
        f"/api/v1/prompts/{prompt.pk}/testsets/", {"name": "t", "rows": rows}, format="json"
    )
    assert made.status_code == 201, made.content
    response = client.get(f"/api/v1/testsets/{made.json()['id']}/export/?format=promptfoo")
    assert response.status_code == 400
    assert "max-output-tokens" in response.json()["detail"]


def test_a_viewer_cannot_import(owner, prompt):
    from playground.services import grant_set

    viewer = make_user("viewer")
    grant_set(actor=owner, prompt=prompt, username=viewer.username, role="viewer")
    response = _upload(api_client_for(viewer), prompt, EXAMPLE.read_bytes())
    assert response.status_code == 403
    outsider = _upload(api_client_for(make_user("outsider")), prompt, EXAMPLE.read_bytes())
    assert outsider.status_code == 404


@pytest.mark.parametrize(
    ("row", "field"),
    [
        ({"graders": [{"type": "nope"}]}, "rows.0.graders.0.type"),
        ({"graders": [{"type": "contains-any", "values": []}]}, "rows.0.graders.0.values"),
        ({"threshold": 1.5}, "rows.0.threshold"),
        ({"graders": "contains"}, "rows.0.graders"),
    ],
)
def test_a_rows_bad_graders_or_threshold_are_a_400_naming_them(owner, prompt, row, field):
    client = api_client_for(owner)
    body = {"name": "t", "rows": [{"variables": {"design": "d"}, **row}]}
    response = client.post(f"/api/v1/prompts/{prompt.pk}/testsets/", body, format="json")
    assert response.status_code == 400
    assert response.json()["field"] == field


def test_the_table_editor_keeps_the_rows_own_graders(owner, prompt):
    from django.test import Client

    client = api_client_for(owner)
    made = _upload(client, prompt, EXAMPLE.read_bytes())
    testset = made.json()["id"]
    page = Client()
    page.force_login(owner)
    form = {"action": "save", "rows": "4", "col": "design", "message": "edit one"}
    for i, row in enumerate(made.json()["rows"]):
        form[f"var-{i}-0"] = row["variables"]["design"] + (" (edited)" if i == 0 else "")
        form[f"expected-{i}"] = row["expected"]
        form[f"note-{i}"] = row["note"]
    response = page.post(f"/evals/testsets/{testset}/", form)
    assert response.status_code == 302
    saved = client.get(f"/api/v1/testsets/{testset}/").json()
    assert saved["revision"] == 2
    assert saved["rows"][0]["variables"]["design"].endswith("(edited)")
    assert [r["graders"] for r in saved["rows"]] == [r["graders"] for r in made.json()["rows"]]
    assert saved["rows"][1]["threshold"] == 0.6


def test_a_new_test_set_from_the_prompt_page_takes_a_promptfoo_config(owner, prompt):
    from django.test import Client

    page = Client()
    page.force_login(owner)
    response = page.post(
        f"/evals/prompt/{prompt.pk}/",
        {
            "action": "testset",
            "name": "from promptfoo",
            "file": SimpleUploadedFile("promptfooconfig.yaml", EXAMPLE.read_bytes()),
        },
    )
    assert response.status_code == 302
    rows = [
        case.content
        for case in TestCase.objects.filter(revision__testset__name="from promptfoo")
        .select_related("content")
        .order_by("position")
    ]
    assert [len(r.graders) for r in rows] == [5, 5, 4, 5]
    assert rows[1].threshold == 0.6
