"""The work of one evaluation cell, pinned (issue #32, "Faster cells"): a cell executed and
graded on the echo provider is at most CELL_STATEMENTS statements in at most two transactions
(its claim and its close), whatever it is next to, so a change that adds a round trip to every
cell shows here. `bench/evals.py` measures the time; `--profile` lists the statements."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from config.celery import app
from evals.dispatch import NextCells
from evals.models import EvalCell, Evaluation
from evals.services import testsets
from evals.services.cells import _run_new, cell_execute
from evals.services.evaluations import evaluation_create
from playground.models import Role, Run
from tests.factories import make_user
from tests.playground.factories import make_prompt

# Cells stay queued: the evaluation's hand-off waits for a commit these tests never make.
pytestmark = pytest.mark.django_db

# Read the cell with its evaluation's status, the prompt's owner, its row's expected text,
# graders and threshold and the row's declared values (one statement; what never changes of the
# evaluation — graders, columns, versions — the worker keeps between cells); insert its run
# already claimed; claim the cell; read the run's status before the call; the run's first text; the
# run's end; close the cell; count it (one statement with the close on PostgreSQL outside a
# transaction; here, inside the test's, two).
CELL_STATEMENTS = 8
# On the broker the close also hands over the account's next cells (the fair feed), in the
# close's transaction: lock the account, read the next cells with the count of those handed
# over, mark them sent. On PostgreSQL the close's statement takes the lock and the pick is one
# statement with its marking: one more than the close.
FEED_STATEMENTS = 3
PREPARED = "(a prepared statement)"
CONTROL = ("BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE SAVEPOINT")


def _evaluation(rows: int = 3) -> Evaluation:
    owner = make_user("owner")
    prompt, version = make_prompt(owner, provider="echo", model="echo-1")
    revision = testsets.testset_create(
        actor=owner,
        prompt=prompt,
        role=Role.OWNER,
        name="t",
        rows=testsets.testset_rows_parse(
            [{"variables": {"design": f"design {i}"}, "expected": "design"} for i in range(rows)]
        ),
    )
    return evaluation_create(
        actor=owner,
        prompt=prompt,
        role=Role.OWNER,
        revision=revision,
        versions=[version.pk],
        graders=[{"type": "contains"}, {"type": "max-output-tokens", "limit": 1000}],
    )


def _cells(evaluation: Evaluation) -> list[int]:
    return list(EvalCell.objects.filter(evaluation=evaluation).values_list("pk", flat=True))


def _sql(captured: CaptureQueriesContext) -> list[str]:
    # A statement psycopg has prepared (common.rawsql, from its third run on a connection) is
    # logged by Django without its text.
    return [query["sql"] or PREPARED for query in captured.captured_queries]


def _measured(cell_id: int) -> tuple[list[str], int]:
    with CaptureQueriesContext(connection) as captured:
        assert cell_execute(cell_id=cell_id) == "graded"
    sql = _sql(captured)
    statements = [s for s in sql if not s.startswith(CONTROL)]
    transactions = sum(1 for s in sql if s.startswith(("BEGIN", "SAVEPOINT")))
    return statements, transactions


def test_a_cell_is_at_most_eight_statements_in_two_transactions(settings):
    settings.RUN_ECHO_DELAY_MS = 0
    evaluation = _evaluation()
    first, middle, last = _cells(evaluation)
    cell_execute(cell_id=first)  # the evaluation moves to running with it
    statements, transactions = _measured(middle)
    listing = "\n".join(s[:160] for s in statements)
    assert len(statements) <= CELL_STATEMENTS, listing
    assert transactions <= 2, listing
    # No webhook, no listener's query per cell: the end is announced once, after the commit
    # that finishes the evaluation.
    assert not any("webhooks_" in s for s in statements), listing
    # The last cell also finishes the evaluation and reads its prompt for the announcement.
    statements, transactions = _measured(last)
    assert len(statements) <= CELL_STATEMENTS + 2, "\n".join(s[:160] for s in statements)
    evaluation.refresh_from_db()
    assert (evaluation.status, evaluation.cells_done) == ("done", 3)
    cells = EvalCell.objects.filter(evaluation=evaluation)
    assert {(c.status, c.passed, c.grade_attempts) for c in cells} == {("graded", True, 1)}
    runs = Run.objects.filter(eval_cell__evaluation=evaluation)
    assert {(r.status, r.deliveries, r.on_run_queue) for r in runs} == {("done", 1, False)}
    assert all(r.started_at and r.first_token_at and r.finished_at for r in runs)


def test_a_queued_cell_whose_run_exists_already_runs_it_once(settings):
    """A queued cell has no run (the run commits with the claim), so its run is inserted
    without a look-up; a cell left with one (by an older version of the code) still finds it
    through the key's unique constraint, and the call is made once."""
    settings.RUN_ECHO_DELAY_MS = 0
    evaluation = _evaluation(rows=1)
    (cell_id,) = _cells(evaluation)
    cell = EvalCell.objects.select_related("evaluation__created_by", "target__version", "row").get(
        pk=cell_id
    )
    earlier = _run_new(cell)  # queued, and not set on the cell
    assert cell_execute(cell_id=cell_id) == "graded"
    cell.refresh_from_db()
    assert cell.run_id == earlier
    assert Run.objects.filter(idempotency_key=f"eval-cell-{cell_id}").count() == 1
    assert Run.objects.get(pk=earlier).status == "done"
    assert Evaluation.objects.get(pk=evaluation.pk).status == "done"


