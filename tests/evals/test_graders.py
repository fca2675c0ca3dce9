"""Each grader is a pure function: spec + outcome → grade (evals/graders.py)."""

import pytest

from evals.exceptions import EvalInvalid
from evals.graders import (
    CellOutcome,
    JudgeVerdict,
    grade,
    grader_spec_load,
    grader_specs_parse,
    judge_verdict_parse,
)


def one(spec: dict, outcome: CellOutcome, **kw):
    (parsed,) = grader_specs_parse([spec])
    return grade(parsed, outcome, **kw)


def test_equals_uses_the_value_or_the_rows_expected():
    assert one({"type": "equals", "value": "Paris"}, CellOutcome(output=" Paris\n")).passed
    assert not one({"type": "equals", "value": "Paris"}, CellOutcome(output="paris")).passed
    assert one(
        {"type": "equals", "ignore_case": True, "value": "Paris"}, CellOutcome(output="PARIS")
    ).passed
    assert one({"type": "equals"}, CellOutcome(output="42", expected="42")).passed


def test_a_grader_with_no_value_and_no_expected_fails_saying_why():
    result = one({"type": "equals"}, CellOutcome(output="42"))
    assert not result.passed
    assert "no expected output" in result.reason


def test_contains_and_not_contains():
    outcome = CellOutcome(output="The cache sits in front of PostgreSQL.")
    assert one({"type": "contains", "value": "PostgreSQL"}, outcome).passed
    assert not one({"type": "contains", "value": "Redis"}, outcome).passed
    assert one({"type": "not-contains", "value": "Redis"}, outcome).passed
    assert not one({"type": "not-contains", "value": "cache"}, outcome).passed


def test_regex_matches_and_reports_where():
    result = one({"type": "regex", "pattern": r"\d{3} ms"}, CellOutcome(output="p99 is 250 ms"))
    assert result.passed
    assert "character 7" in result.reason
    assert not one({"type": "regex", "pattern": r"^\d+$"}, CellOutcome(output="x1")).passed


def test_a_catastrophic_regex_is_cut_off_by_its_time_budget():
    result = one({"type": "regex", "pattern": r"(a|aa)+$"}, CellOutcome(output="a" * 40 + "!"))
    assert not result.passed
    assert "longer than" in result.reason


def test_json_valid():
    assert one({"type": "json-valid"}, CellOutcome(output='{"a": 1}')).passed
    result = one({"type": "json-valid"}, CellOutcome(output="{a: 1}"))
    assert not result.passed
    assert "not valid JSON" in result.reason


SCHEMA = {
    "type": "object",
    "properties": {"risk": {"type": "string"}, "severity": {"enum": ["major", "minor"]}},
    "required": ["risk", "severity"],
}


def test_json_schema_with_a_given_schema():
    ok = CellOutcome(output='{"risk": "no rollback", "severity": "major"}')
    bad = CellOutcome(output='{"risk": "no rollback", "severity": "huge"}')
    assert one({"type": "json-schema", "schema": SCHEMA}, ok).passed
    result = one({"type": "json-schema", "schema": SCHEMA}, bad)
    assert not result.passed
    assert "severity" in result.reason


def test_json_schema_falls_back_to_the_versions_response_format():
    fmt = {"type": "json_schema", "json_schema": {"name": "r", "schema": SCHEMA}}
    outcome = CellOutcome(output='{"risk": "x"}', response_format=fmt)
    result = one({"type": "json-schema"}, outcome)
    assert not result.passed
    assert "'severity' is a required property" in result.reason


def test_tool_call_by_name_and_arguments_subset():
    calls = [{"id": "t1", "name": "lookup", "input": {"city": "Paris", "units": "metric"}}]
    outcome = CellOutcome(output="", tool_calls=calls)
    assert one({"type": "tool-call", "name": "lookup"}, outcome).passed
    assert one(
        {"type": "tool-call", "name": "lookup", "arguments": {"city": "Paris"}}, outcome
    ).passed
    assert not one(
        {"type": "tool-call", "name": "lookup", "arguments": {"city": "Rome"}}, outcome
    ).passed
    missing = one({"type": "tool-call", "name": "search"}, outcome)
    assert not missing.passed
    assert "tools called: lookup" in missing.reason


def test_max_latency_and_max_output_tokens():
    outcome = CellOutcome(output="x", latency_ms=900, output_tokens=120)
    assert one({"type": "max-latency-ms", "limit": 1000}, outcome).passed
    assert not one({"type": "max-latency-ms", "limit": 500}, outcome).passed
    assert one({"type": "max-output-tokens", "limit": 120}, outcome).passed
    assert not one({"type": "max-output-tokens", "limit": 100}, outcome).passed
    assert not one({"type": "max-latency-ms", "limit": 1}, CellOutcome(output="x")).passed


