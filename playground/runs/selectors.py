"""Reads of runs, scoped to the user through the prompt's access check (viewer or more)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet
from django.db.models.functions import Substr

from common.selectors import object_id_parse

from ..exceptions import NotFound
from ..models import PromptVersion, Role, Run
from ..selectors import User, prompt_access_get_for_user


@dataclass(frozen=True)
class RunAccess:
    """A run the user may see, with their role on its prompt."""

    run: Run
    role: str


def run_get_for_user(*, user: User, run_id: Any) -> RunAccess:
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
    return RunAccess(run=run, role=access.role)


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


def _ms(start: Any, end: Any) -> int | None:
    if start is None or end is None:
        return None
    return max(0, round((end - start).total_seconds() * 1000))


def run_timings(*, run: Run) -> RunTimings:
    return RunTimings(
        queue_ms=_ms(run.created_at, run.started_at),
        time_to_first_token_ms=_ms(run.started_at, run.first_token_at),
        total_ms=_ms(run.started_at, run.finished_at),
    )
