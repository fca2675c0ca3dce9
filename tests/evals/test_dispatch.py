"""Evaluation cells on the broker share their account's slice (issue #31): at most
EVAL_USER_CELLS_IN_FLIGHT of an account's cells are on the workers' queue at once, the next
sent as each ends, so another account's run is taken after at most that many cells however
many one account queued; and cells accepted while the broker is down are handed over by the
reaper once it is back, never lost. Needs the services (Redis as the broker)."""

from __future__ import annotations

import pytest

from config.celery import app
from evals.models import EvalCell, Evaluation
from evals.services import testsets
from evals.services.evaluations import evaluation_create, evaluations_reap
from playground.models import Role, Run
from tests.factories import api_client_for, make_user
from tests.playground.factories import make_prompt
from tests.playground.runkit.broker import (
    broker_down,
    fresh_queue,
    publishing,
    queue_pop,
)

pytestmark = pytest.mark.django_db(transaction=True)

ECHO = {"provider": "echo", "model": "echo-1"}
CELL_TASK = "evals.cell_execute"
RUN_TASK = "playground.run_execute"


def _evaluation(owner, *, rows: int, repeat: int = 1) -> Evaluation:
    prompt, version = make_prompt(owner, **ECHO)
    revision = testsets.testset_create(
        actor=owner,
        prompt=prompt,
        role=Role.OWNER,
        name="flood",
        rows=testsets.testset_rows_parse([{"expected": f"e{i}"} for i in range(rows)]),
    )
    return evaluation_create(
        actor=owner,
        prompt=prompt,
        role=Role.OWNER,
        revision=revision,
        versions=[version.pk],
        graders=[{"type": "contains", "value": "Hello"}],
        repeat=repeat,
    )


def _work(message) -> None:
    """What a worker does with a message: the task, in this process."""
    app.loader.import_default_modules()  # the tasks, as a worker registers them
    app.tasks[message.task].apply(args=message.args).get()


def test_another_accounts_run_is_taken_after_at_most_the_floods_share(settings):
    settings.RUN_ECHO_DELAY_MS = 0
    settings.EVAL_USER_CELLS_IN_FLIGHT = 2
    flood, other = make_user(), make_user()
    with publishing(settings, fresh_queue("fair-cells")) as queue:
        evaluation = _evaluation(flood, rows=1000, repeat=5)
        assert evaluation.cells_total == 5000
        handed = EvalCell.objects.filter(evaluation=evaluation, sent_at__isnull=False)
        assert handed.count() == 2
        _, version = make_prompt(other, **ECHO)
        answer = api_client_for(other).post(f"/api/v1/versions/{version.pk}/runs/", {})
        assert answer.status_code == 201, answer.content
        run_id = answer.json()["id"]
        # A worker takes the messages in order: the flood's two cells, then the other
        # account's run, although 4,998 of the flood's cells were queued before it.
        taken: list[tuple[str, int]] = []
        while (RUN_TASK, run_id) not in taken:
            message = queue_pop(queue)
            assert message is not None, f"the run's message never came; took {taken}"
            assert len(taken) < 3, f"the run waited behind {taken}"
            taken.append((message.task, message.args[0]))
            _work(message)
        assert [task for task, _ in taken] == [CELL_TASK, CELL_TASK, RUN_TASK]
        assert Run.objects.get(pk=run_id).status == "done"
        # each cell that ended sent the next one: still two of the flood's on the queue
        assert EvalCell.objects.filter(evaluation=evaluation, status="graded").count() == 2
        assert handed.filter(status="queued").count() == 2
        following = [queue_pop(queue), queue_pop(queue)]
        assert [m.task for m in following if m] == [CELL_TASK, CELL_TASK]
        assert queue_pop(queue, timeout=0.2) is None


def test_an_accounts_share_spans_its_evaluations(settings):
    settings.EVAL_USER_CELLS_IN_FLIGHT = 3
    owner = make_user()
    with publishing(settings, fresh_queue("fair-share")):
        first = _evaluation(owner, rows=2)
        second = _evaluation(owner, rows=5)
        sent = EvalCell.objects.filter(sent_at__isnull=False)
        assert sent.filter(evaluation=first).count() == 2
        assert sent.filter(evaluation=second).count() == 1


def test_a_cells_message_leaves_its_time_limits_to_the_worker_that_takes_it(settings):
    """The worker applies its own EVAL_CELL_SOFT_TIME_LIMIT to a cell: the message carries no
    limits, even from a process where the cell task is registered (with this process's
    settings), whose limits Celery would otherwise copy into the message, where they win."""
    app.loader.import_default_modules()
    registered = app.tasks[CELL_TASK]
    assert (registered.time_limit, registered.soft_time_limit) != (None, None)
    owner = make_user()
    with publishing(settings, fresh_queue("cell-limits")) as queue:
        evaluation = _evaluation(owner, rows=1)
        message = queue_pop(queue)
    assert message is not None
    assert (message.task, message.args) == (
        CELL_TASK,
        [EvalCell.objects.get(evaluation=evaluation).pk, owner.pk],
    )
    assert message.time_limits == [None, None]


def test_cells_accepted_while_the_broker_is_down_are_sent_by_the_reaper(settings):
    settings.EVAL_USER_CELLS_IN_FLIGHT = 2
    owner = make_user()
    with publishing(settings, fresh_queue("fair-down")) as queue:
        with broker_down():
            evaluation = _evaluation(owner, rows=3)
        # accepted, nothing handed over, nothing on the queue
        assert Evaluation.objects.filter(pk=evaluation.pk, status="queued").exists()
        assert not EvalCell.objects.filter(sent_at__isnull=False).exists()
        assert queue_pop(queue, timeout=0.2) is None
        # the broker is back: the reaper hands over the account's share
        evaluations_reap()
        assert EvalCell.objects.filter(sent_at__isnull=False).count() == 2
        messages = [queue_pop(queue), queue_pop(queue)]
        assert sorted(m.args[0] for m in messages if m) == sorted(
            EvalCell.objects.filter(sent_at__isnull=False).values_list("pk", flat=True)
        )


def test_an_evaluation_posted_while_the_broker_is_down_is_accepted(settings):
    """Not a 500 with the evaluation half-told: 201, and the reaper sends it later."""
    owner = make_user()
    prompt, version = make_prompt(owner, **ECHO)
    revision = testsets.testset_create(
        actor=owner,
        prompt=prompt,
        role=Role.OWNER,
        name="t",
        rows=testsets.testset_rows_parse([{"expected": "x"}]),
    )
    with publishing(settings, fresh_queue("fair-api")), broker_down():
        answer = api_client_for(owner).post(
            f"/api/v1/prompts/{prompt.pk}/evals/",
            {
                "testset": revision.testset_id,
                "versions": [version.pk],
                "graders": [{"type": "contains", "value": "x"}],
            },
            format="json",
        )
    assert answer.status_code == 201, answer.content
    assert EvalCell.objects.filter(sent_at__isnull=True, status="queued").count() == 1
