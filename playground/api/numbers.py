"""A version by its number within its prompt: `GET /api/v1/prompts/{id}/versions/{number}/`.

Applications pin a version the way people name it ("v3 of the reviewer prompt"). This resolves
the number for the caller (`version_id_by_number_for_user`: access checked, 404 for "not yours"
like a missing number) and then answers with the view that serves `GET /api/v1/versions/{id}/`
for that id — looked up by its URL name when the request comes — so the body, the ETag, the
`If-None-Match` → 304 rule, `?full=1` and the caching headers are that endpoint's, never a
copy of them. The Python client's `get_prompt(prompt_id, version=N)` calls it (docs/api.md).
"""

from django.http.response import HttpResponseBase
from django.urls import path, resolve, reverse
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.views import APIView

from ..selectors import version_id_by_number_for_user
from .prompts import VersionSummarySerializer


class VersionByNumberApi(APIView):
    class OutputSerializer(VersionSummarySerializer):
        prompt = serializers.IntegerField(source="prompt_id")
        content = serializers.DictField(
            help_text="The version's content, as `GET /api/v1/versions/{id}/` answers it."
        )

        class Meta(VersionSummarySerializer.Meta):
            fields = (*VersionSummarySerializer.Meta.fields, "prompt", "content")

    @extend_schema(
        operation_id="prompts_versions_by_number_retrieve",
        summary="A version by its number within the prompt",
        parameters=[
            OpenApiParameter(
                "full",
                {"type": "integer", "enum": [0, 1]},
                description="As for `GET /api/v1/versions/{id}/`.",
            ),
            OpenApiParameter(
                "If-None-Match",
                str,
                OpenApiParameter.HEADER,
                description="The ETag of the answer you hold: 304 with no body while it is "
                "still this answer.",
            ),
        ],
        responses={
            200: OutputSerializer,
            304: OpenApiResponse(description="Not modified: the ETag sent is still this answer."),
        },
        description="Version `number` (1, 2, 3… in save order) of the prompt, answered exactly "
        "as `GET /api/v1/versions/{id}/` answers it: the same body, ETag and `If-None-Match` "
        "→ 304. An unknown number, like a prompt you cannot see, is a 404.",
    )
    def get(self, request: Request, prompt_id: int, number: int) -> HttpResponseBase:
        version_id = version_id_by_number_for_user(
            user=request.user, prompt_id=prompt_id, number=number
        )
        detail = resolve(reverse("api-version-detail", kwargs={"version_id": version_id}))
        # The version endpoint checks access itself again: one rule, applied by its owner.
        response: HttpResponseBase = detail.func(request._request, **detail.kwargs)
        return response


urlpatterns = [
    path(
        "prompts/<int:prompt_id>/versions/<int:number>/",
        VersionByNumberApi.as_view(),
        name="api-prompt-version-by-number",
    ),
]
