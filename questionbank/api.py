import dataclasses
import typing
from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, PolymorphicProxySerializer, extend_schema
from rest_framework import serializers
from rest_framework.generics import ListAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from common.exceptions import DomainError

from .estimators.batching import BatchSimulation
from .estimators.checkpoint import SwarmSimulation
from .estimators.registry import ESTIMATORS, estimator_for
from .models import DepthArea, FollowUp, Question, WorkedNumber
from .selectors import question_get, question_list
from .throttle import estimate_throttle


class DepthAreaSerializer(serializers.ModelSerializer[DepthArea]):
    class Meta:
        model = DepthArea
        fields: tuple[str, ...] = ("title", "detail", "source", "practice_note")


class FollowUpSerializer(serializers.ModelSerializer[FollowUp]):
    class Meta:
        model = FollowUp
        fields: tuple[str, ...] = ("probe", "look_for", "source", "look_for_source")


class WorkedNumberSerializer(serializers.ModelSerializer[WorkedNumber]):
    class Meta:
        model = WorkedNumber
        fields: tuple[str, ...] = ("label", "inputs", "calculation", "result", "takeaway", "source")


class QuestionListApi(ListAPIView[Question]):
    class OutputSerializer(serializers.ModelSerializer[Question]):
        class Meta:
            model = Question
            fields: tuple[str, ...] = ("slug", "title", "kind", "duration_minutes", "summary")
            ref_name = "QuestionSummary"

    serializer_class = OutputSerializer

    def get_queryset(self) -> QuerySet[Question]:
        kind = self.request.query_params.get("kind")
        if kind is not None and kind not in Question.Kind.values:
            raise DomainError(
                f"kind: unknown kind {kind!r}; one of {', '.join(Question.Kind.values)}.",
                field="kind",
            )
        return question_list(kind=kind)

    @extend_schema(
        parameters=[OpenApiParameter("kind", enum=Question.Kind.values, required=False)],
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)


class QuestionDetailApi(APIView):
    class OutputSerializer(serializers.ModelSerializer[Question]):
        depth_areas = DepthAreaSerializer(many=True, read_only=True)
        follow_ups = FollowUpSerializer(many=True, read_only=True)
        numbers = WorkedNumberSerializer(many=True, read_only=True)

        class Meta:
            model = Question
            fields: tuple[str, ...] = (
                "slug",
                "title",
                "kind",
                "duration_minutes",
                "summary",
                "round",
                "prompt",
                "depth_areas",
                "follow_ups",
                "numbers",
            )
            ref_name = "QuestionDetail"

    @extend_schema(responses=OutputSerializer)
    def get(self, request: Request, slug: str) -> Response:
        return Response(self.OutputSerializer(question_get(slug=slug)).data)


class ErrorSerializer(serializers.Serializer[dict[str, Any]]):
    detail = serializers.CharField()
    field = serializers.CharField(required=False)


def _result_serializer(result: type, name: str) -> type[serializers.Serializer[dict[str, Any]]]:
    """A serializer documenting a simulation result as the API sends it (`asdict`), so the
    schema cannot drift from the dataclass."""
    hints = typing.get_type_hints(result)
    fields = {
        field.name: serializers.IntegerField()
        if hints[field.name] is int
        else serializers.FloatField()
        for field in dataclasses.fields(result)
    }
    return type(name, (serializers.Serializer,), fields)


EstimateBatchSimulationSerializer = _result_serializer(
    BatchSimulation, "EstimateBatchSimulationSerializer"
)
EstimateSwarmSimulationSerializer = _result_serializer(
    SwarmSimulation, "EstimateSwarmSimulationSerializer"
)


class EstimateStorageTierSerializer(serializers.Serializer[dict[str, Any]]):
    name = serializers.CharField()
    days = serializers.FloatField()
    bytes = serializers.FloatField()
    human = serializers.CharField()


class EstimateOutputSerializer(serializers.Serializer[dict[str, Any]]):
    """What every estimate answers around its own figures (the view adds these)."""

    question = serializers.CharField()
    inputs = serializers.DictField(child=serializers.FloatField())
    notes = serializers.ListField(child=serializers.CharField())


class QuestionEstimateApi(APIView):
    """Back-of-envelope estimators (and simulations) for the questions that turn on numbers."""

    class BatchOutputSerializer(EstimateOutputSerializer):
        per_gpu_rps = serializers.FloatField()
        gpus = serializers.IntegerField()
        utilisation = serializers.FloatField()
        simulated = EstimateBatchSimulationSerializer(allow_null=True)

    class CheckpointOutputSerializer(EstimateOutputSerializer):
        bandwidth_gb_per_s = serializers.FloatField()
        lower_bound_s = serializers.FloatField()
        naive_s = serializers.FloatField()
        tree_levels = serializers.IntegerField()
        tree_s = serializers.FloatField()
        chunk_mb = serializers.FloatField()
        chunks = serializers.IntegerField()
        chunk_s = serializers.FloatField()
        pipeline_s = serializers.FloatField()
        swarm_s = serializers.FloatField()
        simulated = EstimateSwarmSimulationSerializer(allow_null=True)
        simulation_note = serializers.CharField(required=False)

    class StorageOutputSerializer(EstimateOutputSerializer):
        raw_bytes_per_day = serializers.FloatField()
        raw_bytes_per_day_human = serializers.CharField()
        bytes_per_day = serializers.FloatField()
        bytes_per_day_human = serializers.CharField()
        total_bytes = serializers.FloatField()
        total_bytes_human = serializers.CharField()
        tiers = EstimateStorageTierSerializer(many=True)

    @extend_schema(
        summary="Estimate the numbers a question turns on",
        description=(
            "Only `llm-inference-api` (batch dispatch), `checkpoint-distribution` and "
            "`data-platform` (storage) have estimators; any other slug answers 404. Each "
            "takes its own query parameters; a missing, non-numeric, non-finite, non-positive "
            "or out-of-range one answers 400 with `detail` and `field`. Simulations are "
            "seeded (`seed`) and deterministic."
        ),
        parameters=[
            OpenApiParameter(
                param.name,
                param.openapi_schema(),
                required=False,
                description=f"{slug}: {param.label} ({param.unit}), {param.describe_range()}"
                + ("" if param.required else "; optional"),
            )
            for slug, param in {
                param.name: (estimator.slug, param)
                for estimator in ESTIMATORS.values()
                for param in estimator.params
            }.values()
        ],
        responses={
            200: PolymorphicProxySerializer(
                component_name="QuestionEstimate",
                serializers=[
                    BatchOutputSerializer,
                    CheckpointOutputSerializer,
                    StorageOutputSerializer,
                ],
                resource_type_field_name=None,
            ),
            400: ErrorSerializer,
            404: ErrorSerializer,
            429: ErrorSerializer,
        },
    )
    def get(self, request: Request, slug: str) -> Response:
        estimator = estimator_for(slug)
        if estimator is None:
            return Response(
                {
                    "detail": f"No estimator for question {slug!r}; there are estimators for "
                    + ", ".join(ESTIMATORS)
                    + "."
                },
                status=404,
            )
        estimate_throttle(request=request)
        values = estimator.parse(request.query_params)
        outcome = estimator.run(values)
        inputs = {name: value for name, value in values.items() if value is not None}
        return Response(
            {"question": slug, "inputs": inputs, **outcome.data, "notes": list(outcome.notes)}
        )
