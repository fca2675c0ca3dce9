"""Hand an evaluation's cells to whatever executes them.

With a broker: one `evals.cell_execute` task per cell on EVAL_TASK_QUEUE, but never more than
EVAL_USER_CELLS_IN_FLIGHT of one account's unfinished cells handed over at once (issue #31):
the next is sent as each ends (by the cell's close, in its transaction: `cells_feed_in_close`;
else by its task, `cell_ended_send_next`), so the queue the workers share holds at
most that many of an account's cells whatever it queued, and another account's run waits about
one run's time. A cell whose provider is at its cap is retried shortly by the task itself.
A cell's `sent_at` marks it handed over; a publish that fails (the broker is down) clears it
again and the reaper (`cells_send_pending`) hands it over once the broker is back.

With eager tasks (the embedded default) a background thread of the web process runs the cells
on a small pool of EAGER_THREADS threads (one on SQLite, which takes one writer at a
time), each with its own database connection, so the POST answers at once and the page shows
progress.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime

from celery import current_app
from django.conf import settings
from django.contrib.auth.models import User
from django.db import close_old_connections, connection, connections, transaction
from django.db.models import Count, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from common.outage import BACKEND_DOWN
from common.rawsql import row_fetch

from .models import EvalCell

logger = logging.getLogger(__name__)

# What a cell's execution answers when its provider is at its concurrency cap: try again later.
DEFERRED = "deferred"
# The cell task by its name (evals/tasks.py registers it on the workers; the tasks call the
# services, which call this module: importing them here would close a circle). Eagerly, the
# services hand their own `cell_execute` in as `execute`.
CELL_TASK = "evals.cell_execute"
# A cell deferred by its provider's cap is tried again this many seconds later.
DEFER_SECONDS = 0.5
# Without a broker, an evaluation's cells run on a pool of this many threads of the web process
# (one on SQLite, which takes one writer at a time).
EAGER_THREADS = 4

CellExecute = Callable[[int], str]  # cell id → the cell's status, or DEFERRED


def cells_dispatch(*, evaluation_id: int, execute: CellExecute, unfinished: bool = False) -> None:
    """Hand the evaluation's queued cells (with `unfinished`, its running ones too: the reaper's
    hand-off of a stalled evaluation) to workers, in matrix order. `execute` runs one cell when
    tasks are eager (the embedded default)."""
    statuses = [EvalCell.Status.QUEUED, *([EvalCell.Status.RUNNING] if unfinished else [])]
    if not current_app.conf.task_always_eager:
        if unfinished:
            # Their messages may be lost (a killed worker's reserved ones): hand them over again.
            EvalCell.objects.filter(evaluation_id=evaluation_id, status__in=statuses).update(
                sent_at=None
            )
        owner = EvalCell.objects.filter(evaluation_id=evaluation_id).values_list(
            "evaluation__created_by_id", flat=True
        )[:1]
        for user_id in owner:
            cells_send_next(user_id=user_id)
        return
    cell_ids = list(
        EvalCell.objects.filter(evaluation_id=evaluation_id, status__in=statuses)
        .order_by("row__position", "target__position", "repeat_index")
        .values_list("pk", flat=True)
    )
    if settings.EVAL_EAGER_MODE == "inline":
        _run_pool_inline(cell_ids, execute)
        return
    thread = threading.Thread(
        target=_run_pool,
        args=(cell_ids, execute),
        name=f"redline-eval-{evaluation_id}",
        daemon=True,
    )
    thread.start()


_UNFINISHED = (EvalCell.Status.QUEUED, EvalCell.Status.RUNNING)


@dataclass
class NextCells:
    """The fair feed done by a cell's close (issue #32): the account whose next cells the close
    hands over in its own transaction, and whether it did (`done`: the cell's task then sends
    none itself)."""

    user_id: int
    done: bool = False


def account_lock(*, user_id: int) -> None:
    """Take the account's feed lock until the transaction ends: the count of its handed-over
    cells and their marking are done under it, so two cells ending at once cannot both fill the
    last place. (A row lock that leaves the row's key alone: the account's runs and evaluations,
    inserted meanwhile, are not held up by it.) The one-statement close takes the same lock in
    its statement (evals/services/cells.py, _CLOSE_SQL)."""
    list(
        User.objects.select_for_update(no_key=True).filter(pk=user_id).values_list("pk", flat=True)
    )


# On PostgreSQL the pick and its marking are one statement: the account's oldest unsent
# unfinished cells (oldest evaluation first, in matrix order), as many as its place allows
# (EVAL_USER_CELLS_IN_FLIGHT less its unfinished cells handed over), marked sent. It runs
# after the account's lock is taken, in an earlier statement, so its snapshot sees every cell
# the lock's previous holder marked. SKIP LOCKED passes over a cell a cancel is writing.
# One row back (the picked ids in matrix order), so it goes through `row_fetch`: compiled once
# and prepared on the server.
_PICK_SQL = """
WITH picked AS (
    UPDATE evals_evalcell SET sent_at = %s
    WHERE id IN (
        SELECT cell.id FROM evals_evalcell cell
        JOIN evals_evaluation evaluation ON evaluation.id = cell.evaluation_id
        WHERE evaluation.created_by_id = %s AND cell.status IN ('queued', 'running')
            AND cell.sent_at IS NULL
        ORDER BY cell.evaluation_id, cell.id
        LIMIT GREATEST(0, %s - (
            SELECT count(*) FROM evals_evalcell handed
            JOIN evals_evaluation owned ON owned.id = handed.evaluation_id
            WHERE owned.created_by_id = %s AND handed.status IN ('queued', 'running')
                AND handed.sent_at IS NOT NULL
        ))
        FOR UPDATE OF cell SKIP LOCKED
    )
    RETURNING evaluation_id, id
)
SELECT array_agg(id ORDER BY evaluation_id, id) FROM picked
"""
_PICK_FIELDS = (None,)


def cells_pick(*, user_id: int, now: datetime) -> list[int]:
    """Mark the account's next cells sent, up to its place, and return them in matrix order.
    Call inside a transaction holding `account_lock` (or the close's lock); publish them after
    it commits (`cells_publish`)."""
    cap = max(1, int(settings.EVAL_USER_CELLS_IN_FLIGHT))
    if connection.vendor == "postgresql":
        row = row_fetch(_PICK_SQL, [now, user_id, cap, user_id], _PICK_FIELDS)
        return list(row[0] or []) if row is not None else []
    unfinished = EvalCell.objects.filter(evaluation__created_by_id=user_id, status__in=_UNFINISHED)
    # The next `cap` unsent cells, each with the count of those handed over (one read).
    handed = (
        unfinished.filter(sent_at__isnull=False)
        .order_by()
        .values("evaluation__created_by_id")
        .annotate(n=Count("pk"))
        .values("n")
    )
    waiting = list(
        unfinished.filter(sent_at__isnull=True)
        .order_by("evaluation_id", "pk")  # cells are inserted in matrix order
        .annotate(handed=Coalesce(Subquery(handed), Value(0)))
        .values_list("pk", "handed")[:cap]
    )
    room = cap - waiting[0][1] if waiting else 0
    picked = [cell_id for cell_id, _ in waiting[: max(0, room)]]
    if picked:
        EvalCell.objects.filter(pk__in=picked).update(sent_at=now)
    return picked


def cells_publish(*, user_id: int, picked: list[int], now: datetime) -> int:
    """Hand the picked (and committed as sent) cells to the broker; returns how many went. A
    publish that fails clears `sent_at` of the rest, for the reaper."""
    for index, cell_id in enumerate(picked):
        try:
            # The account rides along, so the cell's task sends the next without looking it up.
            # The time limits are left to the worker that takes the cell (its own
            # EVAL_CELL_SOFT_TIME_LIMIT, evals/tasks.py): without the explicit None, Celery
            # copies the limits of this process's registration of the task into the message,
            # when it has one, and a message's limits override the worker's.
            # Nobody reads a cell task's result (the cell's row is the result): without
            # `ignore_result` the result backend subscribes to each message's reply channel as
            # it is sent (round trips to Redis on every cell's close) and the worker stores it.
            current_app.send_task(
                CELL_TASK,
                args=[cell_id, user_id],
                queue=settings.EVAL_TASK_QUEUE,
                time_limit=None,
                soft_time_limit=None,
                ignore_result=True,
                add_to_parent=False,
            )
        except BACKEND_DOWN:
            # The broker is down: these cells wait, unsent, for the reaper (never lost).
            EvalCell.objects.filter(pk__in=picked[index:], sent_at=now).update(sent_at=None)
            logger.warning(
                "evaluation.dispatch_failed", extra={"user_id": user_id, "cell_id": cell_id}
            )
            return index
    return len(picked)


def cells_send_next(*, user_id: int) -> int:
    """Hand the account's next unsent cells (oldest evaluation first, in matrix order) to the
    broker, up to EVAL_USER_CELLS_IN_FLIGHT of its unfinished cells handed over; returns how
    many were sent. The count and the marking are done under the account's lock."""
    now = timezone.now()
    with transaction.atomic():
        account_lock(user_id=user_id)
        picked = cells_pick(user_id=user_id, now=now)
    return cells_publish(user_id=user_id, picked=picked, now=now) if picked else 0


def cells_feed_in_close(*, feed: NextCells | None) -> None:
    """The fair feed inside a cell's closing transaction (one commit for both), the account's
    lock already taken: pick the account's next cells now, publish them once the close commits.
    Nothing when there is no feed or tasks are eager (the eager pool runs every cell itself)."""
    if feed is None or current_app.conf.task_always_eager:
        return
    now = timezone.now()
    picked = cells_pick(user_id=feed.user_id, now=now)

    def handed_over() -> None:
        feed.done = True  # only once committed: a close rolled back leaves the task to feed
        if picked:
            cells_publish(user_id=feed.user_id, picked=picked, now=now)

    transaction.on_commit(handed_over)


def cell_ended_send_next(*, cell_id: int, user_id: int | None = None) -> None:
    """A cell's task ended (finished, or gave up): send the account's next cells. `user_id`:
    the cell's account, as its message carried it (looked up when not: an older message)."""
    if current_app.conf.task_always_eager:
        return  # the eager pool of cells_dispatch runs every cell itself
    if user_id is not None:
        cells_send_next(user_id=user_id)
        return
    for owner_id in EvalCell.objects.filter(pk=cell_id).values_list(
        "evaluation__created_by_id", flat=True
    ):
        cells_send_next(user_id=owner_id)


def cells_send_pending() -> int:
    """The reaper's part: every account with unfinished cells not handed over (the broker was
    down, or their turn had not come) gets its share sent; returns how many were sent."""
    if current_app.conf.task_always_eager:
        return 0
    users = (
        EvalCell.objects.filter(status__in=_UNFINISHED, sent_at__isnull=True)
        .values_list("evaluation__created_by_id", flat=True)
        .distinct()
        .order_by()
    )
    return sum(cells_send_next(user_id=user_id) for user_id in list(users[:1000]))


def _run_pool(cell_ids: list[int], execute: CellExecute) -> None:
    # SQLite takes one writer at a time: more threads would only queue on its lock.
    threads = 1 if connection.vendor == "sqlite" else EAGER_THREADS
    with ThreadPoolExecutor(max_workers=threads) as pool:
        list(pool.map(lambda cell_id: _run_one(cell_id, execute), cell_ids))


def _run_pool_inline(cell_ids: list[int], execute: CellExecute) -> None:
    """Every cell in the calling thread, in order (tests that want the finished evaluation)."""
    for cell_id in cell_ids:
        while execute(cell_id) == DEFERRED:
            time.sleep(DEFER_SECONDS)


def _run_one(cell_id: int, execute: CellExecute) -> None:
    close_old_connections()
    try:
        while execute(cell_id) == DEFERRED:
            time.sleep(DEFER_SECONDS)
    except Exception:
        logger.exception("evaluation.cell_crashed", extra={"cell_id": cell_id})
    finally:
        connections.close_all()
