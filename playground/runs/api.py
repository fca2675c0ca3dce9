"""Runs: create, list, read, stream (SSE), cancel, continue (docs/api.md)."""

from __future__ import annotations

from typing import Any

from django.core.handlers.asgi import ASGIRequest
from django.db.models import QuerySet
from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
)
from rest_framework import serializers, status
from rest_framework.generics import ListAPIView
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from common.api import JsonErrorsMixin
from common.auth import request_actor
from common.fields import StrictSerializer
from common.schema import ApiErrorSerializer

from ..api.prompts import PromptVersionListCreateApi, _saved
from ..models import IDEMPOTENCY_KEY_MAX_CHARS, MODEL_MAX_CHARS, Run
from ..selectors import version_access_get_for_user
from ..text.content import PROVIDERS
from .limits import run_start
from .selectors import (
    run_get_for_user,
    run_list_for_version,
    run_request,
    run_timings,
    run_variables_visible,
)
from .services import MAX_CONTINUE_CHARS, run_cancel, run_continue
from .stream import (
    OFFSET_MAX_DIGITS,
    run_events,
    run_events_async,
    run_stream_open,
    stream_offset_parse,
)

# A resume point: a character offset (the server also refuses one past the output's end).
OFFSET_SCHEMA = {"type": "integer", "minimum": 0, "maximum": 10**OFFSET_MAX_DIGITS - 1}


class UsageSerializer(serializers.Serializer[dict[str, Any]]):
    input_tokens = serializers.IntegerField(allow_null=True)
    output_tokens = serializers.IntegerField(allow_null=True)


# A timing is null until the run has reached the moment it measures to (and stays null for a
# run that never did, e.g. one cancelled while queued).
_MILLISECONDS = serializers.IntegerField(allow_null=True, min_value=0)


class RunSerializer(serializers.ModelSerializer[Run]):
    version = serializers.IntegerField(source="version_id")
    prompt = serializers.IntegerField(source="version.prompt_id")
    created_by = serializers.CharField(source="created_by.username")
    usage = serializers.SerializerMethodField()
    queue_ms = serializers.SerializerMethodField(help_text="From the POST to a worker taking it.")
    time_to_first_token_ms = serializers.SerializerMethodField(
        help_text="From the worker sending the call to the first output text."
    )
    total_ms = serializers.SerializerMethodField(help_text="From sending the call to the end.")
    stream_url = serializers.SerializerMethodField()
    request_url = serializers.SerializerMethodField(
        help_text="The call this run sends, rebuilt from its version (runs never echo the prompt)."
    )
    variables = serializers.SerializerMethodField(
        help_text="The values the texts were filled with; null for a viewer reading another"
        " account's run."
    )

    class Meta:
        model = Run
        fields = (
            "id",
            "version",
            "prompt",
            "status",
            "provider",
            "model",
            "variables",
            "output",
            "tool_calls",
            "stop_reason",
            "usage",
            "error",
            "created_by",
            "created_at",
            "started_at",
            "finished_at",
            "queue_ms",
            "time_to_first_token_ms",
            "total_ms",
            "idempotency_key",
            "stream_url",
            "request_url",
        )

    @extend_schema_field(serializers.DictField(child=serializers.CharField(), allow_null=True))
    def get_variables(self, run: Run) -> dict[str, str] | None:
        """Shown per `run_variables_visible` for the reader named in the context (`user_id`,
        `role`); with no reader in the context, hidden."""
        if "role" not in self.context:
            return None
        visible = run_variables_visible(
            run=run, user_id=self.context.get("user_id"), role=self.context["role"]
        )
        return dict(run.variables) if visible else None

    @extend_schema_field(UsageSerializer)
    def get_usage(self, run: Run) -> dict[str, int | None]:
        return {"input_tokens": run.input_tokens, "output_tokens": run.output_tokens}

    @extend_schema_field(_MILLISECONDS)
    def get_queue_ms(self, run: Run) -> int | None:
        return run_timings(run=run).queue_ms

    @extend_schema_field(_MILLISECONDS)
    def get_time_to_first_token_ms(self, run: Run) -> int | None:
        return run_timings(run=run).time_to_first_token_ms

    @extend_schema_field(_MILLISECONDS)
    def get_total_ms(self, run: Run) -> int | None:
        return run_timings(run=run).total_ms

    @extend_schema_field(OpenApiTypes.STR)
    def get_stream_url(self, run: Run) -> str:
        return f"/api/v1/runs/{run.pk}/stream/"

    @extend_schema_field(OpenApiTypes.STR)
    def get_request_url(self, run: Run) -> str:
        return f"/api/v1/runs/{run.pk}/request/"


