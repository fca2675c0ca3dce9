"""Graders: small pure functions that judge one cell's output (docs/evals.md, Graders).

A grader is named by its `type` and configured by a spec the evaluation stores as JSON. Parsing
a spec (`grader_specs_parse`) happens once, when the evaluation is created, so a bad spec is a 400
naming the field and never a failed cell later. Grading (`grade`) takes a `CellOutcome` — what
the run produced plus the row's `expected` — and returns a `Grade`. Nothing here touches the
database or the network, except `llm-judge`, which calls the `Judge` it is handed.

Where a grader compares against a value and its spec gives none, it uses the row's `expected`;
a row without `expected` then fails the grader with a reason saying so.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import jsonschema
import referencing.exceptions
import regex
from django.conf import settings

from .exceptions import EvalInvalid
from .schemas import SchemaBudgetExceeded, schema_errors, schema_problem

# A regex runs against model output with a time budget (EVAL_REGEX_BUDGET_SECONDS, for the
# `regex` grader's pattern and for all of a JSON Schema's patterns together): a pathological
# pattern fails its grader with a reason instead of holding a worker (the `regex` package
# supports timeouts; `re` does not).
PATTERN_MAX_CHARS: Final = 2_000
VALUE_MAX_CHARS: Final = 100_000
RUBRIC_MAX_CHARS: Final = 20_000
GRADERS_MAX: Final = 20
REASON_MAX_CHARS: Final = 2_000


@dataclass(frozen=True)
class CellOutcome:
    """What one cell produced, and what its row expects."""

    output: str
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    latency_ms: int | None = None
    output_tokens: int | None = None
    expected: str = ""
    response_format: Mapping[str, Any] | None = None
    variables: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Grade:
    type: str
    passed: bool
    score: float
    reason: str

    def as_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "passed": self.passed,
            "score": self.score,
            "reason": self.reason[:REASON_MAX_CHARS],
        }


@dataclass(frozen=True)
class JudgeVerdict:
    score: float
    reason: str


# The llm-judge's call: (spec, outcome) -> verdict. Services build it from a prompt version the
# evaluation's author may read; tests hand in their own.
Judge = Callable[["GraderSpec", CellOutcome], JudgeVerdict]


@dataclass(frozen=True)
class GraderSpec:
    """One grader of an evaluation, validated. `value` is the comparison value (None: the row's
    `expected`), `limit` a numeric bound, `options` the rest of the type's settings."""

    type: str
    value: str | None = None
    limit: float | None = None
    options: Mapping[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"type": self.type, **self.options}
        if self.value is not None:
            body["value"] = self.value
        if self.limit is not None:
            body["limit"] = self.limit
        return body


# --- parsing specs ----------------------------------------------------------------------------


def _text(spec: Mapping[str, Any], key: str, where: str, *, max_chars: int) -> str | None:
    value = spec.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise EvalInvalid(f"{where}.{key} must be a string.", field=f"{where}.{key}")
    if len(value) > max_chars:
        raise EvalInvalid(
            f"{where}.{key} is longer than {max_chars:,} characters.", field=f"{where}.{key}"
        )
    return value


def _number(spec: Mapping[str, Any], key: str, where: str, *, required: bool) -> float | None:
    value = spec.get(key)
    if value is None:
        if required:
            raise EvalInvalid(f"{where}.{key} is required.", field=f"{where}.{key}")
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise EvalInvalid(f"{where}.{key} must be a number ≥ 0.", field=f"{where}.{key}")
    return float(value)


def _flag(spec: Mapping[str, Any], key: str, where: str) -> bool:
    value = spec.get(key, False)
    if not isinstance(value, bool):
        raise EvalInvalid(f"{where}.{key} must be true or false.", field=f"{where}.{key}")
    return value


def _parse_compare(spec: Mapping[str, Any], where: str) -> GraderSpec:
    value = _text(spec, "value", where, max_chars=VALUE_MAX_CHARS)
    options = {"ignore_case": _flag(spec, "ignore_case", where)}
    return GraderSpec(type=spec["type"], value=value, options=options)


def _parse_regex(spec: Mapping[str, Any], where: str) -> GraderSpec:
    pattern = _text(spec, "pattern", where, max_chars=PATTERN_MAX_CHARS)
    if pattern is None:
        raise EvalInvalid(f"{where}.pattern is required.", field=f"{where}.pattern")
    try:
        regex.compile(pattern)
    except regex.error as error:
        raise EvalInvalid(
            f"{where}.pattern is not a valid regular expression: {error}.",
            field=f"{where}.pattern",
        ) from None
    return GraderSpec(type="regex", value=pattern)


