"""Every answer of `/api/v1/` checked against the OpenAPI schema the app serves.

`tests/conftest.py` installs `ResponseChecker.check` around Django's request handling for every
test, so each answer a test receives — through the test client, DRF's APIClient, the live server
or a WSGI call — is checked against its operation in `/api/schema/` (generated once per test
session):

- the path and method resolve to a documented operation (an undocumented method must be refused
  with 401/403/404/405);
- the status is one the operation documents;
- the content type is one the operation documents for that status (no body for 204 and 304);
- a JSON body validates against the documented schema (OpenAPI 3.0 `nullable` honoured, `$ref`s
  resolved, formats checked).

A failure names the operation, the method and path, the status and what did not match.
"""

from __future__ import annotations

import functools
import json
import re
import threading
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import best_match

API_PREFIX = "/api/v1/"
# Answers to a method an operation does not have (DRF checks credentials before the method).
UNDOCUMENTED_METHOD_STATUSES = {401, 403, 404, 405}
SKIPPED_METHODS = {"HEAD", "OPTIONS"}


def openapi_to_jsonschema(node: Any) -> Any:
    """An OpenAPI 3.0 schema object as JSON Schema 2020-12: `nullable: true` becomes a type
    that admits null; everything else JSON Schema reads the same way (or ignores)."""
    if isinstance(node, list):
        return [openapi_to_jsonschema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: openapi_to_jsonschema(value) for key, value in node.items()}
    if out.pop("nullable", False):
        if "enum" in out:
            out["enum"] = [*out["enum"], None]
        if "type" in out:
            out["type"] = [out["type"], "null"]
        else:
            rest = {k: v for k, v in out.items() if k not in ("description", "readOnly")}
            out = {"anyOf": [rest, {"type": "null"}]}
    return out


@dataclass(frozen=True)
class Operation:
    method: str
    template: str
    operation_id: str
    responses: dict[str, Any]

    @property
    def label(self) -> str:
        return f"{self.operation_id} ({self.method} {self.template})"


@dataclass
class ApiSchema:
    """The app's OpenAPI document with operations found by request path and method."""

    document: dict[str, Any]
    _validators: dict[tuple[str, str, str], Draft202012Validator] = field(default_factory=dict)

    @cached_property
    def components(self) -> dict[str, Any]:
        return openapi_to_jsonschema(self.document.get("components", {}))

    @cached_property
    def _patterns(self) -> list[tuple[re.Pattern[str], str]]:
        def literal_segments(template: str) -> int:
            return sum(1 for part in template.split("/") if part and not part.startswith("{"))

        templates = sorted(self.document["paths"], key=literal_segments, reverse=True)
        patterns = []
        for template in templates:
            regex = re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(template))
            patterns.append((re.compile(regex), template))
        return patterns

    def template_for(self, path: str) -> str | None:
        for pattern, template in self._patterns:
            if pattern.fullmatch(path):
                return template
        return None

    def operation(self, method: str, template: str) -> Operation | None:
        definition = self.document["paths"][template].get(method.lower())
        if definition is None:
            return None
        return Operation(
            method=method.upper(),
            template=template,
            operation_id=definition.get("operationId", "?"),
            responses=definition.get("responses", {}),
        )

    def validator(self, op: Operation, status: str, media_type: str) -> Draft202012Validator:
        key = (op.operation_id, status, media_type)
        if key not in self._validators:
            schema = op.responses[status]["content"][media_type].get("schema", {})
            root = {**openapi_to_jsonschema(schema), "components": self.components}
            self._validators[key] = Draft202012Validator(root, format_checker=FormatChecker())
        return self._validators[key]


def sse_event_problem(template: str, event: str, data: Any) -> str | None:
    """What is wrong with one server-sent event of the GET operation at `template`: an event
    name its `text/event-stream` answer does not list in `x-sse-events`, or `data` that does
    not validate against the schema listed for it. None when it matches."""
    schema = api_schema_load()
    stream = schema.document["paths"][template]["get"]["responses"]["200"]["content"]
    events = stream["text/event-stream"].get("x-sse-events", {})
    if event not in events:
        return f"event {event!r} is not documented (documented: {sorted(events)})"
    root = {**openapi_to_jsonschema(events[event]), "components": schema.components}
    error = best_match(Draft202012Validator(root, format_checker=FormatChecker()).iter_errors(data))
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path) or "(the data)"
    return f"event {event!r}: {where}: {error.message}"


