"""JSON Schema under a budget, for the `json-schema` grader (docs/evals.md, Graders under a budget).

A schema comes from a client (a grader's `schema`, a version's response format), so two things
are bounded before and while it validates anything:

- Its shape, checked once (`schema_problem`): at most `SCHEMA_MAX_BYTES` of JSON, nested at
  most `JSON_MAX_DEPTH` levels; every `$ref` a local JSON pointer (`#/$defs/item`: a remote one
  would be fetched by the worker) to a part that exists; no reference cycle (`{"$ref": "#"}`
  recurses without end); reference chains at most `SCHEMA_REF_DEPTH_MAX` long; and the
  schema with every reference expanded at most `SCHEMA_EXPANDED_MAX` nodes (so references
  that each use the next twice cannot cost 2ⁿ).
- Its regular expressions (`pattern`, `patternProperties`, and `additionalProperties`, which
  consults them), run by the `regex` package with a timeout taken from one deadline for the whole
  validation (`schema_errors`): Python's `re`, which jsonschema uses, cannot be interrupted and
  `^(\\w+\\s?)*$` on a long word holds the worker for ever. `unevaluatedProperties` beside
  `patternProperties` would run `re` inside jsonschema, so that pair is refused.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from typing import Any, Final
from urllib.parse import unquote

import jsonschema
import regex
from jsonschema.exceptions import ValidationError

from common.jsonlimits import JSON_MAX_DEPTH, json_depth_exceeds

# A grader's JSON Schema, checked when the evaluation is created: bytes of JSON, the longest
# `$ref` chain, and parts with every reference expanded (docs/evals.md, "Graders under a budget").
SCHEMA_MAX_BYTES: Final = 64 * 1024
SCHEMA_REF_DEPTH_MAX: Final = 16
SCHEMA_EXPANDED_MAX: Final = 20_000

# Keywords whose value is a reference somewhere else; only `$ref` with a local pointer is taken.
_REF_KEYWORDS: Final = ("$ref", "$dynamicRef", "$recursiveRef")
_REF_TARGETS_MAX: Final = 256


class SchemaBudgetExceeded(Exception):
    """A schema's regular expressions used up the validation's time budget."""


# --- the shape, checked once --------------------------------------------------------------------


def _pointer(ref: str) -> tuple[str, ...] | None:
    """`#/a/b~1c` → ("a", "b/c"); None for anything but a local JSON pointer."""
    if ref == "#":
        return ()
    if not ref.startswith("#/"):
        return None
    return tuple(unquote(part).replace("~1", "/").replace("~0", "~") for part in ref[2:].split("/"))


def _walk(node: Any, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every (path, value) under `node`, iteratively."""
    stack: list[tuple[tuple[str, ...], Any]] = [(path, node)]
    while stack:
        where, item = stack.pop()
        yield where, item
        if isinstance(item, dict):
            stack.extend(((*where, str(k)), v) for k, v in item.items())
        elif isinstance(item, list):
            stack.extend(((*where, str(i)), v) for i, v in enumerate(item))


def _resolve(root: Any, pointer: tuple[str, ...]) -> bool:
    node = root
    for part in pointer:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return False
    return True


def schema_problem(schema: Any) -> str | None:
    """Why `schema` may not be used by a grader (a sentence for the `detail`), or None."""
    size = len(json.dumps(schema, ensure_ascii=False).encode("utf-8", "surrogatepass"))
    if size > SCHEMA_MAX_BYTES:
        return f"at most {SCHEMA_MAX_BYTES:,} bytes of JSON (this one is {size:,})"
    if json_depth_exceeds(schema, JSON_MAX_DEPTH):
        return f"nested at most {JSON_MAX_DEPTH} levels"
    nodes: list[tuple[str, ...]] = []
    refs: list[tuple[tuple[str, ...], tuple[str, ...]]] = []  # (where the $ref is, its target)
    has_pattern_properties = has_unevaluated = False
    for where, value in _walk(schema, ()):
        nodes.append(where)
        if not isinstance(value, dict):
            continue
        has_pattern_properties |= "patternProperties" in value
        has_unevaluated |= "unevaluatedProperties" in value
        if where and isinstance(value.get("$id"), str):
            return "$id only at the root (a nested one moves where references point)"
        for keyword in _REF_KEYWORDS:
            if keyword not in value:
                continue
            ref = value[keyword]
            target = _pointer(ref) if keyword == "$ref" and isinstance(ref, str) else None
            if target is None:
                return f"{keyword} {str(ref)[:80]!r}: only local references (#/...) are allowed"
            if not _resolve(schema, target):
                return f"$ref {ref[:80]!r} points to nothing in the schema"
            refs.append((where, target))
    if has_pattern_properties and has_unevaluated:
        return "unevaluatedProperties together with patternProperties is not supported"
    if not refs:
        return None
    if len({target for _where, target in refs}) > _REF_TARGETS_MAX:
        return f"$ref to at most {_REF_TARGETS_MAX} different parts"
    return _refs_problem(nodes, refs)


