"""Export a version as a real API call: `GET /api/v1/versions/{id}/export/` (docs/design.md and
docs/api.md).

The body is the export itself as `text/plain; charset=utf-8`, so `curl -s ... | bash` or
`> call.py` works; `?as=json` or `Accept: application/json` returns it wrapped with its
metadata instead. A long version's text/plain export is streamed a range at a time, and its JSON
shows each long text cut to a head (`truncated`, `full_url`): see playground.exports.long_texts.
Errors are always JSON with `detail`, whatever representation was asked for.
"""

from collections.abc import Iterable
from typing import Any, cast, get_args
from urllib.parse import urlencode

from django.http import HttpResponseBase, StreamingHttpResponse
from django.utils.cache import patch_vary_headers
from django.utils.text import slugify
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from common.api import JsonErrorsMixin, NoUrlFormatNegotiation, TextFileRenderer

from ..exceptions import ContentInvalid
from ..exports.api_calls import Api, ExportFormat, VariablesMode
from ..exports.long_texts import export_is_long, export_snippet, export_stream
from ..models import PromptVersion
from ..selectors import version_get_for_user

APIS: tuple[str, ...] = get_args(Api)
FORMATS: tuple[str, ...] = get_args(ExportFormat)
VARIABLES_MODES: tuple[str, ...] = get_args(VariablesMode)
EXTENSIONS = {"curl": "sh", "python": "py", "typescript": "mts", "json": "json"}


class ExportTextRenderer(TextFileRenderer):
    """The export alone as the body."""

    media_type = "text/plain"
    format = "text"

    def text(self, data: Any) -> str:
        return str(data["text"])


class ExportNegotiation(NoUrlFormatNegotiation):
    """Text or JSON: `?as=text|json` when given, else the Accept header (text for `*/*`).

    `format` names the export's format on this endpoint, so DRF's `?format=` renderer override
    is off.
    """

    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        wanted = request.query_params.get("as")
        if wanted is None:
            chosen: tuple[BaseRenderer, str] = super().select_renderer(
                request, renderers, format_suffix
            )
            return chosen
        for renderer in renderers:
            if renderer.format == wanted:
                return renderer, renderer.media_type
        raise ContentInvalid("as: must be one of text, json.", field="as")


def _choice(
    request: Request, name: str, choices: tuple[str, ...], default: str | None = None
) -> str:
    """A query parameter that must be one of `choices`; a 400 naming it otherwise."""
    value = request.query_params.get(name, default)
    if value is None:
        raise ContentInvalid(f"{name}: required, one of {', '.join(choices)}.", field=name)
    if value not in choices:
        raise ContentInvalid(f"{name}: must be one of {', '.join(choices)}.", field=name)
    return value


def export_filename(*, version: PromptVersion, api: str, format: str) -> str:
    """`<prompt-title-slug>-v<number>-<api>.<ext>`: ASCII, safe in a Content-Disposition."""
    stem = slugify(version.prompt.title)[:60].strip("-") or "prompt"
    return f"{stem}-v{version.number}-{api}.{EXTENSIONS[format]}"