def _parse_json_schema(spec: Mapping[str, Any], where: str) -> GraderSpec:
    schema = spec.get("schema")
    if schema is not None:
        if not isinstance(schema, dict):
            raise EvalInvalid(f"{where}.schema must be a JSON object.", field=f"{where}.schema")
        problem = schema_problem(schema)
        if problem is not None:
            raise EvalInvalid(f"{where}.schema: {problem}.", field=f"{where}.schema")
        try:
            jsonschema.validators.validator_for(schema).check_schema(schema)
        except jsonschema.SchemaError as error:
            raise EvalInvalid(
                f"{where}.schema is not a valid JSON Schema: {error.message}.",
                field=f"{where}.schema",
            ) from None
    return GraderSpec(type="json-schema", options={"schema": schema})


def _parse_tool_call(spec: Mapping[str, Any], where: str) -> GraderSpec:
    name = _text(spec, "name", where, max_chars=200)
    if not name:
        raise EvalInvalid(f"{where}.name is required.", field=f"{where}.name")
    arguments = spec.get("arguments")
    if arguments is not None and not isinstance(arguments, dict):
        raise EvalInvalid(f"{where}.arguments must be a JSON object.", field=f"{where}.arguments")
    return GraderSpec(type="tool-call", value=name, options={"arguments": arguments})


def _parse_limit(spec: Mapping[str, Any], where: str) -> GraderSpec:
    return GraderSpec(type=spec["type"], limit=_number(spec, "limit", where, required=True))


def _parse_judge(spec: Mapping[str, Any], where: str) -> GraderSpec:
    rubric = _text(spec, "rubric", where, max_chars=RUBRIC_MAX_CHARS)
    if not rubric or not rubric.strip():
        raise EvalInvalid(f"{where}.rubric is required.", field=f"{where}.rubric")
    version = spec.get("judge_version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise EvalInvalid(
            f"{where}.judge_version must be the id of a prompt version (the judge's prompt).",
            field=f"{where}.judge_version",
        )
    threshold = _number(spec, "threshold", where, required=False)
    if threshold is not None and threshold > 1:
        raise EvalInvalid(f"{where}.threshold must be between 0 and 1.", field=f"{where}.threshold")
    options: dict[str, Any] = {"judge_version": version, "threshold": threshold or 0.5}
    for key in ("provider", "model"):
        value = _text(spec, key, where, max_chars=200)
        if value:
            options[key] = value
    return GraderSpec(type="llm-judge", value=rubric, options=options)


def _parse_plain(spec: Mapping[str, Any], where: str) -> GraderSpec:
    return GraderSpec(type=spec["type"])


PARSERS: Final[dict[str, Callable[[Mapping[str, Any], str], GraderSpec]]] = {
    "equals": _parse_compare,
    "contains": _parse_compare,
    "not-contains": _parse_compare,
    "regex": _parse_regex,
    "json-valid": _parse_plain,
    "json-schema": _parse_json_schema,
    "tool-call": _parse_tool_call,
    "max-latency-ms": _parse_limit,
    "max-output-tokens": _parse_limit,
    "llm-judge": _parse_judge,
}
GRADER_TYPES: Final = tuple(PARSERS)


def grader_specs_parse(
    raw: Any, *, extra: Mapping[str, Callable[..., GraderSpec]] | None = None
) -> list[GraderSpec]:
    """`graders` of a request body → validated specs; EvalInvalid naming the field otherwise."""
    parsers = {**PARSERS, **(extra or {})}
    if not isinstance(raw, list) or not raw:
        raise EvalInvalid("graders must be a non-empty list.", field="graders")
    if len(raw) > GRADERS_MAX:
        raise EvalInvalid(f"graders: at most {GRADERS_MAX}.", field="graders")
    specs = []
    for index, spec in enumerate(raw):
        where = f"graders.{index}"
        if not isinstance(spec, dict):
            raise EvalInvalid(f"{where} must be an object with a type.", field=where)
        kind = spec.get("type")
        if not isinstance(kind, str) or kind not in parsers:
            raise EvalInvalid(
                f"{where}.type must be one of: {', '.join(parsers)}.", field=f"{where}.type"
            )
        specs.append(parsers[kind](spec, where))
    return specs


def grader_spec_load(body: Mapping[str, Any]) -> GraderSpec:
    """A spec as stored by `GraderSpec.as_json` (already validated) back into a spec."""
    options = {k: v for k, v in body.items() if k not in ("type", "value", "limit")}
    return GraderSpec(
        type=body["type"], value=body.get("value"), limit=body.get("limit"), options=options
    )


# --- grading ----------------------------------------------------------------------------------


