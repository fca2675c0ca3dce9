"""OpenAPI schema generation tuned to our API style."""

from typing import Any, Literal

from drf_spectacular.openapi import AutoSchema as BaseAutoSchema
from rest_framework import serializers
from rest_framework.fields import JSONField
from rest_framework.relations import RelatedField

from common.fields import AnyField, JsonListField


def _model_field_nullable(field: RelatedField[Any, Any, Any]) -> bool:
    parent = getattr(field, "parent", None)
    model = getattr(getattr(parent, "Meta", None), "model", None)
    if model is None or not isinstance(field.source, str) or "." in field.source:
        return False
    try:
        return bool(model._meta.get_field(field.source).null)
    except Exception:  # not a model field (a property, an annotation): no claim either way
        return False


class ApiErrorSerializer(serializers.Serializer[dict[str, Any]]):
    """Every error answer: a human-readable `detail`, sometimes more."""

    detail = serializers.CharField()
    field = serializers.CharField(required=False, help_text="The input field at fault.")
    # Declared fields leave the class namespace (DRF's metaclass), so `Serializer.errors` stays.
    errors = serializers.JSONField(  # type: ignore[assignment]
        required=False, help_text="Every validation error."
    )
    request_id = serializers.CharField(required=False, help_text="On 500 and 503: quote it.")


# Errors any operation may answer (JSON with `detail`); 429 and 503 carry Retry-After.
ERROR_RESPONSES = {
    "400": "Bad input: `detail` says what is wrong.",
    "401": "No credentials, or an invalid, revoked or expired API key.",
    "403": "Visible to you, but you may not do this.",
    "404": "Missing, or not visible to you (the two look the same).",
    "405": "Method not allowed.",
    "406": "Not acceptable.",
    "409": "Conflict: the state moved on (e.g. a label's compare-and-set lost).",
    "413": "Request body too large.",
    "415": "Unsupported media type.",
    "429": "Too many attempts; see Retry-After.",
    "500": "Server error; `request_id` identifies it in the log.",
    "503": "A backing service is unavailable; see Retry-After.",
}


class AutoSchema(BaseAutoSchema):
    """Names serializers nested in an API class after that class.

    Every API view nests its own `InputSerializer` / `OutputSerializer` (docs/style.md), so the
    default component names ("Input", "Output") would collide across views.
    """

    def get_serializer_name(
        self, serializer: Any, direction: Literal["request", "response"]
    ) -> str:
        qualname = type(serializer).__qualname__
        if "." in qualname:
            outer, inner = qualname.rsplit(".", 1)
            return outer.replace(".", "") + inner
        return super().get_serializer_name(serializer, direction)

    def _map_serializer_field(
        self,
        field: AnyField,
        direction: Literal["request", "response"],
        bypass_extensions: bool = False,
    ) -> dict[str, Any]:
        """A read-only relation over a nullable model field (a prompt's `question`) can be null:
        say so, whatever the serializer declared."""
        if isinstance(field, JsonListField):
            described = {"description": str(field.help_text)} if field.help_text else {}
            return {**described, **field.array_schema}
        schema: dict[str, Any] = super()._map_serializer_field(field, direction, bypass_extensions)
        if isinstance(field, RelatedField) and field.read_only and _model_field_nullable(field):
            schema = {**schema, "nullable": True}
        # A JSON input that may not be null is a JSON object here (a version's `content`); the
        # default mapping ("any JSON value") would promise that null is accepted.
        if isinstance(field, JSONField) and direction == "request" and not field.allow_null:
            schema = {**schema, "type": "object", "additionalProperties": {}}
        return schema

    def map_parsers(self) -> list[str]:
        """The API speaks JSON (docs/api.md): document JSON request bodies only. Form bodies
        stay accepted for convenience (`curl -d` on the token endpoint) but cannot say `null`,
        so they are not part of the contract."""
        media_types = super().map_parsers()
        json_only = [m for m in media_types if m == "application/json"]
        return json_only or media_types

    def _get_response_bodies(
        self, direction: Literal["request", "response"] = "response"
    ) -> dict[str, Any]:
        """The operation's own responses, plus the JSON errors every endpoint may answer."""
        responses = super()._get_response_bodies(direction)
        error = self.resolve_serializer(ApiErrorSerializer, direction).ref
        self._sse_events_document(responses, direction)
        for code, description in ERROR_RESPONSES.items():
            responses.setdefault(
                code,
                {"content": {"application/json": {"schema": error}}, "description": description},
            )
        return responses

    def _sse_events_document(
        self, responses: dict[str, Any], direction: Literal["request", "response"]
    ) -> None:
        """A view that streams server-sent events names the serializer of each event's `data`
        (`sse_events = {"token": TokenSerializer, ...}`): its `text/event-stream` answer lists
        them as `x-sse-events` (event name → schema), so a client can type each event."""
        events: dict[str, Any] | None = getattr(self.view, "sse_events", None)
        stream = responses.get("200", {}).get("content", {}).get("text/event-stream")
        if not events or stream is None:
            return
        stream["x-sse-events"] = {
            name: self.resolve_serializer(serializer, direction).ref
            for name, serializer in events.items()
        }
