"""Writes of runs. Status changes are conditional updates, so a repeated call is a no-op.

    queued ──claim──▶ running ──▶ done | failed
       │                 │
       └──▶ cancelled ◀──┘        (and queued/running ──reaper──▶ failed)

A run sends its provider call at most once: a redelivered task (acks_late, worker lost) whose
run is still `running` with a fresh heartbeat leaves it alone, and one with a stale heartbeat
fails it instead of paying for the call twice.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import F, Q, QuerySet, TextField, Value
from django.db.models.functions import Concat
from django.utils import timezone

from common.exceptions import Conflict, Forbidden

from ..exceptions import ContentInvalid
from ..models import (
    IDEMPOTENCY_KEY_MAX_CHARS,
    MODEL_MAX_CHARS,
    STOP_REASON_MAX_CHARS,
    PromptVersion,
    Role,
    Run,
)
from ..selectors import version_content
from ..services import SaveResult, prompt_version_create
from ..text.content import (
    PROVIDERS,
    VersionContent,
    model_for_provider,
    variables_unfilled_check,
)
from .dispatch import run_enqueue
from .notify import run_notify_output, run_notify_status
from .providers import Finished, ProviderError, TextDelta, ToolCall, provider_get
from .selectors import run_request

logger = logging.getLogger(__name__)

MAX_VARIABLE_CHARS = 1_000_000
MAX_CONTINUE_CHARS = 200_000

Status = Run.Status


# --- create ---------------------------------------------------------------------------------


def run_variables_resolve(*, content: VersionContent, given: object) -> dict[str, str]:
    """The values a run fills its texts with: the version's defaults, overridden by `given`.

    A name the version does not declare, or a placeholder with no value, is an error here,
    before anything is sent.
    """
    if given is None:
        given = {}
    if not isinstance(given, dict):
        raise ContentInvalid("variables: must be an object of name → text.", field="variables")
    declared: dict[str, str] = dict(content.get("variables") or {})
    for name, value in given.items():
        if name not in declared:
            known = ", ".join(sorted(declared)) or "none"
            raise ContentInvalid(
                f"variables.{name}: this version declares no such variable (declared: {known}).",
                field=f"variables.{name}",
            )
        if not isinstance(value, str):
            raise ContentInvalid(f"variables.{name}: must be a string.", field=f"variables.{name}")
        if len(value) > MAX_VARIABLE_CHARS or "\x00" in value:
            raise ContentInvalid(
                f"variables.{name}: at most {MAX_VARIABLE_CHARS} characters, no NUL.",
                field=f"variables.{name}",
            )
    # An empty value falls back to the version's default; empty or missing after that is a 400.
    values = {**declared, **{name: value for name, value in given.items() if value}}
    variables_unfilled_check(content=content, values=values)
    return dict(sorted(values.items()))


def _choose_model(content: VersionContent, provider: object, model: object) -> tuple[str, str]:
    chosen_provider = content["provider"] if provider in (None, "") else provider
    if chosen_provider not in PROVIDERS:
        raise ContentInvalid(f"provider: must be one of {', '.join(PROVIDERS)}.", field="provider")
    if model in (None, ""):
        model = model_for_provider(content=content, provider=chosen_provider)
    if not isinstance(model, str) or not model.strip() or len(model) > MODEL_MAX_CHARS:
        raise ContentInvalid(f"model: must be 1-{MODEL_MAX_CHARS} characters.", field="model")
    return chosen_provider, model.strip()


def _idempotency_key(value: object) -> str:
    if value in (None, ""):
        return ""
    if (
        not isinstance(value, str)
        or len(value) > IDEMPOTENCY_KEY_MAX_CHARS
        or not value.isprintable()
    ):
        raise ContentInvalid(
            f"idempotency_key: at most {IDEMPOTENCY_KEY_MAX_CHARS} printable characters.",
            field="idempotency_key",
        )
    return value


@dataclass(frozen=True)
class RunCreated:
    run: Run
    created: bool  # False: an earlier POST with the same idempotency key made it


def _replay(run: Run, provider: str, model: str, values: dict[str, str]) -> RunCreated:
    if (run.provider, run.model, run.variables) != (provider, model, values):
        raise Conflict(
            "idempotency_key: already used for a run of this version with other variables or"
            " another model.",
            field="idempotency_key",
        )
    return RunCreated(run=run, created=False)


def run_create(
    *,
    actor: User,
    version: PromptVersion,
    variables: object = None,
    idempotency_key: object = None,
    provider: object = None,
    model: object = None,
    enqueue: bool = True,
) -> RunCreated:
    """Queue a run of `version`. The run stores what it was asked (version, provider, model,
    variables), not its request: `run_request` rebuilds that with the export module's builder.

    With an `idempotency_key` (per version and user), a repeated call returns the first run.
    The caller must already hold at least viewer access (selectors check it). A person's
    request goes through `limits.run_start`, which adds the account's limits. With
    `enqueue=False` the run stays queued for a caller that executes it itself (an evaluation's
    cell task calls `run_execute` in its own worker).
    """
    key, chosen_provider, chosen_model, values = _run_asked(
        version, variables, idempotency_key, provider, model
    )
    if key:
        earlier = Run.objects.filter(
            version=version, created_by_id=actor.pk, idempotency_key=key
        ).first()
        if earlier is not None:
            return _replay(earlier, chosen_provider, chosen_model, values)
    provider_get(chosen_provider).check_configured()
    # No copy of the request: the run references its immutable version, and its call is rebuilt
    # from that, the model and `values` when sent or shown (selectors.run_request).
    try:
        with transaction.atomic():
            run = Run.objects.create(
                version=version,
                created_by_id=actor.pk,
                provider=chosen_provider,
                model=chosen_model,
                variables=values,
                idempotency_key=key,
                on_run_queue=enqueue,
            )
            if enqueue:
                transaction.on_commit(lambda: _enqueue(run.pk))
    except IntegrityError:
        # A concurrent POST with the same key won the insert: answer with its run.
        earlier = Run.objects.filter(
            version=version, created_by_id=actor.pk, idempotency_key=key
        ).first()
        if earlier is None:
            raise
        return _replay(earlier, chosen_provider, chosen_model, values)
    logger.info(
        "run.created",
        extra={"run_id": run.pk, "version_id": version.pk, "provider": chosen_provider},
    )
    return RunCreated(run=run, created=True)


def _run_asked(
    version: PromptVersion, variables: object, key: object, provider: object, model: object
) -> tuple[str, str, str, dict[str, str]]:
    """What a new run of `version` is asked, checked: its key, provider, model and values."""
    checked_key = _idempotency_key(key)
    content = version_content(version=version)
    chosen_provider, chosen_model = _choose_model(content, provider, model)
    values = run_variables_resolve(content=content, given=variables)
    return checked_key, chosen_provider, chosen_model, values


def run_create_claimed(
    *,
    actor_id: int,
    version: PromptVersion,
    variables: object,
    idempotency_key: str,
    provider: object = None,
    model: object = None,
) -> Run:
    """A run created already claimed by its caller (inserted `running`, never `queued`), who
    executes it with `run_execute_claimed`: one insert where `run_create` and `run_claim` take
    a look-up, a savepoint and an update. For a caller that creates and claims in a transaction
    of its own (an evaluation's cell, with the cell's claim: one commit). No earlier run with
    the key is looked up: the caller knows there is none, and if there is, the key's unique
    constraint raises IntegrityError and the caller's transaction is rolled back."""
    key, chosen_provider, chosen_model, values = _run_asked(
        version, variables, idempotency_key, provider, model
    )
    if not key:
        raise ValueError("run_create_claimed needs an idempotency key")
    provider_get(chosen_provider).check_configured()
    now = timezone.now()
    run = Run.objects.create(
        version=version,
        created_by_id=actor_id,
        provider=chosen_provider,
        model=chosen_model,
        variables=values,
        idempotency_key=key,
        on_run_queue=False,
        status=Status.RUNNING,
        started_at=now,
        heartbeat_at=now,
        deliveries=1,
    )
    logger.info(
        "run.created",
        extra={"run_id": run.pk, "version_id": version.pk, "provider": chosen_provider},
    )
    return run


