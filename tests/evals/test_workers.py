"""Evaluations on real Celery workers (the services pass: PostgreSQL, Redis, a worker process;
skipped on the embedded default, failed there if the pass expects the services).

- A worker SIGKILLed mid-evaluation loses no cell and calls no provider twice: a new worker on
  the same queue takes the messages still queued, the reaper hands over the ones the dead worker
  had reserved, and the cell whose call was in flight is failed, never sent again.
- Cancel stops new provider calls: none starts more than a second after the cancel returned.
- A poisoned grader cannot hang a worker: past EVAL_CELL_SOFT_TIME_LIMIT its cell is `error`
  with the reason, its message is acknowledged (not redelivered), and the worker goes on with
  the next cell.

The provider is the loopback server (Anthropic's wire protocol) streaming slowly enough for the
test to act mid-evaluation; each row's value names its cell in the request the server records.
"""

from __future__ import annotations

import json
import os
import re
import signal
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from config.celery import app
from evals.models import EvalCell, Evaluation
from evals.services import testsets
from evals.services.evaluations import evaluation_cancel, evaluation_create, evaluations_reap
from playground.models import Role, Run
from tests.factories import make_user
from tests.playground.exportkit.providers import Behaviour
from tests.playground.factories import make_prompt
from tests.playground.runkit.worker import run_worker

pytestmark = pytest.mark.django_db(transaction=True)

# About 14 streamed events a reply: a call takes about 0.8 s.
SLOW = Behaviour(token_delay=0.06)
DESIGN = re.compile(r"design number (\d+)")


def _worker_env(server, queue: str) -> dict[str, str]:
    return {
        "ANTHROPIC_BASE_URL": server.origin,
        "ANTHROPIC_API_KEY": "sk-ant-test",
        "RUN_PROVIDER_TIMEOUT": "5",
        "RUN_STALE_SECONDS": "2",
        "RUN_ECHO_DELAY_MS": "0",
        "EVAL_TASK_QUEUE": queue,
    }


@contextmanager
def _on_workers(settings, server) -> Iterator[str]:
    """This process publishes cell tasks to a fresh queue instead of running them eagerly."""
    server.clear()
    settings.ANTHROPIC_BASE_URL = server.origin
    settings.ANTHROPIC_API_KEY = "sk-ant-test"
    queue = f"evals-test-{uuid.uuid4().hex[:10]}"
    settings.EVAL_TASK_QUEUE = queue
    previous = app.conf.task_always_eager
    app.conf.task_always_eager = False
    try:
        yield queue
    finally:
        app.conf.task_always_eager = previous


def _start(owner, rows: int, graders: list | None = None) -> Evaluation:
    prompt, version = make_prompt(owner)
    revision = testsets.testset_create(
        actor=owner,
        prompt=prompt,
        role=Role.OWNER,
        name="designs",
        rows=testsets.testset_rows_parse(
            [{"variables": {"design": f"design number {i:02d}"}} for i in range(rows)]
        ),
    )
    # Committed at once (a transactional test): the cells' tasks are published on commit.
    return evaluation_create(
        actor=owner,
        prompt=prompt,
        role=Role.OWNER,
        revision=revision,
        versions=[version.pk],
        graders=graders or [{"type": "contains", "value": "Hello"}],
    )


