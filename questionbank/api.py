from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.generics import ListAPIView
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from common.exceptions import DomainError

from .models import DepthArea, FollowUp, Question, WorkedNumber
from .selectors import question_get, question_list


class DepthAreaSerializer(serializers.ModelSerializer):
    class Meta:
        model = DepthArea
        fields: tuple[str, ...] = ("title", "detail")


class FollowUpSerializer(serializers.ModelSerializer):
    class Meta:
        model = FollowUp
        fields: tuple[str, ...] = ("probe", "look_for")


class WorkedNumberSerializer(serializers.ModelSerializer):
    class Meta:
        model = WorkedNumber
        fields: tuple[str, ...] = ("label", "inputs", "calculation", "result", "takeaway")


class QuestionListApi(ListAPIView):
    class OutputSerializer(serializers.ModelSerializer):
        class Meta:
            model = Question
            fields: tuple[str, ...] = ("slug", "title", "kind", "duration_minutes", "summary")
            ref_name = "QuestionSummary"

    serializer_class = OutputSerializer

    def get_queryset(self):
        kind = self.request.query_params.get("kind") or None
        if kind is not None and kind not in Question.Kind.values:
            raise DomainError(
                f"kind: must be one of {', '.join(Question.Kind.values)}.", field="kind"
            )
        return question_list(kind=kind)

    @extend_schema(
        parameters=[OpenApiParameter("kind", enum=Question.Kind.values, required=False)],
    )
    def get(self, request: Request, *args, **kwargs) -> Response:
        return super().get(request, *args, **kwargs)


class QuestionDetailApi(APIView):
    class OutputSerializer(serializers.ModelSerializer):
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