def _enqueue(run_id: int) -> None:
    run_enqueue(run_id=run_id)


# --- execute --------------------------------------------------------------------------------


def _fail(run_id: int, reason: str, *, from_statuses: tuple[str, ...]) -> bool:
    now = timezone.now()
    changed = Run.objects.filter(pk=run_id, status__in=from_statuses).update(
        status=Status.FAILED, error=reason[:2000], finished_at=now, heartbeat_at=now
    )
    if changed:
        run_notify_status(run_id=run_id, status=Status.FAILED)
        logger.info("run.failed", extra={"run_id": run_id, "reason": reason[:200]})
    return bool(changed)


def _claim(run_id: int) -> bool:
    """queued → running; False when someone else has it or it is finished."""
    now = timezone.now()
    return bool(
        Run.objects.filter(pk=run_id, status=Status.QUEUED).update(
            status=Status.RUNNING,
            started_at=now,
            heartbeat_at=now,
            deliveries=F("deliveries") + 1,
        )
    )


def run_claim(*, run_id: int) -> bool:
    """Claim a queued run for the caller, who then executes it with `run_execute_claimed`
    (an evaluation cell whose run existed before its claim claims it in the transaction that
    claims the cell; a new one is created claimed, `run_create_claimed`). False when someone
    else has it or it is finished."""
    return _claim(run_id)


