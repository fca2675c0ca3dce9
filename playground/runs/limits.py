"""Each user's share of the run workers (issue #21): a rate and a cap on unfinished runs.

- `RUN_USER_RATE_LIMIT` runs per `RUN_USER_RATE_WINDOW` seconds per account (counted in the
  shared cache, like every rate limit, so all web workers see one counter);
- `RUN_USER_ACTIVE_MAX` runs queued or running at once per account, counted in the database
  while the account's row is locked, so parallel POSTs cannot all slip under the cap.

Past either: `RateLimited`, a 429 with `Retry-After` (API) or the 429 page. A replayed
idempotency key is not a new run and is never refused. Fairness between accounts once runs are
queued is the worker's business (`playground.runs.fair`).
"""

from django.conf import settings
from django.contrib.auth.models import User

from common.exceptions import RateLimited
from common.ratelimit import Limit, ratelimit_exceeded, ratelimit_hit

from ..models import Run

SCOPE = "runs"
ACTIVE_STATUSES = (Run.Status.QUEUED, Run.Status.RUNNING)


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
    User.objects.select_for_update().filter(pk=actor.pk).exists()
    cap = int(settings.RUN_USER_ACTIVE_MAX)
    active = Run.objects.filter(created_by_id=actor.pk, status__in=ACTIVE_STATUSES).count()
    if active >= cap:
        wait = max(1, int(settings.RUN_ACTIVE_RETRY_AFTER))
        raise RateLimited(
            f"You have {active} runs queued or running, the most one account may have"
            f" (RUN_USER_ACTIVE_MAX = {cap}); wait for one to finish or cancel one.",
            retry_after=wait,
        )
