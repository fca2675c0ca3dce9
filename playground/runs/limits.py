"""Each user's share of the run workers (issue #21): a rate and a cap on unfinished runs.

- `RUN_USER_RATE_LIMIT` runs per `RUN_USER_RATE_WINDOW` seconds per account (counted in the
  shared cache, like every rate limit, so all web workers see one counter);
- `RUN_USER_ACTIVE_MAX` runs queued or running at once per account, counted in the database
  while the account's row is locked, so parallel POSTs cannot all slip under the cap.

Past either: `RateLimited`, a 429 with `Retry-After` (API) or the 429 page. A replayed
idempotency key is not a new run and is never refused. `run_start` is what a person's request
(the API, the pages) calls; code that paces its own runs (an evaluation's cells) calls
`run_create` directly. Fairness between accounts once runs are queued is the worker's business
(`playground.runs.fair`).
"""

from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction

from common.exceptions import RateLimited
from common.ratelimit import Limit, ratelimit_exceeded, ratelimit_hit

from ..models import PromptVersion, Run
from .services import RunCreated, run_create

SCOPE = "runs"
ACTIVE_STATUSES = (Run.Status.QUEUED, Run.Status.RUNNING)
# The Retry-After of the 429 for an account at RUN_USER_ACTIVE_MAX (about a short run).
ACTIVE_RETRY_AFTER = 10


def _limit() -> Limit:
    return Limit(
        count=int(settings.RUN_USER_RATE_LIMIT), window_seconds=int(settings.RUN_USER_RATE_WINDOW)
    )


def run_rate_check(*, actor: User) -> None:
    """RateLimited once `actor` started RUN_USER_RATE_LIMIT runs in this window."""
    wait = ratelimit_exceeded(scope=SCOPE, ident=f"user:{actor.pk}", limit=_limit())
    if wait:
        raise RateLimited(
            f"Too many runs: at most {settings.RUN_USER_RATE_LIMIT} every"
            f" {settings.RUN_USER_RATE_WINDOW} s (RUN_USER_RATE_LIMIT); try again in {wait} s.",
            retry_after=wait,
        )


def run_rate_hit(*, actor: User) -> None:
    ratelimit_hit(scope=SCOPE, ident=f"user:{actor.pk}", limit=_limit())


def run_active_check(*, actor: User) -> None:
    """RateLimited when `actor` already has RUN_USER_ACTIVE_MAX runs queued or running.

    Call inside the transaction that inserts the run: it locks the account's row first, so
    concurrent creations by one account count one after the other."""
    list(User.objects.select_for_update().filter(pk=actor.pk).values_list("pk", flat=True))
    cap = int(settings.RUN_USER_ACTIVE_MAX)
    # An evaluation's cells pace themselves (docs/evals.md); they do not count against the
    # account's interactive runs.
    active = Run.objects.filter(
        created_by_id=actor.pk, status__in=ACTIVE_STATUSES, on_run_queue=True
    ).count()
    if active >= cap:
        wait = ACTIVE_RETRY_AFTER
        raise RateLimited(
            f"You have {active} runs queued or running, the most one account may have"
            f" (RUN_USER_ACTIVE_MAX = {cap}); wait for one to finish or cancel one.",
            retry_after=wait,
        )


def run_start(
    *,
    actor: User,
    version: PromptVersion,
    variables: Any = None,
    idempotency_key: Any = None,
    provider: Any = None,
    model: Any = None,
) -> RunCreated:
    """`run_create` for a person's request, within the account's rate and unfinished-run cap.

    The cap is counted and the run inserted in one transaction with the account's row locked;
    a replay of an earlier idempotency key returns that run without being counted."""
    replay = (
        isinstance(idempotency_key, str)
        and bool(idempotency_key)
        and Run.objects.filter(
            version=version, created_by_id=actor.pk, idempotency_key=idempotency_key
        ).exists()
    )
    arguments: dict[str, Any] = {
        "actor": actor,
        "version": version,
        "variables": variables,
        "idempotency_key": idempotency_key,
        "provider": provider,
        "model": model,
    }
    if replay:
        return run_create(**arguments)
    run_rate_check(actor=actor)
    with transaction.atomic():
        run_active_check(actor=actor)
        created = run_create(**arguments)
    if created.created:
        run_rate_hit(actor=actor)
    return created
