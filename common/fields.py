"""Strict input for the API: a field the schema calls a string (a boolean) takes only that.

DRF's CharField also takes numbers and turns them into text (`"title": 0` becomes "0"), and its
BooleanField takes `0`, `1`, `"yes"`, `"off"` and more, so the OpenAPI schema (`type: string`,
`type: boolean`) would not say what the API accepts. Every serializer that reads a request body
is a `StrictSerializer`: its CharFields (and their subclasses: slugs, e-mails, ...) refuse
anything but a string with 400 "Not a valid string.", its BooleanFields anything but JSON
`true` / `false` with 400 "Must be true or false." (API bodies are JSON; docs/api.md), and so do
the fields inside its list and dict fields. Nested serializers are StrictSerializers too
(tests/common/test_fields.py checks every one a view reads a body with). Fields that really take
a number or a text declare it (`StringOrIntegerField`).
"""

import functools
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

# A field of any kind (DRF's fields are generic in their value, data, representation and
# instance types; these helpers look at the field's class only).
AnyField = serializers.Field[Any, Any, Any, Any]


class _StrictText:
    """Mixed into a CharField (or a subclass of it): only a string is taken, and its length is
    the string's as sent. DRF checks `max_length` after trimming whitespace, so a value the
    schema's `maxLength` refuses was taken when it began or ended with spaces."""

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, str):
            self.fail("invalid")  # type: ignore[attr-defined]
        max_length = getattr(self, "max_length", None)
        if max_length is not None and len(data) > max_length:
            self.fail("max_length", max_length=max_length)  # type: ignore[attr-defined]
        return super().to_internal_value(data)  # type: ignore[misc]


class _StrictBoolean:
    """Mixed into a BooleanField: only JSON true or false is taken."""

    def to_internal_value(self, data: Any) -> bool:
        if data is True or data is False:
            return data
        raise serializers.ValidationError("Must be true or false.", code="invalid")


@functools.cache
def _strict_class(cls: type) -> type:
    """`cls` with the strict rule of its kind mixed in (the same name, for the schema)."""
    rule = _StrictBoolean if issubclass(cls, serializers.BooleanField) else _StrictText
    return type(cls.__name__, (rule, cls), {"__module__": cls.__module__})


def is_strict(field: AnyField) -> bool:
    return isinstance(field, (_StrictText, _StrictBoolean))


def _make_strict(field: AnyField) -> None:
    """Make `field` (and the fields inside a list or dict field) strict, in place: the field
    is this serializer instance's own copy (DRF deep-copies declared fields per instance)."""
    if isinstance(field, (serializers.ListField, serializers.DictField)):
        _make_strict(field.child)
    if is_strict(field):
        return
    if isinstance(field, (serializers.CharField, serializers.BooleanField)):
        kind: type = type(field)
        field.__class__ = _strict_class(kind)


# The base of every serializer that reads a request body (the module's docstring): a JSON
# object, read into a dict. A comment, not a docstring: drf-spectacular would print an
# inherited docstring in every schema component.
class StrictSerializer(serializers.Serializer[dict[str, Any]]):
    def get_fields(self) -> dict[str, AnyField]:
        fields = super().get_fields()
        for field in fields.values():
            _make_strict(field)
        return fields


@extend_schema_field({"oneOf": [{"type": "string"}, {"type": "integer"}]})
class StringOrIntegerField(serializers.Field[str | int, Any, Any, Any]):
    """A text or a whole number (e.g. a pinned constraint by its text or its index)."""

    default_error_messages = {"invalid": "Must be a string or a whole number."}

    def __init__(self, *, max_length: int | None = None, **kwargs: Any) -> None:
        self.max_length = max_length
        super().__init__(**kwargs)

    def to_internal_value(self, data: object) -> str | int:
        if isinstance(data, bool) or not isinstance(data, (str, int)):
            self.fail("invalid")
        if isinstance(data, str):
            data = data.strip()
            if self.max_length is not None and len(data) > self.max_length:
                raise serializers.ValidationError(f"At most {self.max_length} characters.")
        return data

    def to_representation(self, value: Any) -> Any:
        return value


class JsonListField(serializers.JSONField):
    """A JSON list in a request body that a service parses item by item (its 400 names the
    item at fault, e.g. `rows.3.variables`). The schema states the array and its `items`
    (common/schema.py), so a generated client sends a list, not an object."""

    def __init__(
        self,
        *,
        items: dict[str, Any],
        min_items: int | None = None,
        max_items: int | None = None,
        unique_items: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        schema: dict[str, Any] = {"type": "array", "items": items}
        if min_items is not None:
            schema["minItems"] = min_items
        if max_items is not None:
            schema["maxItems"] = max_items
        if unique_items:
            schema["uniqueItems"] = True
        self.array_schema = schema


__all__ = ["JsonListField", "StrictSerializer", "StringOrIntegerField", "is_strict"]
