"""A version by its number within its prompt: `GET /api/v1/prompts/{id}/versions/{number}/`.

Applications pin a version the way people name it ("v3 of the reviewer prompt"); this resolves
the number, with access checked for the caller, and answers exactly what
`GET /api/v1/versions/{id}/` answers for that version — the same body, ETag and caching rules,
because it is that view once the id is known. The Python client's
`get_prompt(prompt_id, version=N)` calls it (docs/api.md).
"""

from django.http.response import HttpResponseBase
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request

from ..selectors import version_id_by_number_for_user
from .prompts import VersionDetailApi


class VersionByNumberApi(VersionDetailApi):
    @extend_schema(
        operation_id="prompts_versions_by_number_retrieve",
        summary="A version by its number within the prompt",
        responses={200: VersionDetailApi.OutputSerializer, 304: None},
        description="Version `number` (1, 2, 3… in save order) of the prompt, answered exactly "
        "as `GET /api/v1/versions/{id}/` answers it: the same body, ETag and `If-None-Match` "
        "→ 304. An unknown number, like a prompt you cannot see, is a 404.",
    )
    def get(  # type: ignore[override]  # the URL names the version by prompt and number
        self, request: Request, prompt_id: int, number: int
    ) -> HttpResponseBase:
        version_id = version_id_by_number_for_user(
            user=request.user, prompt_id=prompt_id, number=number
        )
        return super().get(request, version_id=version_id)