def test_llm_judge_scores_with_the_judge_it_is_handed():
    seen = []

    def judge(spec, outcome):
        seen.append((spec.value, outcome.output))
        return JudgeVerdict(score=0.75, reason="Names the failure mode.")

    spec = {"type": "llm-judge", "rubric": "Names a failure mode", "judge_version": 3}
    result = one(spec, CellOutcome(output="the queue may overflow"), judge=judge)
    assert result.passed
    assert result.score == 0.75
    assert seen == [("Names a failure mode", "the queue may overflow")]
    strict = one({**spec, "threshold": 0.9}, CellOutcome(output="x"), judge=judge)
    assert not strict.passed


def test_llm_judge_without_a_parsable_verdict_fails_the_cell_with_the_reason():
    def judge(spec, outcome):
        return judge_verdict_parse("I think it is fine.")

    spec = {"type": "llm-judge", "rubric": "r", "judge_version": 3}
    result = one(spec, CellOutcome(output="x"), judge=judge)
    assert not result.passed
    assert "did not answer" in result.reason


@pytest.mark.parametrize(
    ("text", "score"),
    [
        ('{"score": 1, "reason": "ok"}', 1.0),
        ('Verdict:\n{"score": 0.4, "reason": "thin"}\nThanks', 0.4),
    ],
)
def test_judge_verdict_parse(text, score):
    assert judge_verdict_parse(text).score == score


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ({"type": "nope"}, "graders.0.type"),
        ({"type": "regex"}, "graders.0.pattern"),
        ({"type": "regex", "pattern": "("}, "graders.0.pattern"),
        ({"type": "json-schema", "schema": {"type": 5}}, "graders.0.schema"),
        ({"type": "tool-call"}, "graders.0.name"),
        ({"type": "max-latency-ms"}, "graders.0.limit"),
        ({"type": "max-latency-ms", "limit": True}, "graders.0.limit"),
        ({"type": "llm-judge", "rubric": "r"}, "graders.0.judge_version"),
        ({"type": "llm-judge", "rubric": " ", "judge_version": 1}, "graders.0.rubric"),
        ({"type": "equals", "value": 3}, "graders.0.value"),
        ({"type": "equals", "ignore_case": "yes"}, "graders.0.ignore_case"),
    ],
)
def test_bad_specs_name_the_field(spec, field):
    with pytest.raises(EvalInvalid) as caught:
        grader_specs_parse([spec])
    assert caught.value.field == field


def test_specs_round_trip_through_their_stored_json():
    specs = grader_specs_parse(
        [
            {"type": "contains", "value": "x", "ignore_case": True},
            {"type": "max-output-tokens", "limit": 10},
            {"type": "tool-call", "name": "f", "arguments": {"a": 1}},
        ]
    )
    assert [grader_spec_load(s.as_json()) for s in specs] == specs


def test_graders_must_be_a_non_empty_list():
    with pytest.raises(EvalInvalid):
        grader_specs_parse([])
    with pytest.raises(EvalInvalid):
        grader_specs_parse({"type": "equals"})


@pytest.mark.parametrize("text", ["NaN", "Infinity", "-Infinity", '{"a": NaN}', "[1, Infinity]"])
def test_json_valid_rejects_nan_and_infinity_as_json_does(text):
    result = one({"type": "json-valid"}, CellOutcome(output=text))
    assert not result.passed
    assert "not a JSON value" in result.reason
    assert not one({"type": "json-schema", "schema": {}}, CellOutcome(output=text)).passed


def test_equals_trims_both_sides_unless_told_not_to():
    assert one({"type": "equals", "value": " Paris\n"}, CellOutcome(output="Paris")).passed
    exact = {"type": "equals", "value": "Paris", "trim": False}
    assert not one(exact, CellOutcome(output="Paris\n")).passed
    assert one(exact, CellOutcome(output="Paris")).passed


def test_negate_weight_and_metric_apply_to_every_type_and_survive_storage():
    (spec,) = grader_specs_parse(
        [{"type": "regex", "pattern": "x", "negate": True, "weight": 2, "metric": "m"}]
    )
    assert grader_spec_load(spec.as_json()) == spec
    result = grade(spec, CellOutcome(output="abc"))
    assert (result.passed, result.score) == (True, 1.0)
    with pytest.raises(EvalInvalid):
        grader_specs_parse([{"type": "contains", "value": "x", "weight": -1}])


@pytest.mark.parametrize(
    ("a", "b", "limit", "distance"),
    [
        ("kitten", "sitting", 5, 3),
        ("kitten", "sitting", 2, None),
        ("", "abc", 3, 3),
        ("abc", "", 2, None),
        ("flaw", "lawn", 2, 2),
        ("same", "same", 0, 0),
    ],
)
def test_levenshtein_within_a_band(a, b, limit, distance):
    from evals.graders import levenshtein_within

    assert levenshtein_within(a, b, limit) == distance
