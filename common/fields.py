"""Strict input for the API: a field the schema calls a string (a boolean) takes only that.

DRF's CharField also takes numbers and turns them into text (`"title": 0` becomes "0"), and its
BooleanField takes `0`, `1`, `"yes"`, `"off"` and more, so the OpenAPI schema (`type: string`,
`type: boolean`) would not say what the API accepts. `strict_text_install` makes every
CharField (and its subclasses: slugs, e-mails, ...) refuse anything but a string with 400
"Not a valid string."; fields that really take a number or a text declare it
(`StringOrIntegerField`). `strict_boolean_install` makes every BooleanField refuse anything but
JSON `true` / `false` with 400 "Must be true or false." (API bodies are JSON; docs/api.md).
"""

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

_installed = False


def strict_text_install() -> None:
    """Called once from CommonConfig.ready()."""
    global _installed
    if _installed:
        return
    original = serializers.CharField.to_internal_value

    def to_internal_value(self: serializers.CharField, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return original(self, data)

    serializers.CharField.to_internal_value = to_internal_value  # type: ignore[method-assign,assignment]
    _installed = True


_booleans_installed = False


def strict_boolean_install() -> None:
    """Called once from CommonConfig.ready()."""
    global _booleans_installed
    if _booleans_installed:
        return

    def to_internal_value(self: serializers.BooleanField, data: Any) -> bool:
        if data is True or data is False:
            return data
        raise serializers.ValidationError("Must be true or false.", code="invalid")

    serializers.BooleanField.to_internal_value = to_internal_value  # type: ignore[method-assign,assignment]
    _booleans_installed = True


@extend_schema_field({"oneOf": [{"type": "string"}, {"type": "integer"}]})
class StringOrIntegerField(serializers.Field):
    """A text or a whole number (e.g. a pinned constraint by its text or its index)."""

    default_error_messages = {"invalid": "Must be a string or a whole number."}

    def __init__(self, *, max_length: int | None = None, **kwargs: Any) -> None:
        self.max_length = max_length
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> str | int:
        if isinstance(data, bool) or not isinstance(data, (str, int)):
            self.fail("invalid")
        if isinstance(data, str):
            data = data.strip()
            if self.max_length is not None and len(data) > self.max_length:
                raise serializers.ValidationError(f"At most {self.max_length} characters.")
        return data

    def to_representation(self, value: Any) -> Any:
        return value


__all__ = ["StringOrIntegerField", "strict_boolean_install", "strict_text_install"]