class _Writer:
    """Buffers streamed text and appends it to the row at most every RUN_FLUSH_INTERVAL_MS
    (the first text at once, for time to first token). Each write sends only the new piece
    (`output = output || piece` in SQL), so the bytes written grow with the reply, not with its
    square; readers hear of it on the run's notification channel. A write that matches no
    running row means the run was cancelled or reaped: the caller stops."""

    def __init__(self, run_id: int) -> None:
        self.run_id = run_id
        self.parts: list[str] = []
        self.pending: list[str] = []  # received, not yet in the row
        self.written = 0  # characters in the row
        self.flushed_at = 0.0
        self.first_token = True
        self.first_token_at: datetime | None = None  # as written
        self.interval = settings.RUN_FLUSH_INTERVAL_MS / 1000

    def add(self, text: str) -> bool:
        self.parts.append(text)
        self.pending.append(text)
        if self.first_token or time.monotonic() - self.flushed_at >= self.interval:
            return self.flush()
        return True

    def take_pending(self) -> str:
        """The text not yet written, now counted as written (for the final update)."""
        piece = "".join(self.pending)
        self.pending = []
        self.written += len(piece)
        return piece

    def flush(self) -> bool:
        now = timezone.now()
        piece = "".join(self.pending)
        fields: dict[str, Any] = {"heartbeat_at": now}
        if piece:
            fields["output"] = _appended(piece)
        if self.first_token and piece:
            fields["first_token_at"] = self.first_token_at = now
            self.first_token = False
        self.flushed_at = time.monotonic()
        if not Run.objects.filter(pk=self.run_id, status=Status.RUNNING).update(**fields):
            return False
        if piece:
            start = self.written
            self.take_pending()
            run_notify_output(run_id=self.run_id, offset=start, text=piece)
        return True


def _appended(piece: str) -> Concat:
    return Concat(F("output"), Value(piece), output_field=TextField())


def _heartbeat(run_id: int) -> bool:
    return bool(
        Run.objects.filter(pk=run_id, status=Status.RUNNING).update(heartbeat_at=timezone.now())
    )


def _stream_once(run: Run, writer: _Writer, tools: list[dict[str, Any]]) -> Finished | None:
    """One provider call; None when the run stopped being ours (cancelled) mid-stream."""
    adapter = provider_get(run.provider)
    events = adapter.stream(request=run_request(run=run), timeout=settings.RUN_PROVIDER_TIMEOUT)
    try:
        for event in events:
            if isinstance(event, TextDelta):
                if event.text and not writer.add(event.text):
                    return None
            elif isinstance(event, ToolCall):
                tools.append({"id": event.id, "name": event.name, "input": event.input})
            elif isinstance(event, Finished):
                return event
    finally:
        close = getattr(events, "close", None)
        if close is not None:
            close()  # closes the provider's HTTP stream too, when we stop early
    raise ProviderError("The provider's stream ended without a final event.")


