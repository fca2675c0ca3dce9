"""OpenAPI schema generation tuned to our API style."""

from typing import Any, Literal

from drf_spectacular.openapi import AutoSchema as BaseAutoSchema


class AutoSchema(BaseAutoSchema):
    """Names serializers nested in an API class after that class.

    Every API view nests its own `InputSerializer` / `OutputSerializer` (STYLE.md), so the
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
