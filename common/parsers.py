"""Request parsers for the API. Kept apart from common.api: DRF reads DEFAULT_PARSER_CLASSES
while `rest_framework.views` is still importing, so this module must not import DRF views."""

from collections.abc import Mapping
from typing import IO, Any

from django.conf import settings
from rest_framework import exceptions
from rest_framework.parsers import JSONParser as BaseJSONParser

from common.exceptions import DomainError
from common.jsonlimits import (
    JSON_ENVELOPE_DEPTH,
    JSON_MAX_DEPTH,
    JsonRefused,
    json_loads_limited,
    json_surrogate_path,
)


class JSONParser(BaseJSONParser):
    """DRF's JSON parser with the project's depth limit and no lone surrogates
    (common.jsonlimits)."""

    def parse(
        self,
        stream: IO[Any] | None,
        media_type: str | None = None,
        parser_context: Mapping[str, Any] | None = None,
    ) -> Any:  # any JSON value (DRF's stubs say a dict; a body may be a list or a number)
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            text = stream.read().decode(encoding) if stream is not None else ""
        except UnicodeDecodeError:
            raise exceptions.ParseError("JSON parse error - the body is not valid UTF-8.") from None
        if not text:
            raise exceptions.ParseError("JSON parse error - the body is empty.")
        try:
            value = json_loads_limited(text, limit=JSON_MAX_DEPTH + JSON_ENVELOPE_DEPTH)
        except JsonRefused as error:
            raise exceptions.ParseError(f"JSON parse error - {error}") from None
        except ValueError as error:
            raise exceptions.ParseError(f"JSON parse error - {error}") from None
        # `"\ud800"` parses to a str no encoder can write: refuse it here, once, naming the
        # field, instead of letting every serializer echo it into a 400 that cannot render.
        path = json_surrogate_path(value)
        if path is not None:
            raise DomainError(
                f"{path}: must not contain lone surrogates (not valid UTF-8).", field=path
            )
        return value