def _call_with_retries(run: Run, writer: _Writer, tools: list[dict[str, Any]]) -> Finished | None:
    """429s before any output are retried after their `retry-after`, within
    RUN_RETRY_ATTEMPTS and RUN_RETRY_MAX_WAIT; everything else fails the run."""
    attempts = max(1, settings.RUN_RETRY_ATTEMPTS)
    for attempt in range(1, attempts + 1):
        try:
            return _stream_once(run, writer, tools)
        except ProviderError as error:
            wait = error.retry_after
            if wait is None or writer.parts or tools:
                raise
            if attempt == attempts:
                raise ProviderError(f"{error.reason} Gave up after {attempts} attempts.") from None
            if wait > settings.RUN_RETRY_MAX_WAIT:
                raise ProviderError(
                    f"{error.reason} It asked to retry after {wait:g} s, more than the"
                    f" {settings.RUN_RETRY_MAX_WAIT:g} s a run waits."
                ) from None
            logger.info("run.retry", extra={"run_id": run.pk, "attempt": attempt, "wait": wait})
            time.sleep(wait)
            if not _heartbeat(run.pk):
                return None
    return None  # not reached: the last attempt returns or raises


def run_execute(*, run_id: int) -> str:
    """Execute a queued run: claim it, stream the provider's reply into it, finish it.

    Idempotent: a run that is not queued is left as it is, except a `running` one whose
    worker went silent (a redelivery after the worker died), which fails. Returns the status.
    """
    if not _claim(run_id):
        run = Run.objects.filter(pk=run_id).only("status", "heartbeat_at").first()
        if run is None:
            return "missing"
        if run.status == Status.RUNNING and _is_stale(run.heartbeat_at):
            _fail(
                run_id,
                "The worker running this run stopped mid-run (killed or lost); the call was not"
                " sent again. Run it again.",
                from_statuses=(Status.RUNNING,),
            )
            return Status.FAILED
        return run.status
    return run_execute_claimed(run_id=run_id)


def run_execute_claimed(*, run_id: int) -> str:
    """Stream the provider's reply into a run this caller has just claimed (queued → running
    by `_claim` or `fair.run_claim_next`), and finish it. Returns the final status."""
    run = Run.objects.get(pk=run_id)
    if run.status != Status.RUNNING:
        return run.status  # cancelled between its claim and its call: the call is not sent
    return _stream_and_finish(run)


def run_execute_created(*, run: Run) -> Run:
    """`run_execute_claimed` for the run `run_create_claimed` has just returned, handed over as
    it is (its version with it): only its status is read again before the call (a run
    cancelled since is not sent), and a run that finishes `done` is returned as written,
    without reading it back (an evaluation grades it at once); any other is read back."""
    status = Run.objects.values_list("status", flat=True).get(pk=run.pk)
    if status == Status.RUNNING and _stream_and_finish(run) == Status.DONE:
        return run
    return Run.objects.get(pk=run.pk)


def _stream_and_finish(run: Run) -> str:
    """Stream the reply into `run` (running, this caller's) and finish it; returns the final
    status. A run that ends `done` is also updated in memory with what was written."""
    run_id = run.pk
    writer = _Writer(run_id)
    tools: list[dict[str, Any]] = []
    try:
        finished = _call_with_retries(run, writer, tools)
    except ProviderError as error:
        writer.flush()
        _fail(run_id, error.reason, from_statuses=(Status.RUNNING,))
        return Status.FAILED
    except Exception as error:
        # Never leave a run `running` because of a bug: record it as failed, then re-raise so
        # the task's own error reporting sees it too.
        logger.exception("run.crashed", extra={"run_id": run_id})
        _fail(
            run_id,
            f"Redline failed while running this ({type(error).__name__}).",
            from_statuses=(Status.RUNNING,),
        )
        raise
    if finished is None:
        return Run.objects.values_list("status", flat=True).get(pk=run_id)
    now = timezone.now()
    rest = writer.take_pending()
    done = Run.objects.filter(pk=run_id, status=Status.RUNNING).update(
        status=Status.DONE,
        output=_appended(rest) if rest else F("output"),
        tool_calls=tools,
        stop_reason=finished.stop_reason[:STOP_REASON_MAX_CHARS],
        input_tokens=finished.input_tokens,
        output_tokens=finished.output_tokens,
        finished_at=now,
        heartbeat_at=now,
        first_token_at=F("first_token_at") if writer.parts else now,
    )
    if not done:
        return Run.objects.values_list("status", flat=True).get(pk=run_id)
    run.status = Status.DONE
    run.output = run.output + "".join(writer.parts)
    run.tool_calls = tools
    run.stop_reason = finished.stop_reason[:STOP_REASON_MAX_CHARS]
    run.input_tokens, run.output_tokens = finished.input_tokens, finished.output_tokens
    run.finished_at = run.heartbeat_at = now
    run.first_token_at = (writer.first_token_at or run.first_token_at) if writer.parts else now
    run_notify_status(run_id=run_id, status=Status.DONE)
    logger.info("run.done", extra={"run_id": run_id, "output_tokens": finished.output_tokens})
    return Status.DONE