def _refs_problem(
    nodes: list[tuple[str, ...]], refs: list[tuple[tuple[str, ...], tuple[str, ...]]]
) -> str | None:
    """Cycles, chain depth and expanded size of the reference graph: a part of the schema costs
    its own nodes plus, for each `$ref` inside it, what the referenced part costs."""

    targets = {target for _where, target in refs}
    # Each path's prefixes (at most JSON_MAX_DEPTH of them) that are targets: one pass each.
    own = dict.fromkeys(targets, 0)
    for node in nodes:
        for cut in range(len(node) + 1):
            if node[:cut] in own:
                own[node[:cut]] += 1
    uses: dict[tuple[str, ...], list[tuple[str, ...]]] = {target: [] for target in targets}
    for where, target in refs:
        for cut in range(len(where) + 1):
            if where[:cut] in uses:
                uses[where[:cut]].append(target)
    cost: dict[tuple[str, ...], tuple[int, int]] = {}  # target → (expanded nodes, chain depth)
    limit_nodes = SCHEMA_EXPANDED_MAX
    limit_depth = SCHEMA_REF_DEPTH_MAX
    for start in sorted(targets, key=len):
        # Iterative depth-first evaluation; a target met again while open is a cycle.
        open_: set[tuple[str, ...]] = set()
        stack: list[tuple[tuple[str, ...], bool]] = [(start, False)]
        while stack:
            target, done = stack.pop()
            if target in cost:
                continue
            if done:
                open_.discard(target)
                below = [cost[t] for t in uses[target]]
                total = own[target] + sum(n for n, _d in below)
                depth = 1 + max((d for _n, d in below), default=0)
                if total > limit_nodes:
                    return (
                        f"with its $refs expanded, more than {limit_nodes:,} parts"
                        " (references that reuse each other multiply)"
                    )
                if depth > limit_depth:
                    return f"$ref chains at most {limit_depth} long"
                cost[target] = (total, depth)
                continue
            if target in open_:
                shown = "#/" + "/".join(target) if target else "#"
                return f"$ref to {shown!r} is recursive (a schema may not refer to itself)"
            open_.add(target)
            stack.append((target, True))
            stack.extend((t, False) for t in uses[target] if t not in cost)
    return None


# --- validating under a deadline ----------------------------------------------------------------

_deadline: ContextVar[float] = ContextVar("redline_schema_deadline", default=0.0)


def _search(pattern: str, text: str) -> bool:
    remaining = _deadline.get() - time.monotonic()
    if remaining <= 0:
        raise SchemaBudgetExceeded
    try:
        return regex.search(pattern, text, timeout=remaining) is not None
    except TimeoutError:
        raise SchemaBudgetExceeded from None
    except regex.error:
        return False  # check_schema accepted it as ECMA-262 but `regex` reads it differently


def _pattern(
    validator: Any, pattern: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not _search(pattern, instance):
        yield ValidationError(f"{instance[:80]!r} does not match {pattern[:80]!r}")


def _pattern_properties(
    validator: Any, patterns: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if _search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(
    validator: Any, additional: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    extras = [
        key
        for key in instance
        if key not in properties and not any(_search(p, key) for p in patterns)
    ]
    if validator.is_type(additional, "object"):
        for key in extras:
            yield from validator.descend(instance[key], additional, path=key)
    elif not additional and extras:
        shown = ", ".join(repr(key) for key in sorted(extras)[:10])
        yield ValidationError(f"Additional properties are not allowed ({shown} unexpected)")


_BUDGETED = {
    "pattern": _pattern,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional_properties,
}


def schema_validator(schema: Any) -> Any:
    """A validator of `schema`'s draft whose regular expressions run under the deadline."""
    base = jsonschema.validators.validator_for(schema)
    budgeted = jsonschema.validators.extend(base, validators=_BUDGETED)
    return budgeted(schema)


def schema_errors(schema: Any, instance: Any, *, budget_seconds: float) -> list[ValidationError]:
    """Every error of `instance` against `schema` (already past `schema_problem`), its regular
    expressions sharing `budget_seconds`; SchemaBudgetExceeded when they use it up."""
    token = _deadline.set(time.monotonic() + budget_seconds)
    try:
        return sorted(schema_validator(schema).iter_errors(instance), key=lambda e: list(e.path))
    finally:
        _deadline.reset(token)
