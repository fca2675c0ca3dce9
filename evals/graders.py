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
from dataclasses import dataclass, field, replace
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
VALUES_MAX: Final = 100
WEIGHT_MAX: Final = 1_000.0
METRIC_MAX_CHARS: Final = 100
LEVENSHTEIN_DEFAULT: Final = 5.0  # promptfoo's default distance
LEVENSHTEIN_MAX: Final = 1_000
LEVENSHTEIN_WORK_MAX: Final = 5_000_000  # table cells one grade may compute
JSON_OBJECTS_MAX: Final = 1_000
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
    cost_usd: float | None = None  # None unless EVAL_PRICES names the cell's model


@dataclass(frozen=True)
class Grade:
    type: str
    passed: bool
    score: float
    reason: str
    # What the reason tells of, when only some may read it (a practice document's answer key):
    # an opaque name the grader type's reason guard checks at read time (evals.selectors,
    # GradeReader). Stored with the grade, never shown.
    secret: str = ""

    def as_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "type": self.type,
            "passed": self.passed,
            "score": self.score,
            "reason": self.reason[:REASON_MAX_CHARS],
        }
        if self.secret:
            body["secret"] = self.secret
        return body


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
    # Settings every type takes (a promptfoo assertion's): the weight of this grader in the
    # cell's score, a metric name its score is reported under, and `negate` (the `not-` forms).
    weight: float = 1.0
    metric: str = ""
    negate: bool = False

    def as_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"type": self.type, **self.options}
        if self.value is not None:
            body["value"] = self.value
        if self.limit is not None:
            body["limit"] = self.limit
        if self.weight != 1.0:
            body["weight"] = self.weight
        if self.metric:
            body["metric"] = self.metric
        if self.negate:
            body["negate"] = True
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
    options: dict[str, Any] = {"ignore_case": _flag(spec, "ignore_case", where)}
    if spec["type"] == "equals" and spec.get("trim", True) is not True:
        # `trim: false`: exact equality (promptfoo's `equals`); by default both sides are trimmed
        options["trim"] = _flag(spec, "trim", where)
    return GraderSpec(type=spec["type"], value=value, options=options)


def _parse_many(spec: Mapping[str, Any], where: str) -> GraderSpec:
    values = spec.get("values")
    if (
        not isinstance(values, list)
        or not 1 <= len(values) <= VALUES_MAX
        or not all(isinstance(v, str) and 0 < len(v) <= VALUE_MAX_CHARS for v in values)
    ):
        raise EvalInvalid(
            f"{where}.values must be a list of 1–{VALUES_MAX} non-empty strings.",
            field=f"{where}.values",
        )
    options = {"values": list(values), "ignore_case": _flag(spec, "ignore_case", where)}
    return GraderSpec(type=spec["type"], options=options)


def _parse_levenshtein(spec: Mapping[str, Any], where: str) -> GraderSpec:
    value = _text(spec, "value", where, max_chars=VALUE_MAX_CHARS)
    limit = _number(spec, "limit", where, required=False)
    if limit is not None and (limit > LEVENSHTEIN_MAX or limit != int(limit)):
        raise EvalInvalid(
            f"{where}.limit must be a whole number of edits up to {LEVENSHTEIN_MAX:,}.",
            field=f"{where}.limit",
        )
    return GraderSpec(
        type="levenshtein", value=value, limit=LEVENSHTEIN_DEFAULT if limit is None else limit
    )


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
    return GraderSpec(type=spec["type"], options={"schema": _schema(spec, where)})


def _schema(spec: Mapping[str, Any], where: str) -> Any:
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
    return schema


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
    "starts-with": _parse_compare,
    "contains-any": _parse_many,
    "contains-all": _parse_many,
    "regex": _parse_regex,
    "json-valid": _parse_plain,
    "json-schema": _parse_json_schema,
    "contains-json": _parse_json_schema,
    "levenshtein": _parse_levenshtein,
    "tool-call": _parse_tool_call,
    "max-latency-ms": _parse_limit,
    "max-output-tokens": _parse_limit,
    "max-cost": _parse_limit,
    "llm-judge": _parse_judge,
}
GRADER_TYPES: Final = tuple(PARSERS)


def grader_specs_parse(
    raw: Any,
    *,
    extra: Mapping[str, Callable[..., GraderSpec]] | None = None,
    where_prefix: str = "graders",
    allow_empty: bool = False,
) -> list[GraderSpec]:
    """`graders` of a request body → validated specs; EvalInvalid naming the field otherwise
    (`where_prefix`: the field's name, `rows.3.graders` for a row's own)."""
    parsers = {**PARSERS, **(extra or {})}
    if not isinstance(raw, list) or (not raw and not allow_empty):
        raise EvalInvalid(f"{where_prefix} must be a non-empty list.", field=where_prefix)
    if len(raw) > GRADERS_MAX:
        raise EvalInvalid(f"{where_prefix}: at most {GRADERS_MAX}.", field=where_prefix)
    specs = []
    for index, spec in enumerate(raw):
        where = f"{where_prefix}.{index}"
        if not isinstance(spec, dict):
            raise EvalInvalid(f"{where} must be an object with a type.", field=where)
        kind = spec.get("type")
        if not isinstance(kind, str) or kind not in parsers:
            raise EvalInvalid(
                f"{where}.type must be one of: {', '.join(parsers)}.", field=f"{where}.type"
            )
        specs.append(_common(parsers[kind](spec, where), spec, where))
    return specs