def _wait(condition, what: str, timeout: float = 60, state=None) -> None:
    """Until `condition()`; past `timeout`, fail naming `what` (and `state()`, when given)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            seen = f": {state()}" if state is not None else ""
            raise AssertionError(f"waited {timeout:.0f} s for {what}{seen}")
        time.sleep(0.05)


def _queued(queue: str) -> int:
    with app.connection_for_read() as connection:
        try:
            declared = connection.default_channel.queue_declare(queue=queue, passive=True)
        except connection.channel_errors:  # Redis keeps no empty list: nothing waits
            return 0
        return declared.message_count


def _worker_idle(worker) -> bool:
    """No message waits on the worker's queue and none is running or prefetched in it (a busy
    solo worker answers no inspection: not idle). The queue is looked at again last, for a
    message a task published just before it finished."""
    if _queued(worker.queue):
        return False
    inspect = app.control.inspect(destination=[worker.name], timeout=1.0)
    active, reserved = inspect.active() or {}, inspect.reserved() or {}
    if active.get(worker.name) != [] or reserved.get(worker.name) != []:
        return False
    return not _queued(worker.queue)


def _mid_call(evaluation: Evaluation, graded_at_least: int) -> Run | None:
    """A run of the evaluation early in streaming its reply (at most its first three words of
    ten: half a second of it left), once enough cells are graded."""
    cells = EvalCell.objects.filter(evaluation=evaluation)
    if cells.filter(status="graded").count() < graded_at_least:
        return None
    run = (
        Run.objects.filter(eval_cell__evaluation=evaluation, status="running")
        .exclude(output="")
        .first()
    )
    return run if run is not None and len(run.output) <= len("Hello from the") else None


def _designs(cells) -> dict[int, str]:
    return {cell.pk: cell.row.content.variables["design"][-2:] for cell in cells}


def _requests_by_design(server) -> Counter[str]:
    return Counter(
        match.group(1)
        for request in server.requests
        if (match := DESIGN.search(json.dumps(request.body)))
    )


def test_a_worker_killed_mid_evaluation_loses_no_cell_and_sends_no_call_twice(
    provider_server, settings
):
    rows = 12
    with _on_workers(settings, provider_server) as queue:
        settings.EVAL_STALL_SECONDS = 1  # the reaper, called below, hands over at once
        provider_server.plan(*[SLOW] * (rows + 4))
        env = _worker_env(provider_server, queue)
        with run_worker(queue=queue, **env) as victim:
            evaluation = _start(make_user("owner"), rows)
            in_flight: list[Run] = []

            def streaming() -> bool:
                run = _mid_call(evaluation, 2)
                in_flight.extend([run] if run is not None else [])
                return run is not None

            _wait(streaming, "a cell mid-call after two graded")
            os.kill(victim.process.pid, signal.SIGKILL)
            victim.process.wait(timeout=10)
        killed_run = in_flight[0]
        with run_worker(queue=queue, **env):
            # The new worker takes what is still on the queue; the cells the dead worker held
            # (reserved, or claimed mid-call) wait for the reaper (every 60 s in production).
            def finished() -> bool:
                evaluations_reap()
                return Evaluation.objects.get(pk=evaluation.pk).status in Evaluation.FINISHED

            _wait(finished, "the evaluation to finish")

    evaluation.refresh_from_db()
    cells = list(EvalCell.objects.filter(evaluation=evaluation).select_related("row__content"))
    assert evaluation.status == "done"
    assert evaluation.cells_done == evaluation.cells_total == rows == len(cells)
    designs = _designs(cells)
    # Each cell's call was sent exactly once: the one in flight at the kill too.
    assert _requests_by_design(provider_server) == Counter(designs.values())
    assert len(provider_server.requests) == rows
    # The cell in flight at the kill is failed as lost, never re-sent (should its reply have
    # ended in the instant before the kill, it is graded instead); every other cell is graded.
    (killed,) = [cell for cell in cells if cell.run_id == killed_run.pk]
    assert (killed.status == "error" and "stopped" in killed.error) or killed.status == "graded"
    others = [cell for cell in cells if cell.pk != killed.pk]
    assert Counter(cell.status for cell in others) == {"graded": rows - 1}
    assert all(cell.passed and len(cell.grades) == 1 for cell in cells if cell.status == "graded")


def test_cancel_stops_new_provider_calls_within_a_second(provider_server, settings):
    rows = 16
    with _on_workers(settings, provider_server) as queue:
        provider_server.plan(*[SLOW] * (rows + 4))
        with run_worker(queue=queue, **_worker_env(provider_server, queue)) as worker:
            owner = make_user("owner")
            evaluation = _start(owner, rows)
            _wait(lambda: _mid_call(evaluation, 2) is not None, "a cell mid-call")
            cancelled = evaluation_cancel(actor=owner, evaluation=evaluation)
            answered = time.monotonic()
            assert cancelled.status == "cancelled"
            # The worker drains the queue: every cell ends, none of them by a new call.
            _wait(
                lambda: (
                    not EvalCell.objects.filter(
                        evaluation=evaluation, status__in=("queued", "running")
                    ).exists()
                ),
                "every cell to end",
            )
            # Anything the worker still had in hand would have started its call by the time
            # it holds nothing: no message queued, none running or prefetched.
            _wait(lambda: _worker_idle(worker), "the worker to hold nothing")

    late = [round(r.at - answered, 3) for r in provider_server.requests if r.at > answered + 1.0]
    assert late == [], f"calls started this many seconds after the cancel: {late}"
    evaluation.refresh_from_db()
    cells = list(
        EvalCell.objects.filter(evaluation=evaluation).select_related("row__content", "run")
    )
    assert evaluation.status == "cancelled"
    assert evaluation.cells_done == evaluation.cells_total == rows
    sent = _requests_by_design(provider_server)
    assert max(sent.values()) == 1
    designs = _designs(cells)
    for cell in cells:
        if designs[cell.pk] not in sent:  # never started: cancelled, with no call
            assert cell.status == "cancelled", (cell.pk, cell.status)
            assert cell.run is None or cell.run.status == "cancelled"
        else:  # graded before the cancel, or cancelled mid-call
            assert cell.status in ("graded", "cancelled"), (cell.pk, cell.status)
    by_status = Counter(cell.status for cell in cells)
    assert by_status["graded"] >= 2
    assert by_status["cancelled"] >= rows - len(sent)
    assert len(sent) < rows  # the cancel came mid-way


def test_a_poisoned_cell_ends_error_at_its_time_limit_and_the_worker_goes_on(
    provider_server, settings
):
    """A regex grader whose pattern takes exponential time on the reply, with a regex budget
    (600 s) far past the cell's time limit (30 s, the worker's own setting: a cell's message
    carries no limit), so only the time limit can stop it: on a prefork worker (time limits
    need one), as in production. A first evaluation warms the
    worker up, so the limit is spent on grading, not on the child's first imports (the first
    provider call of a fresh child took 17 s on a loaded machine)."""
    poisoned_reply = Behaviour(text="a" * 60 + "!")
    with _on_workers(settings, provider_server) as queue:
        provider_server.plan(Behaviour(), poisoned_reply, Behaviour())
        env = _worker_env(provider_server, queue)
        env.update(EVAL_CELL_SOFT_TIME_LIMIT="30", EVAL_REGEX_BUDGET_SECONDS="600")
        with run_worker(queue=queue, pool="prefork", **env) as worker:
            owner = make_user("owner")
            evaluations = [_start(owner, 1)]
            _wait(
                lambda: _ended(evaluations[:1]),
                "the first evaluation's cell to end",
                state=lambda: _cells_state(evaluations),
            )
            poisoned = _start(owner, 1, graders=[{"type": "regex", "pattern": r"^(\w|\w\w)*$"}])
            evaluations += [poisoned, _start(owner, 1)]
            _wait(
                lambda: _ended(evaluations),
                "every evaluation's cell to end",
                timeout=180,
                state=lambda: _cells_state(evaluations),
            )
            # A cell is closed a moment before its task returns (it sends the account's next
            # cell first): the worker answers that it holds no task once that one has returned.
            _wait(lambda: _idle(worker.name), "the worker to hold no task", timeout=30)
            with app.connection_for_read() as connection:
                waiting = connection.default_channel.client.llen(queue)
    (cell,) = EvalCell.objects.filter(evaluation=poisoned).select_related("run")
    assert cell.status == "error"
    assert "time limit (30 s)" in cell.error
    assert cell.grade_attempts == 1  # stopped while grading; acknowledged, never handed over again
    assert cell.run.status == "done"  # the call had ended; the grading was what ran over
    assert Evaluation.objects.get(pk=poisoned.pk).status == "done"
    # The worker was not poisoned: the evaluation queued after it was graded.
    (after,) = EvalCell.objects.filter(evaluation=evaluations[2])
    assert (after.status, after.passed) == ("graded", True)
    assert waiting == 0


def _ended(evaluations: list[Evaluation]) -> bool:
    return not EvalCell.objects.filter(
        evaluation__in=evaluations, status__in=("queued", "running")
    ).exists()


def _idle(name: str) -> bool:
    """Whether the worker `name` answers that it is executing nothing."""
    active = app.control.inspect(destination=[name], timeout=2).active() or {}
    return active.get(name) == []


def _cells_state(evaluations: list[Evaluation]) -> list[tuple]:
    """Each cell's evaluation, status, hand-off, grading starts and run status (a timeout's
    report: a cell `running` with its run done is still being graded)."""
    cells = EvalCell.objects.filter(evaluation__in=evaluations).order_by("pk")
    return list(
        cells.values_list("evaluation_id", "status", "sent_at", "grade_attempts", "run__status")
    )