def run_answer(run: Run, *, user_id: Any, role: str) -> dict[str, Any]:
    """One run as the API answers it to the reader `user_id` with `role` on its prompt."""
    return dict(RunSerializer(run, context={"user_id": user_id, "role": role}).data)


class VersionRunListCreateApi(ListAPIView[Run]):
    serializer_class = RunSerializer

    class InputSerializer(StrictSerializer):
        variables = serializers.JSONField(
            required=False,
            help_text="An object of name → text for the version's declared variables; the rest"
            " keep their defaults.",
        )
        idempotency_key = serializers.CharField(
            required=False,
            allow_blank=True,
            max_length=IDEMPOTENCY_KEY_MAX_CHARS,
            help_text="A retried POST with the same key returns the same run (per version and"
            " caller).",
        )
        provider = serializers.ChoiceField(
            choices=PROVIDERS,
            required=False,
            help_text="Run on another provider than the version's (compare).",
        )
        model = serializers.CharField(
            required=False,
            allow_blank=True,
            max_length=MODEL_MAX_CHARS,
            help_text="Run on another model than the version's (compare).",
        )

    def get_queryset(self) -> QuerySet[Run]:
        access = version_access_get_for_user(
            user=self.request.user, version_id=self.kwargs["version_id"]
        )
        self._role = access.access.role
        return run_list_for_version(version=access.version)

    def get_serializer_context(self) -> dict[str, Any]:
        return {
            **super().get_serializer_context(),
            "user_id": self.request.user.pk,
            "role": getattr(self, "_role", ""),
        }

    @extend_schema(
        summary="Run a version",
        description="Queues a run (201); it executes in a worker. Watch it with the `stream_url`"
        " (server-sent events) or poll `GET /api/v1/runs/{id}/`. The request sent is the"
        " version's export, with variables filled. Owners, editors and viewers may run.",
        request=InputSerializer,
        responses={201: RunSerializer, 200: RunSerializer},
    )
    def post(self, request: Request, version_id: int) -> Response:
        access = version_access_get_for_user(user=request.user, version_id=version_id)
        version = access.version
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        result = run_start(
            actor=request_actor(request),
            version=version,
            variables=data.validated_data.get("variables"),
            idempotency_key=data.validated_data.get("idempotency_key"),
            provider=data.validated_data.get("provider"),
            model=data.validated_data.get("model"),
        )
        response = Response(
            run_answer(result.run, user_id=request.user.pk, role=access.access.role),
            status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK,
        )
        if not result.created:
            response["Idempotent-Replayed"] = "true"
        return response


class RunDetailApi(APIView):
    @extend_schema(responses=RunSerializer)
    def get(self, request: Request, run_id: int) -> Response:
        access = run_get_for_user(user=request.user, run_id=run_id)
        return Response(run_answer(access.run, user_id=request.user.pk, role=access.role))


class RunRequestApi(APIView):
    class OutputSerializer(serializers.Serializer[dict[str, Any]]):
        method = serializers.CharField()
        url = serializers.CharField(
            help_text="Where the call goes: the provider's URL (the deployment's configured base"
            " URL only for staff accounts)."
        )
        headers = serializers.DictField(
            child=serializers.CharField(), help_text="Names of key variables only, never keys."
        )
        body = serializers.DictField(help_text="The request body, as the provider receives it.")
        variables_filled = serializers.BooleanField(
            help_text="False when the reader may not see the run's variables (a viewer reading"
            " another account's run): the body keeps the `{{name}}` placeholders."
        )

    @extend_schema(
        summary="The call a run sends",
        description="Rebuilt on demand from the run's version (immutable), provider, model and"
        " variables, with the same builder as the export; run answers never include it. Same"
        " access as the run.",
        responses=OutputSerializer,
    )
    def get(self, request: Request, run_id: int) -> Response:
        access = run_get_for_user(user=request.user, run_id=run_id)
        built = run_request(
            run=access.run,
            variables_visible=access.variables_visible,
            base_url_visible=bool(getattr(request.user, "is_staff", False)),
        )
        return Response({**built, "variables_filled": access.variables_visible})


class EventStreamRenderer(BaseRenderer):
    media_type = "text/event-stream"
    format = "sse"
    charset = "utf-8"

    def render(
        self, data: Any, accepted_media_type: Any = None, renderer_context: Any = None
    ) -> bytes:
        return b""  # the stream writes itself; errors are rendered as JSON (finalize_response)