def _is_stale(heartbeat: datetime | None) -> bool:
    return heartbeat is None or heartbeat < timezone.now() - timedelta(
        seconds=settings.RUN_STALE_SECONDS
    )


# --- cancel, reap ---------------------------------------------------------------------------


_CANCEL_FORBIDDEN = "Only the person who started this run, or the owner, can cancel it."


def _cancel(run_ids: list[int]) -> int:
    """queued or running → cancelled, then (once that commits) each run's stream readers are
    told on its channel. A run among them that finished meanwhile is told too: a status notice
    makes a reader read the row, which says how it ended. Returns how many were cancelled."""
    cancelled = Run.objects.filter(pk__in=run_ids, status__in=(Status.QUEUED, Status.RUNNING))
    moved = cancelled.update(
        status=Status.CANCELLED, finished_at=timezone.now(), error="Cancelled by the user."
    )
    if moved:
        for run_id in run_ids:
            run_notify_status(run_id=run_id, status=Status.CANCELLED)
    return moved


def run_cancel(*, actor: User, run: Run) -> Run:
    """Cancel a queued or running run (its author or the prompt's owner). The worker sees it
    at its next write and closes the provider stream. Cancelling a finished run is a no-op."""
    if actor.pk not in (run.created_by_id, run.version.prompt.owner_id):
        raise Forbidden(_CANCEL_FORBIDDEN)
    _cancel([run.pk])
    run.refresh_from_db()
    return run


def runs_cancel(*, actor: User, runs: QuerySet[Run]) -> int:
    """`run_cancel` for every queued or running run of `runs` at once (an evaluation's cells),
    in one transaction: the same update, and the same notice to each run's stream readers.
    Every one must be the actor's or of a prompt the actor owns, else Forbidden and none is
    cancelled. Returns how many were cancelled."""
    with transaction.atomic():
        run_ids = list(
            runs.filter(status__in=(Status.QUEUED, Status.RUNNING)).values_list("pk", flat=True)
        )
        if not run_ids:
            return 0
        others = Run.objects.filter(pk__in=run_ids).exclude(
            Q(created_by=actor) | Q(version__prompt__owner=actor)
        )
        if others.exists():
            raise Forbidden(_CANCEL_FORBIDDEN)
        moved = _cancel(run_ids)
    logger.info("runs.cancelled", extra={"count": moved, "actor_id": actor.pk})
    return moved


def run_fail(*, run_id: int, reason: str) -> bool:
    """Fail a queued or running run for `reason`, as its worker fails one (its stream readers
    are told): for a caller that stopped waiting for it (an evaluation cell past its time
    limit). False when the run had finished already."""
    return _fail(run_id, reason, from_statuses=(Status.QUEUED, Status.RUNNING))


# Runs failed by one reaper round at most, for each of its two reasons (the rest next round).
REAP_BATCH = 1000