class VersionExportApi(JsonErrorsMixin):
    renderer_classes = [ExportTextRenderer, JSONRenderer]
    content_negotiation_class = ExportNegotiation

    class OutputSerializer(serializers.Serializer[dict[str, Any]]):
        version = serializers.IntegerField()
        api = serializers.ChoiceField(choices=APIS)
        format = serializers.ChoiceField(choices=FORMATS)
        variables = serializers.ChoiceField(choices=VARIABLES_MODES)
        filename = serializers.CharField(help_text="A suggested file name for the text.")
        text = serializers.CharField(
            help_text="The export, exactly as the text/plain body; for a long version (`truncated`)"
            " each long text cut to its head with a note."
        )
        truncated = serializers.BooleanField(
            help_text="The version's texts pass PLAYGROUND_EXPORT_INLINE_MAX_CHARS: `text` shows"
            " each long text's first PLAYGROUND_TEXT_HEAD_CHARS characters; `full_url` is the"
            " whole export."
        )
        total = serializers.IntegerField(help_text="Characters in the version's texts.")
        full_url = serializers.CharField(
            help_text="The whole export as text/plain, streamed (`full=1`)."
        )
        warnings = serializers.ListField(
            child=serializers.CharField(),
            help_text="Why the call may fail as exported (undeclared variables, a model the "
            "API does not serve). The export itself is never rewritten.",
        )

    @extend_schema(
        summary="Export a version as an API call",
        description=(
            "The version as a call to the Anthropic Messages API or OpenAI Chat Completions: "
            "`curl`, Python or TypeScript with the official SDK, or the raw JSON request body. "
            "Keys are read from the environment (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`); the "
            "SDKs' base-URL variables are honoured.\n\n"
            "By default the response body is the export itself as `text/plain; charset=utf-8` "
            "(with a `Content-Disposition` file name), ready for `| bash` or `> call.py`. "
            "`?as=json` or `Accept: application/json` returns "
            "`{version, api, format, variables, filename, text, warnings}` instead. "
            "Errors are JSON."
        ),
        parameters=[
            OpenApiParameter("api", str, required=True, enum=APIS, description="Which API."),
            OpenApiParameter(
                "format",
                str,
                required=True,
                enum=FORMATS,
                description="`json` is the request body alone.",
            ),
            OpenApiParameter(
                "variables",
                str,
                required=False,
                enum=VARIABLES_MODES,
                default="substitute",
                description="`substitute` puts the variables' defaults into the texts; `keep` "
                "leaves `{{name}}` placeholders in the body, and the Python and TypeScript "
                "exports fill them at run time from an editable `variables` block. curl always "
                "sends the substituted body.",
            ),
            OpenApiParameter(
                "as",
                str,
                required=False,
                enum=("text", "json"),
                description="Overrides the Accept header: `text` (default) or `json`.",
            ),
            OpenApiParameter(
                "full",
                str,
                required=False,
                enum=("0", "1"),
                description="`1`: the whole export as a text/plain download, streamed (text"
                " only; a 400 with `as=json`). The text/plain answer is always whole; the JSON"
                " answer of a long version is a head (`truncated`).",
            ),
        ],
        responses={
            (200, "text/plain"): OpenApiResponse(OpenApiTypes.STR, description="The export."),
            (200, "application/json"): OutputSerializer,
        },
    )
    def get(self, request: Request, version_id: int) -> HttpResponseBase:
        api = cast(Api, _choice(request, "api", APIS))
        format = cast(ExportFormat, _choice(request, "format", FORMATS))
        variables = cast(
            VariablesMode, _choice(request, "variables", VARIABLES_MODES, default="substitute")
        )
        full = _choice(request, "full", ("0", "1"), default="0") == "1"
        as_text = isinstance(request.accepted_renderer, ExportTextRenderer)
        if full and not as_text:
            raise ContentInvalid(
                "full: the whole export is text only (leave out `as=json`).", field="full"
            )
        version = version_get_for_user(user=request.user, version_id=version_id)
        filename = export_filename(version=version, api=api, format=format)
        disposition = f'{"attachment" if full else "inline"}; filename="{filename}"'
        if as_text and (full or export_is_long(version=version)):
            # Written a range at a time: a long text is never held whole (export_long).
            pieces = export_stream(version=version, api=api, format=format, variables=variables)
            streamed = StreamingHttpResponse(
                (piece.encode("utf-8") for piece in pieces),
                content_type="text/plain; charset=utf-8",
            )
            streamed["Content-Disposition"] = disposition
            patch_vary_headers(streamed, ["Accept"])
            return streamed
        snippet = export_snippet(version=version, api=api, format=format, variables=variables)
        query = urlencode({"api": api, "format": format, "variables": variables, "full": "1"})
        response = Response(
            self.OutputSerializer(
                {
                    "version": version.pk,
                    "api": api,
                    "format": format,
                    "variables": variables,
                    "filename": filename,
                    "text": snippet.text,
                    "warnings": snippet.warnings,
                    "truncated": snippet.truncated,
                    "total": snippet.total,
                    "full_url": f"{request.path}?{query}",
                }
            ).data
        )
        if as_text:
            response["Content-Disposition"] = disposition
        patch_vary_headers(response, ["Accept"])
        return response