class RunStreamTokenSerializer(serializers.Serializer[dict[str, Any]]):
    text = serializers.CharField(allow_blank=True, help_text="The new piece of output.")
    offset = serializers.IntegerField(
        min_value=0, help_text="The character offset after it (also the event id)."
    )


class RunStreamApi(JsonErrorsMixin, APIView):
    renderer_classes = [EventStreamRenderer, JSONRenderer]
    # Each event's `data` (JSON), documented as `x-sse-events` (common/schema.py).
    sse_events = {
        "token": RunStreamTokenSerializer,
        "done": RunSerializer,
        "error": ApiErrorSerializer,
    }

    @extend_schema(
        summary="Stream a run (server-sent events)",
        description="`event: token` with `{text, offset}` for each new piece of output (the"
        " event id is the character offset after it), then `event: done` with the run. Resume"
        " with `Last-Event-ID` or `?offset=` (a whole number of characters up to the output's"
        " current length; anything else is a 400 naming it). A finished run sends its whole"
        " output, then `done`. The stream re-checks access every"
        " `RUN_STREAM_RECHECK_SECONDS` and ends with `event: error` once it is gone. At most"
        " `RUN_STREAMS_PER_USER` open streams per account: past it 429 with `Retry-After`.",
        parameters=[
            OpenApiParameter(
                "offset",
                OFFSET_SCHEMA,
                required=False,
                description="Start at this character.",
            ),
            OpenApiParameter(
                "Last-Event-ID",
                OFFSET_SCHEMA,
                location=OpenApiParameter.HEADER,
                required=False,
                description="Resume after this event (wins over `offset`).",
            ),
        ],
        responses={(200, "text/event-stream"): OpenApiResponse(OpenApiTypes.STR)},
    )
    def get(self, request: Request, run_id: int) -> StreamingHttpResponse:
        access = run_get_for_user(user=request.user, run_id=run_id)
        length = len(access.run.output)
        offsets = [
            stream_offset_parse(name=name, raw=raw, length=length)
            for name, raw in (
                ("Last-Event-ID", request.headers.get("Last-Event-ID")),
                ("offset", request.query_params.get("offset")),
            )
            if raw is not None
        ]
        user = request.user
        pk = access.run.pk

        def check() -> None:
            run_get_for_user(user=user, run_id=pk)

        def final() -> dict[str, Any]:
            run = Run.objects.select_related("version", "created_by").get(pk=pk)
            return run_answer(run, user_id=request.user.pk, role=access.role)

        stream = run_stream_open(
            user_id=request_actor(request).pk,
            run_id=pk,
            offset=offsets[0] if offsets else 0,
            check=check,
            final=final,
        )
        # Under the ASGI server the body is awaited (no thread held while it waits); a WSGI
        # server can only iterate a plain generator.
        asgi = isinstance(request._request, ASGIRequest)
        response = StreamingHttpResponse(
            run_events_async(stream) if asgi else run_events(stream),
            content_type="text/event-stream; charset=utf-8",
        )
        response["Cache-Control"] = "no-cache, no-store"
        response["X-Accel-Buffering"] = "no"  # nginx: pass events through as they come
        return response


class RunCancelApi(APIView):
    @extend_schema(request=None, responses=RunSerializer, summary="Cancel a queued or running run")
    def post(self, request: Request, run_id: int) -> Response:
        access = run_get_for_user(user=request.user, run_id=run_id)
        run = run_cancel(actor=request_actor(request), run=access.run)
        return Response(run_answer(run, user_id=request.user.pk, role=access.role))


class RunContinueApi(APIView):
    class InputSerializer(StrictSerializer):
        message = serializers.CharField(
            max_length=MAX_CONTINUE_CHARS,
            trim_whitespace=False,
            help_text="The next user turn.",
        )

    @extend_schema(
        summary="Continue the conversation as a new version",
        description="201: a child of the run's version with the run's output appended as an"
        " `assistant` turn and `message` as the next `user` turn (editors and the owner).",
        request=InputSerializer,
        responses={
            201: PromptVersionListCreateApi.CreatedSerializer,
            200: OpenApiResponse(
                PromptVersionListCreateApi.CreatedSerializer,
                description="That child exists already (`created: false`): nothing new saved.",
            ),
        },
    )
    def post(self, request: Request, run_id: int) -> Response:
        access = run_get_for_user(user=request.user, run_id=run_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        result = run_continue(
            actor=request_actor(request),
            run=access.run,
            message=data.validated_data["message"],
            role=access.role,
        )
        return _saved(result)
