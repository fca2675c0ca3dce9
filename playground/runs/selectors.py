"""Reads of runs, scoped to the user through the prompt's access check (viewer or more)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import QuerySet
from django.db.models.functions import Substr

from common.selectors import object_id_parse

from ..exceptions import NotFound
from ..exports.api_calls import export_request, export_sdk_arguments
from ..models import PromptVersion, Role, Run
from ..selectors import User, prompt_access_get_for_user, version_content
from .providers import provider_get


def run_variables_visible(*, run: Run, user_id: object, role: str) -> bool:
    """Whether a reader sees the values a run was filled with: owners and editors see every
    run's, a viewer only their own runs' (what another account typed is theirs)."""
    return role in (Role.OWNER, Role.EDITOR) or run.created_by_id == user_id


@dataclass(frozen=True)
class RunAccess:
    """A run the user may see, with their role on its prompt, and whether they see its
    variables (`run_variables_visible`)."""

    run: Run
    role: str
    variables_visible: bool = False


def run_get_for_user(*, user: User, run_id: object) -> RunAccess:
    """The run if its prompt is visible to `user` (owner, editor or viewer); else NotFound."""
    try:
        run = Run.objects.select_related("version", "version__prompt", "created_by").get(
            pk=object_id_parse(run_id)
        )
    except Run.DoesNotExist:
        raise NotFound from None
    access = prompt_access_get_for_user(
        user=user, prompt_id=run.version.prompt_id, min_role=Role.VIEWER
    )
    return RunAccess(
        run=run,
        role=access.role,
        variables_visible=run_variables_visible(run=run, user_id=user.pk, role=access.role),
    )


def run_request(
    *, run: Run, variables_visible: bool = True, base_url_visible: bool = True
) -> dict[str, Any]:
    """The call a run sends, `{method, url, headers, body}`, rebuilt on demand: a run keeps a
    reference to its version's stored texts (the version, provider, model and variables), never
    a copy, and this is the one builder of its request — the worker sends it, and
    `GET /api/v1/runs/{id}/request/` shows it (the export module's `export_request`, as for an
    export). The version is immutable, so the rebuilt call is the one sent.

    `variables_visible=False` keeps the `{{name}}` placeholders instead of the run's values;
    `base_url_visible=False` names the provider's public URL instead of the operator's
    configured base URL (`url` is where the call goes; neither is the reader's to see always).
    """
    content = version_content(version=run.version)
    adapter = provider_get(run.provider)
    api = adapter.api
    request = export_request(
        content={
            **content,
            "provider": run.provider,
            "model": run.model,
            "variables": run.variables if variables_visible else content["variables"],
        },
        api=api,
        variables="substitute" if variables_visible else "keep",
        stream=True,
    )
    if run.provider in ("echo", "fixture"):  # offline: nothing is sent anywhere
        request["url"] = adapter.base_url()
    elif base_url_visible:
        request["url"] = adapter.base_url() + export_sdk_arguments(request=request, api=api).path
    return request


def run_list_for_version(*, version: PromptVersion) -> QuerySet[Run]:
    """Every run of an already-authorised version, newest first, with its author."""
    return (
        Run.objects.filter(version=version)
        .select_related("created_by", "version")
        .order_by("-created_at", "-id")
    )


@dataclass(frozen=True)
class StreamChunk:
    """What a stream reader sees on one poll: the status and the output after `offset`."""

    status: str
    text: str
    missing: bool = False


def run_stream_chunk(*, run_id: int, offset: int) -> StreamChunk:
    """The run's status and its output from character `offset` on, in one small query."""
    row = (
        Run.objects.filter(pk=run_id)
        .annotate(tail=Substr("output", offset + 1))
        .values_list("status", "tail")
        .first()
    )
    if row is None:
        return StreamChunk(status="", text="", missing=True)
    return StreamChunk(status=row[0], text=row[1] or "")


@dataclass(frozen=True)
class RunTimings:
    """Milliseconds: POST → a worker took it, sending → first text, sending → the end."""

    queue_ms: int | None
    time_to_first_token_ms: int | None
    total_ms: int | None


def _ms(start: datetime | None, end: datetime | None) -> int | None:
    if start is None or end is None:
        return None
    return max(0, round((end - start).total_seconds() * 1000))


def run_timings(*, run: Run) -> RunTimings:
    return RunTimings(
        queue_ms=_ms(run.created_at, run.started_at),
        time_to_first_token_ms=_ms(run.started_at, run.first_token_at),
        total_ms=_ms(run.started_at, run.finished_at),
    )
