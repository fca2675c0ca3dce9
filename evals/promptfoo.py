"""promptfoo configs in and out (docs/evals.md, "promptfoo configs").

`promptfoo_parse` reads a `promptfooconfig.yaml` (or promptfoo's CSV with `__expected` columns)
into test-set rows: each test's `vars` become the row's variables, its `assert` list (after
`defaultTest.assert`) the row's own graders, its `threshold` the row's threshold, its
`description` the note and `metadata.expected` the expected output. Every assertion type maps
onto a Redline grader or the import is refused with a 400 naming it: nothing is dropped.

`promptfoo_export` writes the rows and their graders back as a config that `promptfoo eval`
runs as it is: the prompt is the version's messages fetched from Redline when exporting (a chat
prompt with the same `{{name}}` placeholders), the provider the version's own.

The YAML is read with `yaml.safe_load` (no tags that build objects), after a size check, and
the loaded document is walked with a node budget, so aliases cannot blow it up.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import yaml

from .exceptions import EvalInvalid
from .graders import GraderSpec, grader_spec_load, grader_specs_parse

CONFIG_MAX_BYTES: Final = 5 * 1024 * 1024
NODES_MAX: Final = 500_000  # values a loaded document may hold, aliases counted each time

# promptfoo type → Redline grader type (before `not-`); the rest of the mapping is in
# `_assertion_spec`.
SUPPORTED: Final = (
    "equals",
    "contains",
    "icontains",
    "starts-with",
    "contains-any",
    "contains-all",
    "icontains-any",
    "icontains-all",
    "regex",
    "is-json",
    "contains-json",
    "levenshtein",
    "latency",
    "cost",
    "llm-rubric",
)
# Types promptfoo's CSV `__expected: type: value` shorthand names (besides `grade:`, `fn:`).
_CSV_PREFIX = re.compile(r"^(not-)?([a-z][a-z0-9-]*)(?:\((\d+(?:\.\d+)?)\))?(?::\s?(.*))?$", re.S)
_TEMPLATE = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_TEMPLATE_ANY = re.compile(r"\{\{|\{%")
_TEST_KEYS: Final = {"vars", "assert", "threshold", "description", "metadata"}
_ASSERT_KEYS: Final = {"type", "value", "threshold", "weight", "metric"}


@dataclass(frozen=True)
class ParsedRow:
    variables: dict[str, str]
    expected: str
    note: str
    graders: tuple[dict[str, Any], ...]
    threshold: float | None


@dataclass(frozen=True)
class ParsedConfig:
    description: str
    rows: list[ParsedRow]


def _bad(message: str, where: str) -> EvalInvalid:
    return EvalInvalid(f"{where}: {message}", field=where)


def _count_nodes(value: object) -> None:
    budget = NODES_MAX
    stack = [value]
    while stack:
        item = stack.pop()
        budget -= 1
        if budget < 0:
            raise _bad(f"more than {NODES_MAX:,} values (aliases count each time).", "file")
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _scalar(value: object, where: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if value is None:
        return ""
    raise _bad(
        "a list or object here is not supported (promptfoo would expand a list into several"
        " tests); give one text.",
        where,
    )


def _render(value: str, variables: Mapping[str, str], where: str) -> str:
    """promptfoo renders assertion values as templates with the test's vars: `{{name}}` of a
    var is filled here; any other template expression is refused (400)."""
    rest = _TEMPLATE.sub(lambda m: "" if m.group(1) in variables else m.group(0), value)
    if _TEMPLATE_ANY.search(rest):
        raise _bad(
            "only {{name}} template expressions naming one of the test's vars are supported.",
            where,
        )
    return _TEMPLATE.sub(lambda m: variables[m.group(1)], value)


def _text_value(
    raw: object, variables: Mapping[str, str], where: str, *, required: bool = True
) -> str | None:
    if raw is None:
        if required:
            raise _bad("needs a value.", where)
        return None
    if isinstance(raw, str) and raw.startswith("file://"):
        raise _bad("file:// references cannot be imported; put the text in the file.", where)
    if not isinstance(raw, str | int | float) or isinstance(raw, bool):
        raise _bad("the value must be a text.", where)
    return _render(str(raw), variables, where)


def _number(raw: object, where: str, *, required: bool) -> float | None:
    if raw is None:
        if required:
            raise _bad("needs a threshold.", where)
        return None
    if isinstance(raw, bool) or not isinstance(raw, int | float) or raw < 0:
        raise _bad("must be a number ≥ 0.", where)
    return float(raw)


def _values(raw: object, variables: Mapping[str, str], where: str) -> list[str]:
    if isinstance(raw, str):
        items: list[Any] = [part.strip() for part in raw.split(",") if part.strip()]
    elif isinstance(raw, list):
        items = raw
    else:
        raise _bad("a list of texts (or one text, comma-separated).", where)
    return [_text_value(item, variables, f"{where}.{i}") or "" for i, item in enumerate(items)]


def _schema(raw: object, where: str) -> dict[str, Any] | None:
    if raw is None:
        return None
    if isinstance(raw, dict):
        return raw
    raise _bad("a JSON Schema object (file:// references cannot be imported).", where)


def _assertion_spec(
    assertion: object, variables: Mapping[str, str], where: str, *, judge_version: int | None
) -> dict[str, Any]:
    """One promptfoo assertion → one Redline grader spec (validated by the caller)."""
    if not isinstance(assertion, dict):
        raise _bad("an assertion is an object with a type.", where)
    kind = assertion.get("type")
    if not isinstance(kind, str):
        raise _bad("needs a type.", f"{where}.type")
    unknown = sorted(set(assertion) - _ASSERT_KEYS)
    if unknown:
        raise _bad(
            f"“{unknown[0]}” is not supported on an imported assertion.", f"{where}.{unknown[0]}"
        )
    negate = kind.startswith("not-")
    base = kind[4:] if negate else kind
    if base not in SUPPORTED:
        raise _bad(
            f"promptfoo's “{kind}” assertion has no Redline grader; supported: "
            + ", ".join(SUPPORTED)
            + " (and their not- forms).",
            f"{where}.type",
        )
    value = assertion.get("value")
    threshold = assertion.get("threshold")
    at = f"{where}.value"
    spec: dict[str, Any]
    if base == "equals":
        if isinstance(value, dict | list):
            raise _bad("equals with an object or list value is not supported.", at)
        spec = {"type": "equals", "value": _text_value(value, variables, at), "trim": False}
    elif base in ("contains", "icontains"):
        spec = {
            "type": "not-contains" if negate else "contains",
            "value": _text_value(value, variables, at),
            "ignore_case": base == "icontains",
        }
        negate = False  # the not- form is its own Redline type
    elif base == "starts-with":
        spec = {"type": "starts-with", "value": _text_value(value, variables, at)}
    elif base in ("contains-any", "contains-all", "icontains-any", "icontains-all"):
        spec = {
            "type": base.removeprefix("i"),
            "values": _values(value, variables, at),
            "ignore_case": base.startswith("i"),
        }
    elif base == "regex":
        spec = {"type": "regex", "pattern": _text_value(value, variables, at)}
    elif base == "is-json":
        schema = _schema(value, at)
        spec = {"type": "json-schema", "schema": schema} if schema else {"type": "json-valid"}
    elif base == "contains-json":
        spec = {"type": "contains-json", "schema": _schema(value, at)}
    elif base == "levenshtein":
        limit = _number(threshold, f"{where}.threshold", required=False)
        spec = {"type": "levenshtein", "value": _text_value(value, variables, at)}
        if limit is not None:
            spec["limit"] = limit
        threshold = None
    elif base in ("latency", "cost"):
        limit = _number(threshold, f"{where}.threshold", required=True)
        spec = {"type": "max-latency-ms" if base == "latency" else "max-cost", "limit": limit}
        threshold = None
    else:  # llm-rubric
        if judge_version is None:
            raise _bad(
                "llm-rubric needs a judge: give judge_version, the id of a prompt version that"
                ' answers {"score": 0..1, "reason": "..."}.',
                f"{where}.type",
            )
        spec = {
            "type": "llm-judge",
            "rubric": _text_value(value, variables, at),
            "judge_version": judge_version,
        }
        if threshold is not None:
            spec["threshold"] = threshold
        threshold = None
    if threshold is not None:
        raise _bad(f"{kind} takes no threshold.", f"{where}.threshold")
    for key in ("weight", "metric"):
        if assertion.get(key) is not None:
            spec[key] = assertion[key]
    if negate:
        spec["negate"] = True
    return spec


def _specs(
    raw: object, variables: Mapping[str, str], where: str, *, judge_version: int | None
) -> list[dict[str, Any]]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise _bad("assert must be a list of assertions.", where)
    specs = []
    for index, assertion in enumerate(raw):
        at = f"{where}.{index}"
        spec = _assertion_spec(assertion, variables, at, judge_version=judge_version)
        (parsed,) = grader_specs_parse([spec], where_prefix=at)
        specs.append(parsed.as_json())
    return specs


def _variables(raw: object, where: str) -> dict[str, str]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise _bad("vars must be an object of name → text.", where)
    return {str(name): _scalar(value, f"{where}.{name}") for name, value in raw.items()}


def _config_rows(config: dict[str, Any], *, judge_version: int | None) -> list[ParsedRow]:
    default = config.get("defaultTest") or {}
    if not isinstance(default, dict):
        raise _bad("file:// references cannot be imported; inline the default test.", "defaultTest")
    unknown = sorted(set(default) - {"vars", "assert", "threshold"})
    if unknown:
        raise _bad(f"“{unknown[0]}” is not supported.", f"defaultTest.{unknown[0]}")
    default_vars = _variables(default.get("vars"), "defaultTest.vars")
    if config.get("scenarios"):
        raise _bad("scenarios are not supported; list the tests.", "scenarios")
    tests = config.get("tests")
    if not isinstance(tests, list) or not tests:
        raise _bad("a list of tests (file:// and glob references cannot be imported).", "tests")
    rows = []
    for index, test in enumerate(tests):
        where = f"tests.{index}"
        if not isinstance(test, dict):
            raise _bad("a test is an object with vars and assert.", where)
        unknown = sorted(set(test) - _TEST_KEYS)
        if unknown:
            raise _bad(f"“{unknown[0]}” is not supported.", f"{where}.{unknown[0]}")
        variables = {**default_vars, **_variables(test.get("vars"), f"{where}.vars")}
        graders = _specs(
            default.get("assert"), variables, "defaultTest.assert", judge_version=judge_version
        ) + _specs(test.get("assert"), variables, f"{where}.assert", judge_version=judge_version)
        threshold = test.get("threshold", default.get("threshold"))
        metadata = test.get("metadata") or {}
        if not isinstance(metadata, dict):
            raise _bad("metadata must be an object.", f"{where}.metadata")
        rows.append(
            ParsedRow(
                variables=variables,
                expected=_scalar(metadata.get("expected"), f"{where}.metadata.expected"),
                note=_scalar(test.get("description"), f"{where}.description"),
                graders=tuple(graders),
                threshold=_number(threshold, f"{where}.threshold", required=False),
            )
        )
    return rows


def _csv_assertion(text: str) -> dict[str, Any]:
    """promptfoo's `__expected` shorthand → an assertion (`contains: x`, `not-icontains: x`,
    `levenshtein(3): x`, `grade: rubric`, `is-json`); anything else is `equals` the text."""
    if text.startswith(("grade:", "llm-rubric:")):
        return {"type": "llm-rubric", "value": text.partition(":")[2].strip()}
    if text.startswith(("fn:", "eval:", "javascript:", "python:", "file://")):
        return {"type": "javascript" if not text.startswith("python:") else "python"}
    match = _CSV_PREFIX.match(text)
    if match:
        negate, kind, threshold, value = match.groups()
        if kind in SUPPORTED and (value is not None or kind in ("is-json", "contains-json")):
            assertion: dict[str, Any] = {"type": (negate or "") + kind}
            if value is not None:
                assertion["value"] = value
            if threshold is not None:
                assertion["threshold"] = float(threshold)
            return assertion
    return {"type": "equals", "value": text}


def _csv_rows(text: str, *, judge_version: int | None) -> list[ParsedRow]:
    reader = csv.DictReader(io.StringIO(text, newline=""))
    if not reader.fieldnames:
        raise _bad("the CSV has no header row.", "file")
    rows = []
    try:
        for number, record in enumerate(reader, start=2):
            where = f"file.line {number}"
            if None in record:
                raise _bad("more cells than the header.", where)
            variables: dict[str, str] = {}
            assertions: list[dict[str, Any]] = []
            expected, note, threshold = "", "", None
            for column, cell in record.items():
                cell = cell or ""
                if not column.startswith("__"):
                    variables[column] = cell
                elif column.startswith("__expected"):
                    if cell.strip():
                        assertion = _csv_assertion(cell)
                        assertions.append(assertion)
                        if assertion["type"] == "equals" and not expected:
                            expected = cell
                elif column == "__description":
                    note = cell
                elif column == "__threshold":
                    try:
                        threshold = float(cell) if cell.strip() else None
                    except ValueError:
                        raise _bad("__threshold is not a number.", where) from None
                elif column == "__metadata:expected":
                    expected = cell
                else:
                    raise _bad(f"the column {column} is not supported.", where)
            graders = tuple(
                _specs(assertions, variables, f"{where}.__expected", judge_version=judge_version)
            )
            rows.append(ParsedRow(variables, expected, note, graders, threshold))
    except csv.Error as error:
        raise _bad(f"not valid CSV ({error}).", "file") from None
    return rows


def promptfoo_parse(*, data: bytes, filename: str, judge_version: int | None) -> ParsedConfig:
    """A promptfooconfig.yaml (or promptfoo CSV) → rows with their graders; EvalInvalid (a
    400) naming what cannot be imported."""
    if len(data) > CONFIG_MAX_BYTES:
        raise _bad(f"at most {CONFIG_MAX_BYTES // (1024 * 1024)} MB.", "file")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise _bad(f"not UTF-8 (byte {error.start}).", "file") from None
    if filename.lower().endswith(".csv"):
        return ParsedConfig(description="", rows=_csv_rows(text, judge_version=judge_version))
    try:
        config = yaml.safe_load(text)  # plain data only: no tag builds an object
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = f" at line {mark.line + 1}" if mark is not None else ""
        raise _bad(f"not valid YAML{line}.", "file") from None
    if not isinstance(config, dict):
        raise _bad("a promptfoo config is a YAML mapping with tests.", "file")
    _count_nodes(config)
    description = config.get("description")
    return ParsedConfig(
        description=description.strip() if isinstance(description, str) else "",
        rows=_config_rows(config, judge_version=judge_version),
    )


def is_promptfoo_file(*, filename: str, head: bytes) -> bool:
    """A YAML file, or a CSV whose header names a promptfoo column (`__expected`, …)."""
    lower = filename.lower()
    if lower.endswith((".yaml", ".yml")):
        return True
    first = head.split(b"\n", 1)[0]
    return lower.endswith(".csv") and (b"__expected" in first or b"__description" in first)


# --- export -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExportRow:
    variables: Mapping[str, str]
    expected: str
    note: str
    graders: list[dict[str, Any]]
    threshold: float | None


def _assertion(spec: GraderSpec, row: ExportRow, where: str) -> dict[str, Any]:
    """One Redline grader → one promptfoo assertion; EvalInvalid for a grader promptfoo has no
    assertion for (nothing is dropped)."""
    kind = spec.type
    ignore_case = bool(spec.options.get("ignore_case"))
    value = spec.value if spec.value is not None else row.expected
    body: dict[str, Any]
    if kind in ("equals", "contains", "not-contains", "starts-with", "levenshtein") and not value:
        raise _bad(f"{kind} compares with the row's expected output, and it is empty.", where)
    if kind == "equals" and not ignore_case:
        if spec.options.get("trim", True):
            # promptfoo's equals is exact; Redline's trims both sides by default.
            body = {"type": "regex", "value": r"^\s*" + _js_escape(value.strip()) + r"\s*$"}
        else:
            body = {"type": "equals", "value": value}
    elif kind in ("contains", "not-contains"):
        prefix = "not-" if kind == "not-contains" else ""
        body = {"type": prefix + ("icontains" if ignore_case else "contains"), "value": value}
    elif kind == "starts-with" and not ignore_case:
        body = {"type": "starts-with", "value": value}
    elif kind in ("contains-any", "contains-all"):
        body = {"type": ("i" if ignore_case else "") + kind, "value": spec.options["values"]}
    elif kind == "regex":
        body = {"type": "regex", "value": spec.value}
    elif kind == "json-valid":
        body = {"type": "is-json"}
    elif kind in ("json-schema", "contains-json") and (
        spec.options.get("schema") or kind == "contains-json"
    ):
        body = {"type": "is-json" if kind == "json-schema" else "contains-json"}
        if spec.options.get("schema"):
            body["value"] = spec.options["schema"]
    elif kind == "levenshtein":
        body = {"type": "levenshtein", "value": value, "threshold": spec.limit}
    elif kind == "max-latency-ms":
        body = {"type": "latency", "threshold": spec.limit}
    elif kind == "max-cost":
        body = {"type": "cost", "threshold": spec.limit}
    elif kind == "llm-judge":
        body = {"type": "llm-rubric", "value": spec.value, "threshold": spec.options["threshold"]}
    else:
        detail = " with ignore_case" if ignore_case else ""
        detail = " without a schema" if kind == "json-schema" else detail
        raise _bad(f"{kind}{detail} has no promptfoo assertion.", where)
    if spec.negate:
        body["type"] = "not-" + body["type"]
    if spec.weight != 1.0:
        body["weight"] = spec.weight
    if spec.metric:
        body["metric"] = spec.metric
    return body


def _js_escape(text: str) -> str:
    return re.sub(r"[.*+?^${}()|[\]\\/-]", lambda m: "\\" + m.group(0), text)


PROVIDER_IDS: Final = {"anthropic": "anthropic:messages:{model}", "openai": "openai:chat:{model}"}


def promptfoo_export(
    *,
    title: str,
    rows: list[ExportRow],
    content: Mapping[str, Any] | None,
    version_label: str,
    source_url: str,
) -> str:
    """The rows and their graders as a promptfooconfig.yaml. `content` is the prompt version
    the config runs (its messages and system prompt as a chat prompt, its provider and model);
    without one the config lists tests only."""
    tests = []
    for index, row in enumerate(rows):
        where = f"rows.{index}.graders"
        test: dict[str, Any] = {}
        if row.note:
            test["description"] = row.note
        test["vars"] = dict(row.variables)
        asserts = [
            _assertion(grader_spec_load(body), row, f"{where}.{i}")
            for i, body in enumerate(row.graders)
        ]
        if asserts:
            test["assert"] = asserts
        if row.threshold is not None:
            test["threshold"] = row.threshold
        if row.expected:
            test["metadata"] = {"expected": row.expected}
        tests.append(test)
    config: dict[str, Any] = {"description": title}
    if content is not None:
        messages = [{"role": "system", "content": content["system"]}] if content["system"] else []
        messages += [{"role": m["role"], "content": m["content"]} for m in content["messages"]]
        provider = content["provider"]
        template = PROVIDER_IDS.get(provider)
        provider_id = template.format(model=content["model"]) if template else "echo"
        config["prompts"] = [
            {"raw": json.dumps(messages, ensure_ascii=False), "label": version_label}
        ]
        config["providers"] = [{"id": provider_id, "config": _provider_config(content)}]
    config["tests"] = tests
    header = (
        f"# promptfooconfig.yaml exported from Redline ({source_url}).\n"
        "# Run it with `npx promptfoo@latest eval -c <this file>`; re-import it on the test"
        " set's page\n# or with POST /api/v1/prompts/{id}/testsets/import/.\n"
    )
    return header + yaml.safe_dump(config, sort_keys=False, allow_unicode=True, width=100)


def _provider_config(content: Mapping[str, Any]) -> dict[str, Any]:
    params = content.get("params") or {}
    return {
        k: params[k] for k in ("temperature", "max_tokens", "top_p") if params.get(k) is not None
    }
