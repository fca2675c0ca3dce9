"""A fair queue for runs: one account's flood never delays another account's run by more than
one run's time (issue #21).

Every queued run still gets one Celery message, but a message is a turn on a worker, not a
claim on its own run: `run_execute_next` takes the queued run whose account has the fewest runs
running now (oldest first among equals), claims it and executes it. An account with 20 runs
waiting and one with 1 alternate: the second account's run starts at the next free slot.
Messages and queued runs stay balanced (each message claims at most one run; a message that
finds nothing queued, because its run was cancelled or taken by an earlier turn, does nothing;
a message whose run no longer exists takes no turn).

The pick and the claim are one transaction; on PostgreSQL the candidate rows are locked with
`FOR UPDATE SKIP LOCKED`, so parallel workers take different runs without waiting for each
other; on SQLite (one writer at a time) the conditional update of the claim decides.

Never a second provider call: a claim is `queued → running` by a conditional update, exactly as
for `run_execute`, and a re-delivered message whose own run is `running` with a stale heartbeat
fails that run (the worker that had it died mid-call) before taking its turn.
"""

from __future__ import annotations

from django.db import connection, transaction
from django.db.models import Count, F, IntegerField, OuterRef, Q, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from ..models import Run
from .services import _fail, _is_stale, run_execute_claimed

Status = Run.Status
_CANDIDATES = 8  # rows tried per pick when others claim them first


def _busy_per_account() -> Subquery:
    running = (
        Run.objects.filter(created_by_id=OuterRef("created_by_id"), status=Status.RUNNING)
        .order_by()
        .values("created_by_id")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return Subquery(running, output_field=IntegerField())


def run_claim_next() -> int | None:
    """Claim (queued → running) the queued run the fair order puts first; its id, or None."""
    with transaction.atomic():
        queued = (
            # Only runs a run-queue message stands for: an evaluation executes its cells' runs
            # itself, so a turn taking one would leave its cell task nothing to run.
            Run.objects.filter(status=Status.QUEUED, on_run_queue=True)
            .annotate(busy=Coalesce(_busy_per_account(), Value(0)))
            .order_by("busy", "created_at", "pk")
        )
        if connection.features.has_select_for_update_skip_locked:
            queued = queued.select_for_update(skip_locked=True, of=("self",))
        for run_id in list(queued.values_list("pk", flat=True)[:_CANDIDATES]):
            now = timezone.now()
            claimed = Run.objects.filter(pk=run_id, status=Status.QUEUED).update(
                status=Status.RUNNING,
                started_at=now,
                heartbeat_at=now,
                deliveries=F("deliveries") + 1,
            )
            if claimed:
                return run_id
    return None


def run_execute_next(*, run_id: int) -> str:
    """A worker's turn, delivered for `run_id`: execute the fairest queued run (maybe another
    one). Returns the executed run's final status, or "idle" when nothing was queued."""
    own = Run.objects.filter(pk=run_id).only("status", "heartbeat_at").first()
    if own is None:
        # A message for a run that no longer exists (deleted with its prompt) stands for no
        # queued run: it takes no turn. (Were that run claimed by another run's message
        # first, that other run waits for the reaper's RUN_QUEUED_MAX_SECONDS.)
        return "missing"
    if own.status == Status.RUNNING and _is_stale(own.heartbeat_at):
        _fail(
            run_id,
            "The worker running this run stopped mid-run (killed or lost); the call was not"
            " sent again. Run it again.",
            from_statuses=(Status.RUNNING,),
        )
    picked = run_claim_next()
    if picked is None:
        return "idle"
    return run_execute_claimed(run_id=picked)


def runs_waiting_by_account() -> dict[int, int]:
    """Queued runs per account (for the operations page and benches)."""
    rows = (
        Run.objects.filter(Q(status=Status.QUEUED))
        .values("created_by_id")
        .annotate(n=Count("pk"))
        .order_by()
    )
    return {row["created_by_id"]: row["n"] for row in rows}