def _common(parsed: GraderSpec, spec: Mapping[str, Any], where: str) -> GraderSpec:
    """The settings every type takes: `weight`, `metric`, `negate`."""
    weight = _number(spec, "weight", where, required=False)
    if weight is not None and weight > WEIGHT_MAX:
        raise EvalInvalid(f"{where}.weight: at most {WEIGHT_MAX:g}.", field=f"{where}.weight")
    metric = _text(spec, "metric", where, max_chars=METRIC_MAX_CHARS) or ""
    return replace(
        parsed,
        weight=1.0 if weight is None else weight,
        metric=metric,
        negate=_flag(spec, "negate", where),
    )


# Stored specs keep a type's main text in `value`; a request names it as below.
_REQUEST_NAMES: Final = {"llm-judge": "rubric", "regex": "pattern", "tool-call": "name"}


def grader_spec_request(body: Mapping[str, Any]) -> dict[str, Any]:
    """A stored spec (`GraderSpec.as_json`) in the shape a request gives it, so that
    `grader_specs_parse` reads it back to the same spec."""
    out = dict(body)
    name = _REQUEST_NAMES.get(str(body.get("type")))
    if name and "value" in out:
        out[name] = out.pop("value")
    return out


def grader_spec_load(body: Mapping[str, Any]) -> GraderSpec:
    """A spec as stored by `GraderSpec.as_json` (already validated) back into a spec."""
    common = ("type", "value", "limit", "weight", "metric", "negate")
    options = {k: v for k, v in body.items() if k not in common}
    return GraderSpec(
        type=body["type"],
        value=body.get("value"),
        limit=body.get("limit"),
        options=options,
        weight=float(body.get("weight", 1.0)),
        metric=str(body.get("metric", "")),
        negate=bool(body.get("negate", False)),
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
    got = outcome.output
    if spec.options.get("trim", True):
        got, wanted = got.strip(), wanted.strip()
    same = _fold(got, spec) == _fold(wanted, spec)
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
    reason = f"“{_shown(wanted)}” {'occurs' if found else 'does not occur'} in the output."
    return Grade(spec.type, passed, 1.0 if passed else 0.0, reason)


def _shown(text: str) -> str:
    return text if len(text) <= 80 else text[:77] + "…"


def grade_starts_with(spec: GraderSpec, outcome: CellOutcome) -> Grade:
    wanted = _wanted(spec, outcome)
    if wanted is None:
        return _no_expected(spec)
    passed = _fold(outcome.output, spec).startswith(_fold(wanted, spec))
    reason = f"The output {'starts' if passed else 'does not start'} with “{_shown(wanted)}”."
    return Grade(spec.type, passed, 1.0 if passed else 0.0, reason)


def grade_contains_many(spec: GraderSpec, outcome: CellOutcome) -> Grade:
    values: list[str] = spec.options["values"]
    output = _fold(outcome.output, spec)
    found = [v for v in values if _fold(v, spec) in output]
    missing = [v for v in values if v not in found]
    if spec.type == "contains-any":
        passed = bool(found)
        reason = (
            f"“{_shown(found[0])}” occurs in the output."
            if found
            else f"None of the {len(values)} values occurs in the output."
        )
    else:
        passed = not missing
        reason = (
            f"All {len(values)} values occur in the output."
            if passed
            else f"“{_shown(missing[0])}” does not occur in the output ({len(missing)} missing)."
        )
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


def _no_constant(name: str) -> Any:
    # Python's json accepts NaN, Infinity and -Infinity; JSON (RFC 8259) and JSON.parse do not.
    raise ValueError(f"{name} is not a JSON value")


def _parsed_json(output: str) -> tuple[bool, Any, str]:
    try:
        return True, json.loads(output, parse_constant=_no_constant), ""
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
    return _schema_grade(spec, schema, value)


def _schema_grade(spec: GraderSpec, schema: Any, value: Any) -> Grade:
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


def _json_objects(output: str) -> list[Any]:
    """The JSON objects embedded in the output (promptfoo's `contains-json`): every `{` where
    a whole object parses, leftmost first, at most JSON_OBJECTS_MAX tries."""
    decoder = json.JSONDecoder(parse_constant=_no_constant)
    found: list[Any] = []
    start = output.find("{")
    tries = 0
    while start >= 0 and tries < JSON_OBJECTS_MAX:
        tries += 1
        try:
            value, end = decoder.raw_decode(output, start)
        except ValueError:
            start = output.find("{", start + 1)
            continue
        found.append(value)
        start = output.find("{", end)
    return found


def grade_contains_json(spec: GraderSpec, outcome: CellOutcome) -> Grade:
    objects = _json_objects(outcome.output)
    if not objects:
        return Grade(spec.type, False, 0.0, "The output contains no JSON object.")
    schema = spec.options.get("schema")
    if schema is None:
        return Grade(spec.type, True, 1.0, f"The output contains {len(objects)} JSON object(s).")
    grades = [_schema_grade(spec, schema, value) for value in objects]
    return next((g for g in grades if g.passed), grades[0])


def levenshtein_within(a: str, b: str, limit: int) -> int | None:
    """The edit distance between a and b when it is at most `limit`, else None: a band of
    2·limit + 1 diagonals of the usual table, so the cost is len(a)·(2·limit + 1)."""
    n, m = len(a), len(b)
    if abs(n - m) > limit:
        return None
    over = limit + 1
    prev = [j if j <= limit else over for j in range(m + 1)]
    cur = [over] * (m + 1)
    for i in range(1, n + 1):
        lo, hi = max(1, i - limit), min(m, i + limit)
        cur[lo - 1] = i if lo == 1 and i <= limit else over
        best = cur[lo - 1]
        ai = a[i - 1]
        for j in range(lo, hi + 1):
            value = min(
                prev[j - 1] + (ai != b[j - 1]),
                prev[j] + 1,
                cur[j - 1] + 1,
                over,
            )
            cur[j] = value
            best = min(best, value)
        if hi < m:
            cur[hi + 1] = over
        if best > limit:
            return None
        prev, cur = cur, prev
    return prev[m] if prev[m] <= limit else None


def grade_levenshtein(spec: GraderSpec, outcome: CellOutcome) -> Grade:
    wanted = _wanted(spec, outcome)
    if wanted is None:
        return _no_expected(spec)
    assert spec.limit is not None
    limit = int(spec.limit)
    if len(outcome.output) * (2 * limit + 1) > LEVENSHTEIN_WORK_MAX:
        return Grade(spec.type, False, 0.0, "The output is too long to measure its edit distance.")
    distance = levenshtein_within(outcome.output, wanted, limit)
    if distance is None:
        return Grade(spec.type, False, 0.0, f"Edit distance > {limit}.")
    return Grade(spec.type, True, 1.0, f"Edit distance {distance} ≤ {limit}.")


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


def grade_max_cost(spec: GraderSpec, outcome: CellOutcome) -> Grade:
    assert spec.limit is not None
    if outcome.cost_usd is None:
        return Grade(spec.type, False, 0.0, "No cost: EVAL_PRICES does not name this model.")
    passed = outcome.cost_usd <= spec.limit
    return Grade(
        spec.type,
        passed,
        1.0 if passed else 0.0,
        f"Cost ${outcome.cost_usd:.6g} {'≤' if passed else '>'} ${spec.limit:.6g}.",
    )


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
    "starts-with": grade_starts_with,
    "contains-any": grade_contains_many,
    "contains-all": grade_contains_many,
    "regex": grade_regex,
    "json-valid": grade_json_valid,
    "json-schema": grade_json_schema,
    "contains-json": grade_contains_json,
    "levenshtein": grade_levenshtein,
    "tool-call": grade_tool_call,
    "max-latency-ms": grade_max_latency,
    "max-output-tokens": grade_max_output_tokens,
    "max-cost": grade_max_cost,
}


