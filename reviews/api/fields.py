"""Serializer fields shared by the review desk's API."""

import re
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

_SLUG = re.compile(r"[a-z0-9-]*")


def choice_field(choices: list[str], **kwargs: Any) -> serializers.ChoiceField:
    """A ChoiceField documented as a string with a pattern rather than an OpenAPI enum.

    `status` names four different choice sets in this API (review, checklist, annotation,
    anchor) and `kind` is also the question bank's; drf-spectacular cannot name such enums
    without project-wide overrides and warns. A pattern validates the same values.
    """
    if not all(_SLUG.fullmatch(choice) for choice in choices):
        raise ValueError(f"choices must be lowercase slugs: {choices}")
    pattern = "^(" + "|".join(choices) + ")$"
    listed = ", ".join(f"`{choice}`" if choice else "`` (empty)" for choice in choices)

    @extend_schema_field({"type": "string", "pattern": pattern, "description": f"One of {listed}."})
    class PatternChoiceField(serializers.ChoiceField):
        pass

    return PatternChoiceField(choices=choices, **kwargs)