def _media_type(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def _documented(content: dict[str, Any], media_type: str) -> str | None:
    """The documented media type that covers this one (`*/*` and `text/*` ranges included)."""
    for documented in content:
        if documented == media_type or documented == "*/*":
            return documented
        if documented.endswith("/*") and media_type.startswith(documented[:-1]):
            return documented
    return None


@dataclass(frozen=True)
class Mismatch:
    method: str
    path: str
    status: int
    operation: str
    problem: str

    def __str__(self) -> str:
        return (
            f"answer does not match the OpenAPI schema: {self.method} {self.path} -> "
            f"{self.status}, operation {self.operation}: {self.problem}"
        )


class SchemaMismatch(AssertionError):
    pass


@functools.cache
def api_schema_load() -> ApiSchema:
    """The app's OpenAPI document as `/api/schema/` serves it, generated once per process."""
    from drf_spectacular.generators import SchemaGenerator
    from drf_spectacular.renderers import OpenApiJsonRenderer

    document = SchemaGenerator().get_schema(request=None, public=True)
    return ApiSchema(json.loads(OpenApiJsonRenderer().render(document)))


class ResponseChecker:
    """Checks answers against `schema` (by default the app's, loaded at the first API answer);
    problems raise in the test's own thread and are kept for the test's teardown when they
    happened elsewhere (a live server's thread)."""

    def __init__(self, schema: ApiSchema | None = None) -> None:
        self._schema = schema
        self.test_thread = threading.get_ident()
        self.elsewhere: list[Mismatch] = []

    @property
    def schema(self) -> ApiSchema:
        if self._schema is None:
            self._schema = api_schema_load()
        return self._schema

    def check(self, request: Any, response: Any) -> None:
        path = request.path
        if not path.startswith(API_PREFIX) or request.method in SKIPPED_METHODS:
            return
        problem = self.problem(request.method, path, response)
        if problem is None:
            return
        if threading.get_ident() == self.test_thread:
            raise SchemaMismatch(str(problem))
        self.elsewhere.append(problem)

    def problem(self, method: str, path: str, response: Any) -> Mismatch | None:
        template = self.schema.template_for(path)
        if template is None:
            return None  # not an API path at all: Django's 404, not an operation's answer
        status = response.status_code
        op = self.schema.operation(method, template)
        if op is None:
            if status in UNDOCUMENTED_METHOD_STATUSES:
                return None
            label = f"(none: {method} is not documented for {template})"
            return Mismatch(method, path, status, label, "an undocumented method was answered")

        def mismatch(problem: str) -> Mismatch:
            return Mismatch(method, path, status, op.label, problem)

        documented = op.responses.get(str(status)) or op.responses.get(f"{str(status)[0]}XX")
        if documented is None:
            return mismatch(
                f"status {status} is not documented (documented: {sorted(op.responses)})"
            )
        content = documented.get("content") or {}
        body_allowed = status not in (204, 304)
        if not content or not body_allowed:
            if body_allowed and not getattr(response, "streaming", False) and response.content:
                return mismatch("a body was sent where the schema documents none")
            return None
        media_type = _media_type(response.get("Content-Type", ""))
        documented_type = _documented(content, media_type)
        if documented_type is None:
            return mismatch(f"content type {media_type!r} is not documented ({sorted(content)})")
        if getattr(response, "streaming", False) or not documented_type.endswith("json"):
            return None
        try:
            body = json.loads(response.content)
        except ValueError as exc:
            return mismatch(f"the body is not JSON ({exc})")
        errors = list(self.schema.validator(op, str(status), documented_type).iter_errors(body))
        if not errors:
            return None
        error = best_match(errors)
        where = "/".join(str(part) for part in error.absolute_path) or "(the body)"
        return mismatch(
            f"the {documented_type} body does not validate at {where}: {error.message} "
            f"({len(errors)} error(s))"
        )