def grade(
    spec: GraderSpec,
    outcome: CellOutcome,
    *,
    judge: Judge | None = None,
    extra: Mapping[str, Callable[[GraderSpec, CellOutcome], Grade]] | None = None,
) -> Grade:
    """Grade one outcome with one spec. `extra` adds grader types from other apps (the
    answer-key grader of `critique/`). A negated spec (`negate`, the `not-` forms) passes when
    the grader fails, with score 1 − score."""
    if spec.type == "llm-judge":
        result = grade_llm_judge(spec, outcome, judge)
    else:
        graders = {**GRADERS, **(extra or {})}
        result = graders[spec.type](spec, outcome)
    if not spec.negate:
        return result
    return Grade(
        result.type,
        not result.passed,
        1.0 - result.score,
        f"Negated ({'passes' if not result.passed else 'fails'}): {result.reason}",
    )


@dataclass(frozen=True)
class Verdict:
    passed: bool
    score: float


def cell_verdict(
    specs: list[GraderSpec], grades: list[Grade], *, threshold: float | None = None
) -> Verdict:
    """A cell's verdict from its grades, as promptfoo scores a test: the score is the mean of
    the grades weighted by each spec's `weight` (0 when every weight is 0; 1 with no grader);
    the cell passes when every grade passes, or, with a `threshold` > 0, when the score
    reaches it (the threshold then overrides the grades' own verdicts)."""
    if not grades:
        return Verdict(True, 1.0)
    total = sum(s.weight for s in specs)
    score = (
        sum(g.score * s.weight for s, g in zip(specs, grades, strict=True)) / total
        if total
        else 0.0
    )
    passed = all(g.passed for g in grades)
    if threshold:
        passed = score >= threshold
    return Verdict(passed, score)