def _wanted(spec: GraderSpec, outcome: CellOutcome) -> str | None:
    return spec.value if spec.value is not None else (outcome.expected or None)


def _no_expected(spec: GraderSpec) -> Grade:
    return Grade(
        spec.type,
        False,
        0.0,
        "No value to compare with: the grader gives none and the row has no expected output.",
    )


def _fold(text: str, spec: GraderSpec) -> str:
    return text.casefold() if spec.options.get("ignore_case") else text


def grade_equals(spec: GraderSpec, outcome: CellOutcome) -> Grade:
    wanted = _wanted(spec, outcome)
    if wanted is None:
        return _no_expected(spec)
    same = _fold(outcome.output.strip(), spec) == _fold(wanted.strip(), spec)
    reason = (
        "The output equals the expected text."
        if same
        else "The output differs from the expected text."
    )
    return Grade(spec.type, same, 1.0 if same else 0.0, reason)


def grade_contains(spec: GraderSpec, outcome: CellOutcome) -> Grade:
    wanted = _wanted(spec, outcome)
    if wanted is None:
        return _no_expected(spec)
    found = _fold(wanted, spec) in _fold(outcome.output, spec)
    negate = spec.type == "not-contains"
    passed = found != negate
    shown = wanted if len(wanted) <= 80 else wanted[:77] + "…"
    reason = f"“{shown}” {'occurs' if found else 'does not occur'} in the output."
    return Grade(spec.type, passed, 1.0 if passed else 0.0, reason)


def grade_regex(spec: GraderSpec, outcome: CellOutcome) -> Grade:
    assert spec.value is not None  # parsing requires a pattern
    budget = settings.EVAL_REGEX_BUDGET_SECONDS
    try:
        match = regex.search(spec.value, outcome.output, timeout=budget)
    except TimeoutError:
        return Grade(
            spec.type,
            False,
            0.0,
            f"The pattern took longer than {budget:g} s on this output; treated as no match.",
        )
    if match is None:
        return Grade(spec.type, False, 0.0, "The pattern does not match the output.")
    return Grade(spec.type, True, 1.0, f"The pattern matches at character {match.start()}.")


def _parsed_json(output: str) -> tuple[bool, Any, str]:
    try:
        return True, json.loads(output), ""
    except ValueError as error:
        return False, None, f"The output is not valid JSON: {error}."


def grade_json_valid(spec: GraderSpec, outcome: CellOutcome) -> Grade:
    ok, _value, why = _parsed_json(outcome.output)
    return Grade(spec.type, ok, 1.0 if ok else 0.0, "The output is valid JSON." if ok else why)


def _format_schema(response_format: Mapping[str, Any] | None) -> Any:
    """The JSON Schema inside a version's response format, whatever shape it was saved in."""
    if not response_format:
        return None
    for key in ("schema", "json_schema"):
        inner = response_format.get(key)
        if isinstance(inner, dict):
            return inner.get("schema", inner) if key == "json_schema" else inner
    return response_format


def grader_format_schema_problem(
    spec: GraderSpec, response_format: Mapping[str, Any] | None
) -> str | None:
    """Why a `json-schema` grader without a schema of its own cannot use a version's response
    format (`evals.schemas.schema_problem`), or None (another type, or a usable schema)."""
    if spec.type != "json-schema" or spec.options.get("schema") is not None:
        return None
    schema = _format_schema(response_format)
    return None if schema is None else schema_problem(schema)


def grade_json_schema(spec: GraderSpec, outcome: CellOutcome) -> Grade:
    schema = spec.options.get("schema") or _format_schema(outcome.response_format)
    if schema is None:
        return Grade(
            spec.type,
            False,
            0.0,
            "No schema: the grader gives none and the version has no response format.",
        )
    ok, value, why = _parsed_json(outcome.output)
    if not ok:
        return Grade(spec.type, False, 0.0, why)
    # A grader's own schema passed this check at creation; a version's response format did not.
    problem = schema_problem(schema)
    if problem is not None:
        return Grade(spec.type, False, 0.0, f"The schema cannot be used: {problem}.")
    budget = settings.EVAL_REGEX_BUDGET_SECONDS
    try:
        errors = schema_errors(schema, value, budget_seconds=budget)
    except jsonschema.SchemaError as error:
        return Grade(spec.type, False, 0.0, f"The version's schema is not valid: {error.message}.")
    except SchemaBudgetExceeded:
        return Grade(
            spec.type,
            False,
            0.0,
            f"The schema's patterns took longer than {budget:g} s on this output;"
            " treated as not matching.",
        )
    except (RecursionError, referencing.exceptions.Unresolvable) as error:
        return Grade(spec.type, False, 0.0, f"The schema could not be applied: {error}.")
    if errors:
        first = errors[0]
        where = "/".join(str(p) for p in first.path) or "(root)"
        return Grade(
            spec.type, False, 0.0, f"At {where}: {first.message} ({len(errors)} error(s))."
        )
    return Grade(spec.type, True, 1.0, "The output matches the schema.")