def test_an_author_with_a_grant_pays_one_read_for_it(settings):
    """The access check reads nothing for an author who owns the prompt; an author with a
    grant has it read for every cell (a revoked one stops the next cell, test_services)."""
    from playground.services import grant_set

    settings.RUN_ECHO_DELAY_MS = 0
    owner, editor = make_user("owner"), make_user("editor")
    prompt, version = make_prompt(owner, provider="echo", model="echo-1")
    revision = testsets.testset_create(
        actor=owner,
        prompt=prompt,
        role=Role.OWNER,
        name="t",
        rows=testsets.testset_rows_parse([{"variables": {"design": "d"}, "expected": "d"}]),
    )
    grant_set(actor=owner, prompt=prompt, username=editor.username, role="editor")
    evaluation = evaluation_create(
        actor=editor,
        prompt=prompt,
        role=Role.EDITOR,
        revision=revision,
        versions=[version.pk],
        graders=[{"type": "contains"}],
    )
    (cell_id,) = _cells(evaluation)
    statements, _ = _measured(cell_id)
    grants = [s for s in statements if "playground_accessgrant" in s]
    assert len(grants) == 1, "\n".join(s[:160] for s in statements)


def test_the_fair_feed_rides_in_the_cells_closing_transaction(
    settings, django_capture_on_commit_callbacks
):
    """On the broker, a cell's close picks the account's next cell and marks it sent in the
    same transaction (no third commit), and publishes it once that commits."""
    settings.RUN_ECHO_DELAY_MS = 0
    settings.EVAL_USER_CELLS_IN_FLIGHT = 1
    evaluation = _evaluation()
    first, middle, _ = _cells(evaluation)
    cell_execute(cell_id=first)
    EvalCell.objects.filter(pk=middle).update(sent_at=evaluation.created_at)  # its turn came
    feed = NextCells(user_id=evaluation.created_by_id)
    previous = app.conf.task_always_eager
    app.conf.task_always_eager = False
    try:
        with django_capture_on_commit_callbacks(execute=False) as published:
            with CaptureQueriesContext(connection) as captured:
                assert cell_execute(cell_id=middle, feed=feed) == "graded"
    finally:
        app.conf.task_always_eager = previous
    sql = _sql(captured)
    statements = [s for s in sql if not s.startswith(CONTROL)]
    listing = "\n".join(s[:160] for s in statements)
    assert len(statements) <= CELL_STATEMENTS + FEED_STATEMENTS, listing
    assert sum(1 for s in sql if s.startswith(("BEGIN", "SAVEPOINT"))) <= 2, listing
    if connection.vendor == "postgresql":
        # The close takes the account's lock in its own statement, and the pick is one
        # statement with its marking: the feed adds one statement to the cell's close.
        assert len(statements) <= CELL_STATEMENTS, listing
        assert not any(s.startswith('SELECT "auth_user"') for s in statements), listing
    # the last cell is now the account's one handed over; its message goes out on commit
    sent = EvalCell.objects.filter(evaluation=evaluation, sent_at__isnull=False, status="queued")
    assert list(sent.values_list("pk", flat=True)) == [_cells(evaluation)[2]]
    # The message and `done` wait for the commit (tests/evals/test_dispatch.py sees the message).
    assert not feed.done
    feeds = [f for f in published if f.__qualname__.startswith("cells_feed_in_close")]
    assert len(feeds) == 1


def test_a_grant_revoked_mid_evaluation_stops_the_next_cell(settings):
    """What a worker keeps of an evaluation between its cells (graders, columns, versions) holds
    no access: the prompt's owner is read with every cell and the grant checked again, so the
    cell after a revoke ends `error` without a run."""
    from playground.services import grant_revoke, grant_set

    settings.RUN_ECHO_DELAY_MS = 0
    owner, editor = make_user("owner"), make_user("editor")
    prompt, version = make_prompt(owner, provider="echo", model="echo-1")
    grant_set(actor=owner, prompt=prompt, username=editor.username, role="editor")
    revision = testsets.testset_create(
        actor=editor,
        prompt=prompt,
        role=Role.EDITOR,
        name="t",
        rows=testsets.testset_rows_parse(
            [{"variables": {"design": f"d {i}"}, "expected": "d"} for i in range(2)]
        ),
    )
    evaluation = evaluation_create(
        actor=editor,
        prompt=prompt,
        role=Role.EDITOR,
        revision=revision,
        versions=[version.pk],
        graders=[{"type": "contains"}],
    )
    first, second = _cells(evaluation)
    assert cell_execute(cell_id=first) == "graded"
    grant_revoke(actor=owner, prompt=prompt, username=editor.username)
    assert cell_execute(cell_id=second) == "error"
    cell = EvalCell.objects.get(pk=second)
    assert (cell.error, cell.run_id) == ("test set no longer visible", None)


def test_a_worker_never_serves_one_evaluations_graders_to_another(settings):
    """The worker's cache is keyed by the evaluation's id and creation time: an evaluation
    created later under the same id (SQLite may reuse an id after a rollback) is read afresh.
    Here the row is rewritten in place to stand in for it."""
    from datetime import timedelta

    settings.RUN_ECHO_DELAY_MS = 0
    evaluation = _evaluation(rows=2)
    first, second = _cells(evaluation)
    assert cell_execute(cell_id=first) == "graded"
    Evaluation.objects.filter(pk=evaluation.pk).update(
        graders=[{"type": "equals", "value": "never this"}],
        created_at=evaluation.created_at + timedelta(microseconds=1),
    )
    assert cell_execute(cell_id=second) == "graded"
    cell = EvalCell.objects.get(pk=second)
    assert (cell.passed, [g["type"] for g in cell.grades]) == (False, ["equals"])
