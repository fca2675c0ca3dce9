"""Evaluations' HTTP API (docs/api.md, Evaluations): test sets, evaluations, results, cancel.

Viewers of a prompt read its test sets and evaluations; editors and owners create them. Share
links never reach them. Views parse, call one selector or service, and answer.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from common.api import NoUrlFormatNegotiation
from common.auth import request_actor
from common.fields import JsonListField, StrictSerializer
from common.limits import MESSAGE_MAX_CHARS, TITLE_MAX_CHARS
from playground.models import LABEL_NAME_MAX_CHARS, MODEL_MAX_CHARS, Role
from playground.selectors import prompt_access_get_for_user
from playground.text.content import PROVIDERS

from .exceptions import EvalInvalid, NotFound
from .graders import GRADERS_MAX, grader_spec_request
from .models import NOTE_MAX_CHARS, Evaluation, TestSetRevision
from .promptfoo import CONFIG_MAX_BYTES, is_promptfoo_file
from .selectors import (
    evaluation_get_for_user,
    evaluation_list_for_prompt,
    evaluation_results,
    evaluation_summary,
    testset_get_for_user,
    testset_list_for_prompt,
    testset_rows,
    testset_version_for_export,
)
from .services.evaluations import MODELS_MAX, VERSIONS_MAX, evaluation_cancel, evaluation_create
from .services.testsets import (
    VALUE_MAX_CHARS,
    promptfoo_rows,
    row_json,
    testset_create,
    testset_export,
    testset_export_promptfoo,
    testset_import_file,
    testset_revise,
    testset_rows_parse,
)
from .versions import versions_from_labels

RESULTS_PAGE_MAX = 500
LABELS_MAX = 10  # label names one evaluation may name


class RowSerializer(serializers.Serializer[dict[str, Any]]):
    position = serializers.IntegerField()
    variables = serializers.DictField(child=serializers.CharField(allow_blank=True))
    expected = serializers.CharField(allow_blank=True)
    note = serializers.CharField(allow_blank=True)
    graders = serializers.ListField(
        child=serializers.DictField(),
        help_text="Graders for this row alone (`[{type, ...}]`), after the evaluation's.",
    )
    threshold = serializers.FloatField(
        allow_null=True,
        help_text="With one (> 0), the row's cells pass when their weighted score reaches it.",
    )


class TestSetSerializer(serializers.Serializer[dict[str, Any]]):
    id = serializers.IntegerField()
    prompt = serializers.IntegerField()
    name = serializers.CharField()
    revision = serializers.IntegerField(help_text="The number of the revision these rows are.")
    latest_revision = serializers.IntegerField()
    message = serializers.CharField(allow_blank=True)
    created_at = serializers.DateTimeField()
    rows = RowSerializer(many=True)


def _testset_body(testset_id: int, revision: TestSetRevision, latest: int) -> dict[str, Any]:
    rows = testset_rows(revision=revision)
    return {
        "id": testset_id,
        "prompt": revision.testset.prompt_id,
        "name": revision.testset.name,
        "revision": revision.number,
        "latest_revision": latest,
        "message": revision.message,
        "created_at": revision.created_at,
        "rows": [
            {
                "position": r.position,
                **row_json(r),
                "graders": [grader_spec_request(g) for g in r.graders],
                "threshold": r.threshold,
            }
            for r in rows
        ],
    }


ROWS_HELP = (
    "A list of `{variables: {name: text}, expected?: text, note?: text, graders?: [{type, ...}],"
    " threshold?: number}`."
)
FILE_HELP = (
    "CSV (a header row; `expected` and `note` columns), JSONL, or a promptfoo config:"
    " `promptfooconfig.yaml`, or promptfoo's CSV with `__expected` columns (docs/evals.md)."
)
JUDGE_HELP = "The prompt version that grades the config's `llm-rubric` assertions."
# The shapes the services check item by item (their 400 names the item), stated for clients.
GRADER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"type": {"type": "string", "description": "A grader type (docs/evals.md)."}},
    "required": ["type"],
    "additionalProperties": {},
}
ROW_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "variables": {
            "type": "object",
            "additionalProperties": {"type": "string", "maxLength": VALUE_MAX_CHARS},
        },
        "expected": {"type": "string", "nullable": True, "maxLength": VALUE_MAX_CHARS},
        "note": {"type": "string", "nullable": True, "maxLength": NOTE_MAX_CHARS},
        "graders": {"type": "array", "items": GRADER_SCHEMA},
        "threshold": {"type": "number", "nullable": True, "minimum": 0},
    },
}
MODEL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "provider": {"type": "string", "enum": list(PROVIDERS)},
        "model": {
            "type": "string",
            "maxLength": MODEL_MAX_CHARS,
            "description": "Default: the provider's default model.",
        },
    },
    "required": ["provider"],
}


def _rows_field() -> JsonListField:
    return JsonListField(
        items=ROW_SCHEMA, max_items=settings.EVAL_TESTSET_ROWS_MAX, help_text=ROWS_HELP
    )


class TestSetListCreateApi(APIView):
    class InputSerializer(StrictSerializer):
        name = serializers.CharField(max_length=TITLE_MAX_CHARS)
        rows = _rows_field()

    @extend_schema(
        summary="List a prompt's test sets",
        responses=inline_serializer(
            "TestSetListItem",
            {
                "id": serializers.IntegerField(),
                "name": serializers.CharField(),
                "created_at": serializers.DateTimeField(),
            },
            many=True,
        ),
    )
    def get(self, request: Request, prompt_id: int) -> Response:
        access = prompt_access_get_for_user(
            user=request.user, prompt_id=prompt_id, min_role=Role.VIEWER
        )
        sets = testset_list_for_prompt(prompt_id=access.prompt.pk)[:200]
        return Response([{"id": s.pk, "name": s.name, "created_at": s.created_at} for s in sets])

    @extend_schema(
        summary="Create a test set",
        description="Rows are written once: later edits make new revisions"
        " (`POST /api/v1/testsets/{id}/revisions/`). Editors and owners.",
        request=InputSerializer,
        responses={201: TestSetSerializer},
    )
    def post(self, request: Request, prompt_id: int) -> Response:
        access = prompt_access_get_for_user(
            user=request.user, prompt_id=prompt_id, min_role=Role.VIEWER
        )
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        revision = testset_create(
            actor=request_actor(request),
            prompt=access.prompt,
            role=access.role,
            name=data.validated_data["name"],
            rows=testset_rows_parse(data.validated_data["rows"]),
        )
        body = _testset_body(revision.testset_id, revision, revision.number)
        return Response(TestSetSerializer(body).data, status=status.HTTP_201_CREATED)


class TestSetDetailApi(APIView):
    @extend_schema(
        summary="A test set's rows",
        parameters=[
            OpenApiParameter(
                "revision",
                {"type": "integer", "minimum": 1},
                required=False,
                description="Default: the latest.",
            )
        ],
        responses=TestSetSerializer,
    )
    def get(self, request: Request, testset_id: int) -> Response:
        access = testset_get_for_user(
            user=request.user, testset_id=testset_id, revision=request.query_params.get("revision")
        )
        return Response(
            TestSetSerializer(_testset_body(testset_id, access.revision, access.latest_number)).data
        )


class TestSetReviseApi(APIView):
    class InputSerializer(StrictSerializer):
        rows = _rows_field()
        message = serializers.CharField(
            required=False, allow_blank=True, max_length=MESSAGE_MAX_CHARS
        )
        based_on = serializers.IntegerField(
            required=False,
            min_value=1,
            help_text="The revision number the edit started from; 409 if the set moved on.",
        )

    @extend_schema(
        summary="Save a new revision of a test set",
        request=InputSerializer,
        responses={201: TestSetSerializer},
    )
    def post(self, request: Request, testset_id: int) -> Response:
        access = testset_get_for_user(user=request.user, testset_id=testset_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        revision = testset_revise(
            actor=request_actor(request),
            testset=access.testset,
            role=access.role,
            rows=testset_rows_parse(data.validated_data["rows"]),
            message=data.validated_data.get("message", ""),
            based_on=data.validated_data.get("based_on"),
        )
        body = _testset_body(testset_id, revision, revision.number)
        return Response(TestSetSerializer(body).data, status=status.HTTP_201_CREATED)


class PromptfooImportApi(APIView):
    parser_classes = [MultiPartParser]

    class InputSerializer(StrictSerializer):
        file = serializers.FileField(help_text=FILE_HELP)
        name = serializers.CharField(
            required=False,
            max_length=TITLE_MAX_CHARS,
            help_text="Default: the config's `description`, else the file's name.",
        )
        judge_version = serializers.IntegerField(required=False, min_value=1, help_text=JUDGE_HELP)

    @extend_schema(
        summary="Create a test set from a promptfoo config",
        description="`tests[].vars` become rows, `assert` (after `defaultTest.assert`) each"
        " row's graders, `threshold` its threshold. An assertion type with no Redline grader is"
        " a 400 naming it. Editors and owners.",
        request={"multipart/form-data": InputSerializer},
        responses={201: TestSetSerializer},
    )
    def post(self, request: Request, prompt_id: int) -> Response:
        access = prompt_access_get_for_user(
            user=request.user, prompt_id=prompt_id, min_role=Role.VIEWER
        )
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        upload = data.validated_data["file"]
        name = upload.name or "promptfooconfig.yaml"
        if not is_promptfoo_file(filename=name, head=b""):
            name = name + ".yaml"  # this endpoint reads promptfoo configs only
        imported = promptfoo_rows(
            actor=request_actor(request),
            data=upload.read(CONFIG_MAX_BYTES + 1),
            filename=name,
            judge_version=data.validated_data.get("judge_version"),
        )
        revision = testset_create(
            actor=request_actor(request),
            prompt=access.prompt,
            role=access.role,
            name=data.validated_data.get("name")
            or (imported.description or upload.name or "promptfoo tests")[:TITLE_MAX_CHARS],
            rows=imported.rows,
        )
        body = _testset_body(revision.testset_id, revision, revision.number)
        return Response(TestSetSerializer(body).data, status=status.HTTP_201_CREATED)


class TestSetImportApi(APIView):
    parser_classes = [MultiPartParser]

    class InputSerializer(StrictSerializer):
        file = serializers.FileField(help_text=FILE_HELP)
        mode = serializers.ChoiceField(
            choices=["append", "replace"],
            default="append",
            help_text="Add to the rows, or replace them.",
        )
        judge_version = serializers.IntegerField(required=False, min_value=1, help_text=JUDGE_HELP)

    @extend_schema(
        summary="Import rows from CSV, JSONL or a promptfoo config as a new revision",
        request={"multipart/form-data": InputSerializer},
        responses={201: TestSetSerializer},
    )
    def post(self, request: Request, testset_id: int) -> Response:
        access = testset_get_for_user(user=request.user, testset_id=testset_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        upload = data.validated_data["file"]
        imported = testset_import_file(
            actor=request_actor(request),
            upload=upload,
            judge_version=data.validated_data.get("judge_version"),
        )
        revision = testset_revise(
            actor=request_actor(request),
            testset=access.testset,
            role=access.role,
            rows=imported,
            message=f"Imported {len(imported)} rows from {upload.name}"[:MESSAGE_MAX_CHARS],
            append=data.validated_data["mode"] == "append",
        )
        return Response(
            TestSetSerializer(_testset_body(testset_id, revision, revision.number)).data,
            status=status.HTTP_201_CREATED,
        )


class TestSetExportApi(APIView):
    # `format` names the file format here, so DRF's `?format=` renderer override is off.
    content_negotiation_class = NoUrlFormatNegotiation

    @extend_schema(
        summary="Download a test set's rows",
        description="`format=promptfoo`: the rows and their graders as a promptfooconfig.yaml"
        " running `version` (default: the newest) — a 400 names a grader promptfoo has no"
        " assertion for.",
        parameters=[
            OpenApiParameter("format", str, enum=["csv", "jsonl", "promptfoo"], required=False),
            OpenApiParameter("revision", {"type": "integer", "minimum": 1}, required=False),
            OpenApiParameter(
                "version",
                {"type": "integer", "minimum": 1},
                required=False,
                description="format=promptfoo: the version of this prompt the config runs.",
            ),
        ],
        responses={
            (200, "text/csv"): OpenApiTypes.STR,
            (200, "application/jsonl"): OpenApiTypes.STR,
            (200, "application/yaml"): OpenApiTypes.STR,
        },
    )
    def get(self, request: Request, testset_id: int) -> HttpResponse:
        access = testset_get_for_user(
            user=request.user, testset_id=testset_id, revision=request.query_params.get("revision")
        )
        fmt = request.query_params.get("format", "csv")
        if fmt not in ("csv", "jsonl", "promptfoo"):
            raise EvalInvalid("format: csv, jsonl or promptfoo.", field="format")
        if fmt == "promptfoo":
            version = testset_version_for_export(
                testset=access.testset, version=request.query_params.get("version")
            )
            text = testset_export_promptfoo(
                testset=access.testset,
                revision=access.revision,
                rows=testset_rows(revision=access.revision),
                version=version,
                source_url=request.build_absolute_uri(request.path),
            )
            response = HttpResponse(text, content_type="application/yaml; charset=utf-8")
            response["Content-Disposition"] = 'attachment; filename="promptfooconfig.yaml"'
            return response
        text = testset_export(
            revision=access.revision, rows=testset_rows(revision=access.revision), fmt=fmt
        )
        response = HttpResponse(
            text, content_type="text/csv; charset=utf-8" if fmt == "csv" else "application/jsonl"
        )
        name = f"testset-{testset_id}-r{access.revision.number}.{fmt}"
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        return response


SummarySerializer = inline_serializer(
    "EvaluationColumnSummary",
    fields={
        "target": serializers.IntegerField(),
        "version": serializers.IntegerField(),
        "version_number": serializers.IntegerField(),
        "provider": serializers.CharField(),
        "model": serializers.CharField(),
        "cells": serializers.IntegerField(),
        "passed": serializers.IntegerField(),
        "failed": serializers.IntegerField(),
        "errors": serializers.IntegerField(),
        "pending": serializers.IntegerField(),
        "pass_rate": serializers.FloatField(allow_null=True),
        "mean_score": serializers.FloatField(allow_null=True),
        "latency_p50_ms": serializers.IntegerField(allow_null=True),
        "latency_p95_ms": serializers.IntegerField(allow_null=True),
        "input_tokens": serializers.IntegerField(),
        "output_tokens": serializers.IntegerField(),
        "cost_usd": serializers.FloatField(allow_null=True),
    },
)


class ProgressSerializer(serializers.Serializer[dict[str, Any]]):
    done = serializers.IntegerField()
    total = serializers.IntegerField()


class EvaluationSerializer(serializers.Serializer[dict[str, Any]]):
    id = serializers.IntegerField()
    prompt = serializers.IntegerField()
    testset = serializers.IntegerField()
    testset_revision = serializers.IntegerField()
    status = serializers.ChoiceField(choices=Evaluation.Status.choices)
    progress = ProgressSerializer()
    repeat = serializers.IntegerField()
    graders = JsonListField(items=GRADER_SCHEMA)
    created_by = serializers.CharField()
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    summary = serializers.ListField(child=SummarySerializer)


def evaluation_body(evaluation: Evaluation) -> dict[str, Any]:
    return {
        "id": evaluation.pk,
        "prompt": evaluation.prompt_id,
        "testset": evaluation.testset_revision.testset_id,
        "testset_revision": evaluation.testset_revision.number,
        "status": evaluation.status,
        "progress": {"done": evaluation.cells_done, "total": evaluation.cells_total},
        "repeat": evaluation.repeat,
        "graders": evaluation.graders,
        "created_by": evaluation.created_by.username,
        "created_at": evaluation.created_at,
        "finished_at": evaluation.finished_at,
        "summary": [column.as_json() for column in evaluation_summary(evaluation=evaluation)],
    }


class EvaluationListCreateApi(APIView):
    class InputSerializer(StrictSerializer):
        testset = serializers.IntegerField(min_value=1)
        testset_revision = serializers.IntegerField(
            required=False, min_value=1, help_text="Default: the test set's latest revision."
        )
        versions = JsonListField(
            items={"type": "integer", "minimum": 1},
            max_items=VERSIONS_MAX,
            unique_items=True,
            required=False,
            help_text="Version ids of this prompt.",
        )
        labels = serializers.ListField(
            child=serializers.CharField(max_length=LABEL_NAME_MAX_CHARS),
            required=False,
            max_length=LABELS_MAX,
            help_text="Label names, resolved to the versions they point at now (with or"
            " instead of `versions`).",
        )
        models = JsonListField(
            items=MODEL_SCHEMA,
            max_items=MODELS_MAX,
            required=False,
            help_text="`[{provider, model}]`; default: each version's own.",
        )
        graders = JsonListField(
            items=GRADER_SCHEMA,
            min_items=1,
            max_items=GRADERS_MAX,
            help_text="`[{type, ...}]`; see docs/evals.md.",
        )
        repeat = serializers.IntegerField(required=False, min_value=1, max_value=10)

    @extend_schema(
        summary="A prompt's evaluations, newest first", responses=EvaluationSerializer(many=True)
    )
    def get(self, request: Request, prompt_id: int) -> Response:
        access = prompt_access_get_for_user(
            user=request.user, prompt_id=prompt_id, min_role=Role.VIEWER
        )
        return Response(
            [evaluation_body(e) for e in evaluation_list_for_prompt(prompt_id=access.prompt.pk)]
        )

    @extend_schema(
        summary="Start an evaluation",
        description="test-set revision × versions × models × repeat cells, each a run, graded."
        " Editors and owners. 429 past EVALS_ACTIVE_PER_USER running evaluations.",
        request=InputSerializer,
        responses={201: EvaluationSerializer},
    )
    def post(self, request: Request, prompt_id: int) -> Response:
        access = prompt_access_get_for_user(
            user=request.user, prompt_id=prompt_id, min_role=Role.VIEWER
        )
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        given = data.validated_data
        try:
            testset = testset_get_for_user(
                user=request.user,
                testset_id=given["testset"],
                revision=given.get("testset_revision"),
            )
        except NotFound:  # the prompt was found: an unknown test set is a bad field, not a 404
            raise EvalInvalid("testset: no such test set (or revision).", field="testset") from None
        if testset.testset.prompt_id != access.prompt.pk:
            raise EvalInvalid("testset: not a test set of this prompt.", field="testset")
        versions = versions_from_labels(
            prompt=access.prompt, versions=given.get("versions"), labels=given.get("labels")
        )
        evaluation = evaluation_create(
            actor=request_actor(request),
            prompt=access.prompt,
            role=access.role,
            revision=testset.revision,
            versions=versions,
            models=given.get("models"),
            graders=given["graders"],
            repeat=given.get("repeat"),
        )
        fresh = evaluation_get_for_user(user=request.user, evaluation_id=evaluation.pk).evaluation
        return Response(
            EvaluationSerializer(evaluation_body(fresh)).data, status=status.HTTP_201_CREATED
        )


class EvaluationDetailApi(APIView):
    @extend_schema(
        summary="An evaluation: status, progress and the summary per column",
        responses=EvaluationSerializer,
    )
    def get(self, request: Request, evaluation_id: int) -> Response:
        access = evaluation_get_for_user(user=request.user, evaluation_id=evaluation_id)
        return Response(EvaluationSerializer(evaluation_body(access.evaluation)).data)


class GradeSerializer(serializers.Serializer[dict[str, Any]]):
    type = serializers.CharField()
    passed = serializers.BooleanField()
    score = serializers.FloatField()
    reason = serializers.CharField(allow_blank=True)


class ResultSerializer(serializers.Serializer[dict[str, Any]]):
    cell = serializers.IntegerField()
    row = serializers.IntegerField(
        help_text="The row's position in the test-set revision (1-based)."
    )
    version = serializers.IntegerField(help_text="The version's id.")
    version_number = serializers.IntegerField(
        help_text="The version's number in its prompt (v1, v2, …), as pages show it."
    )
    provider = serializers.CharField()
    model = serializers.CharField()
    repeat = serializers.IntegerField()
    status = serializers.CharField()
    run = serializers.IntegerField(allow_null=True)
    output = serializers.CharField(allow_blank=True)
    grades = GradeSerializer(many=True)
    passed = serializers.BooleanField(allow_null=True)
    score = serializers.FloatField(allow_null=True)
    error = serializers.CharField(allow_blank=True)
    latency_ms = serializers.IntegerField(allow_null=True)
    input_tokens = serializers.IntegerField(allow_null=True)
    output_tokens = serializers.IntegerField(allow_null=True)


def _int_param(request: Request, name: str, default: int, *, low: int, high: int) -> int:
    raw = request.query_params.get(name)
    if raw in (None, ""):
        return default
    try:
        value = int(raw)
    except ValueError:
        raise EvalInvalid(f"{name}: a whole number.", field=name) from None
    if not low <= value <= high:
        raise EvalInvalid(f"{name}: from {low} to {high}.", field=name)
    return value


class EvaluationResultsApi(APIView):
    @extend_schema(
        summary="An evaluation's cells with their outputs and grades",
        parameters=[
            OpenApiParameter("only", str, enum=["failures"], required=False),
            OpenApiParameter("offset", int, required=False),
            OpenApiParameter(
                "limit", int, required=False, description=f"At most {RESULTS_PAGE_MAX}."
            ),
        ],
        responses=inline_serializer(
            "EvaluationResultsPage",
            {
                "count": serializers.IntegerField(),
                "offset": serializers.IntegerField(),
                "results": ResultSerializer(many=True),
            },
        ),
    )
    def get(self, request: Request, evaluation_id: int) -> Response:
        access = evaluation_get_for_user(user=request.user, evaluation_id=evaluation_id)
        only = request.query_params.get("only", "")
        if only not in ("", "failures"):
            raise EvalInvalid("only: failures, or leave it out.", field="only")
        offset = _int_param(request, "offset", 0, low=0, high=10**7)
        limit = _int_param(request, "limit", 100, low=1, high=RESULTS_PAGE_MAX)
        results, count = evaluation_results(
            evaluation=access.evaluation,
            reader=request.user,
            offset=offset,
            limit=limit,
            only_failures=only == "failures",
        )
        body = {"count": count, "offset": offset, "results": [r.as_json() for r in results]}
        return Response(body)


class EvaluationCancelApi(APIView):
    @extend_schema(summary="Cancel an evaluation", request=None, responses=EvaluationSerializer)
    def post(self, request: Request, evaluation_id: int) -> Response:
        access = evaluation_get_for_user(user=request.user, evaluation_id=evaluation_id)
        evaluation = evaluation_cancel(actor=request_actor(request), evaluation=access.evaluation)
        return Response(EvaluationSerializer(evaluation_body(evaluation)).data)