def _subset(wanted: Any, got: Any) -> bool:
    """`wanted` is contained in `got`: objects key by key (recursively), everything else equal."""
    if isinstance(wanted, dict):
        return isinstance(got, dict) and all(
            k in got and _subset(v, got[k]) for k, v in wanted.items()
        )
    return bool(wanted == got)


def grade_tool_call(spec: GraderSpec, outcome: CellOutcome) -> Grade:
    named = [call for call in outcome.tool_calls if call.get("name") == spec.value]
    if not named:
        called = ", ".join(str(c.get("name")) for c in outcome.tool_calls) or "none"
        return Grade(spec.type, False, 0.0, f"No call to {spec.value} (tools called: {called}).")
    arguments = spec.options.get("arguments")
    if arguments is None:
        return Grade(spec.type, True, 1.0, f"{spec.value} was called.")
    if any(_subset(arguments, call.get("input")) for call in named):
        return Grade(spec.type, True, 1.0, f"{spec.value} was called with matching arguments.")
    return Grade(
        spec.type, False, 0.0, f"{spec.value} was called, but not with the expected arguments."
    )


def _grade_limit(spec: GraderSpec, value: int | None, what: str) -> Grade:
    assert spec.limit is not None
    if value is None:
        return Grade(spec.type, False, 0.0, f"The run reported no {what}.")
    passed = value <= spec.limit
    return Grade(
        spec.type,
        passed,
        1.0 if passed else 0.0,
        f"{what.capitalize()} {value:,} {'≤' if passed else '>'} {spec.limit:,g}.",
    )


def grade_max_latency(spec: GraderSpec, outcome: CellOutcome) -> Grade:
    return _grade_limit(spec, outcome.latency_ms, "latency (ms)")


def grade_max_output_tokens(spec: GraderSpec, outcome: CellOutcome) -> Grade:
    return _grade_limit(spec, outcome.output_tokens, "output tokens")


def judge_verdict_parse(text: str) -> JudgeVerdict:
    """The judge's reply → a verdict: a JSON object `{"score": 0..1, "reason": "..."}`, found as
    the reply itself or as the first `{...}` block in it. ValueError when there is none."""
    candidates = [text.strip()]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            body = json.loads(candidate)
        except ValueError:
            continue
        if (
            isinstance(body, dict)
            and isinstance(body.get("score"), int | float)
            and not isinstance(body.get("score"), bool)
        ):
            score = float(body["score"])
            if 0 <= score <= 1:
                return JudgeVerdict(score=score, reason=str(body.get("reason", "")))
    raise ValueError('The judge did not answer with {"score": 0..1, "reason": "..."}.')


def grade_llm_judge(spec: GraderSpec, outcome: CellOutcome, judge: Judge | None) -> Grade:
    if judge is None:
        return Grade(spec.type, False, 0.0, "No judge was available to this evaluation.")
    try:
        verdict = judge(spec, outcome)
    except ValueError as error:
        return Grade(spec.type, False, 0.0, str(error))
    threshold = float(spec.options.get("threshold", 0.5))
    passed = verdict.score >= threshold
    return Grade(spec.type, passed, verdict.score, verdict.reason or f"Score {verdict.score:g}.")


GRADERS: Final[dict[str, Callable[[GraderSpec, CellOutcome], Grade]]] = {
    "equals": grade_equals,
    "contains": grade_contains,
    "not-contains": grade_contains,
    "regex": grade_regex,
    "json-valid": grade_json_valid,
    "json-schema": grade_json_schema,
    "tool-call": grade_tool_call,
    "max-latency-ms": grade_max_latency,
    "max-output-tokens": grade_max_output_tokens,
}


def grade(
    spec: GraderSpec,
    outcome: CellOutcome,
    *,
    judge: Judge | None = None,
    extra: Mapping[str, Callable[[GraderSpec, CellOutcome], Grade]] | None = None,
) -> Grade:
    """Grade one outcome with one spec. `extra` adds grader types from other apps (the
    answer-key grader of `critique/`)."""
    if spec.type == "llm-judge":
        return grade_llm_judge(spec, outcome, judge)
    graders = {**GRADERS, **(extra or {})}
    return graders[spec.type](spec, outcome)