def _reap(runs: QuerySet[Run], reason: str) -> int:
    """Fail up to REAP_BATCH of `runs` for `reason`, as `run_fail` fails one: each run's stream
    readers are told once that commits. Runs that moved on meanwhile are left alone (the update
    repeats the filter); a notice to one of them only makes its readers read the row."""
    run_ids = list(runs.order_by("pk").values_list("pk", flat=True)[:REAP_BATCH])
    if not run_ids:
        return 0
    now = timezone.now()
    with transaction.atomic():
        failed = runs.filter(pk__in=run_ids).update(
            status=Status.FAILED, finished_at=now, heartbeat_at=now, error=reason
        )
        for run_id in run_ids:
            run_notify_status(run_id=run_id, status=Status.FAILED)
    return failed


def runs_reap_stale() -> int:
    """Fail runs whose worker vanished: running with a stale heartbeat, or queued too long.
    Their stream readers are told, as when a worker fails a run (`run_fail`)."""
    now = timezone.now()
    stale = now - timedelta(seconds=settings.RUN_STALE_SECONDS)
    waited = now - timedelta(seconds=settings.RUN_QUEUED_MAX_SECONDS)
    lost = _reap(
        Run.objects.filter(status=Status.RUNNING, heartbeat_at__lt=stale),
        f"The worker running this stopped responding (no progress for"
        f" {settings.RUN_STALE_SECONDS} s: killed or lost). Run it again.",
    )
    unclaimed = _reap(
        Run.objects.filter(status=Status.QUEUED, created_at__lt=waited),
        f"No worker took this run within {settings.RUN_QUEUED_MAX_SECONDS} s.",
    )
    if lost or unclaimed:
        logger.info("runs.reaped", extra={"lost": lost, "unclaimed": unclaimed})
    return lost + unclaimed


def runs_redispatch() -> int:
    """Queued runs the broker never got (it was down when they were accepted) or may have lost
    (no claim RUN_REDISPATCH_SECONDS after their message was sent: Redis restarted empty) get
    their message again, oldest first; returns how many were sent. Each run is taken by moving
    its `dispatched_at`, so two reapers never send it twice at once."""
    now = timezone.now()
    cutoff = now - timedelta(seconds=settings.RUN_REDISPATCH_SECONDS)
    waiting = (
        Run.objects.filter(status=Status.QUEUED, on_run_queue=True)
        .filter(Q(dispatched_at__isnull=True) | Q(dispatched_at__lt=cutoff))
        .order_by("created_at", "pk")
        .values_list("pk", "dispatched_at")[:500]
    )
    sent = 0
    for run_id, dispatched_at in list(waiting):
        if not Run.objects.filter(pk=run_id, dispatched_at=dispatched_at).update(dispatched_at=now):
            continue
        if not run_enqueue(run_id=run_id):
            break  # the broker is still down: the next round tries again
        sent += 1
    if sent:
        logger.warning("runs.redispatched", extra={"count": sent})
    return sent


# --- continue -------------------------------------------------------------------------------


def run_continue(*, actor: User, run: Run, message: object, role: str) -> SaveResult:
    """A child of the run's version: the run's output as an `assistant` turn, then `message`
    as the next `user` turn. The run's variables become the child's defaults and its
    provider and model the child's, so the child replays the conversation that happened."""
    if role not in (Role.OWNER, Role.EDITOR):
        raise Forbidden("You have read-only access to this prompt: continuing saves a version.")
    if run.status != Status.DONE:
        raise Conflict(f"Only a finished run can be continued; this one is {run.status}.")
    if not isinstance(message, str) or not message.strip():
        raise ContentInvalid("message: the next user turn must not be empty.", field="message")
    if len(message) > MAX_CONTINUE_CHARS:
        raise ContentInvalid(f"message: at most {MAX_CONTINUE_CHARS} characters.", field="message")
    if not run.output:
        raise Conflict("This run produced no text to continue from (only tool calls).")
    version = run.version
    content = version_content(version=version)
    content["provider"], content["model"] = run.provider, run.model
    content["variables"] = dict(run.variables)
    content["messages"] = [
        *content["messages"],
        {"role": "assistant", "content": run.output},
        {"role": "user", "content": message},
    ]
    summary = " ".join(message.split())
    summary = summary if len(summary) <= 60 else summary[:59] + "…"
    return prompt_version_create(
        actor=actor,
        prompt=version.prompt,
        parent=version,
        content=content,
        message=f"Continue run {run.pk}: {summary}",
    )
