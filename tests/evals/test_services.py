"""Evaluation cells: at most one provider call each, whatever is repeated or killed; the judge;
the reaper; the provider cap (evals/services/cells.py)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from evals.models import EvalCell, Evaluation
from evals.selectors import evaluation_summary, version_pass_rates
from evals.services import testsets
from evals.services.cells import DEFERRED, _cell_run, cell_execute, cell_grade, cell_time_out
from evals.services.evaluations import (
    evaluation_cancel,
    evaluation_create,
    evaluations_reap,
    evaluations_redispatch_stalled,
)
from playground.models import Role, Run
from playground.services import prompt_version_create
from tests.factories import make_user
from tests.playground.exportkit.providers import Behaviour
from tests.playground.factories import content, make_prompt

pytestmark = pytest.mark.django_db

ROWS = [{"variables": {"design": "a cache"}, "expected": "cache"}]


@pytest.fixture
def owner():
    return make_user("owner")


def _evaluation(owner, prompt, versions, graders, rows=ROWS, capture=None, **kw):
    # (the module, not its names: pytest would collect functions named test…)
    revision = testsets.testset_create(
        actor=owner,
        prompt=prompt,
        role=Role.OWNER,
        name="t",
        rows=testsets.testset_rows_parse(rows),
    )
    return evaluation_create(
        actor=owner,
        prompt=prompt,
        role=Role.OWNER,
        revision=revision,
        versions=[v.pk for v in versions],
        graders=graders,
        **kw,
    )


def test_a_repeated_cell_task_calls_the_provider_once(owner, providers):
    prompt, version = make_prompt(owner)  # anthropic, through the loopback server
    evaluation = _evaluation(owner, prompt, [version], [{"type": "contains", "value": "fake"}])
    cell = EvalCell.objects.get(evaluation=evaluation)
    assert cell_execute(cell_id=cell.pk) == "graded"
    assert cell_execute(cell_id=cell.pk) == "graded"
    assert len(providers.requests) == 1
    cell.refresh_from_db()
    assert cell.passed is True
    assert Evaluation.objects.get(pk=evaluation.pk).status == "done"


def test_a_cell_whose_worker_died_mid_run_is_not_sent_again(owner, providers, settings):
    """A redelivered cell task finds the cell running and its run running with a stale
    heartbeat (the worker was killed after sending): the run fails, the cell is an error, the
    evaluation finishes, and the provider saw one request."""
    prompt, version = make_prompt(owner)
    evaluation = _evaluation(owner, prompt, [version], [{"type": "json-valid"}])
    cell = EvalCell.objects.get(evaluation=evaluation)
    # What a killed worker leaves: cell claimed, run created and claimed, one call sent.
    from evals.services.cells import _cell_run

    EvalCell.objects.filter(pk=cell.pk).update(status="running")
    run_id = _cell_run(
        EvalCell.objects.select_related("evaluation", "target", "row").get(pk=cell.pk)
    )
    stale = timezone.now() - timedelta(seconds=settings.RUN_STALE_SECONDS + 5)
    Run.objects.filter(pk=run_id).update(status="running", started_at=stale, heartbeat_at=stale)
    assert cell_execute(cell_id=cell.pk) == "error"
    assert providers.requests == []
    assert Run.objects.get(pk=run_id).status == "failed"
    assert Evaluation.objects.get(pk=evaluation.pk).status == "done"
    assert evaluation_summary(evaluation=evaluation)[0].errors == 1


def test_the_reaper_grades_a_cell_whose_run_finished_unseen(owner, inline_runs):
    prompt, version = make_prompt(owner, provider="echo", model="echo-1")
    evaluation = _evaluation(owner, prompt, [version], [{"type": "contains", "value": "Echo"}])
    cell = EvalCell.objects.select_related("evaluation", "target", "row").get(evaluation=evaluation)
    from evals.services.cells import _cell_run
    from playground.runs.services import run_execute

    EvalCell.objects.filter(pk=cell.pk).update(status="running")
    run_execute(run_id=_cell_run(cell))  # the run finished; the worker died before grading
    assert evaluations_reap() == 1
    cell.refresh_from_db()
    assert (cell.status, cell.passed) == ("graded", True)
    assert evaluations_reap() == 0


def test_a_provider_at_its_cap_defers_the_cell(owner, inline_runs, settings):
    settings.EVAL_PROVIDER_CONCURRENCY = {"echo": 1}
    prompt, version = make_prompt(owner, provider="echo", model="echo-1")
    evaluation = _evaluation(owner, prompt, [version], [{"type": "json-valid"}], rows=ROWS * 2)
    first, second = EvalCell.objects.filter(evaluation=evaluation).order_by("pk")
    EvalCell.objects.filter(pk=first.pk).update(status="running")  # another worker has it
    assert cell_execute(cell_id=second.pk) == DEFERRED
    assert EvalCell.objects.get(pk=second.pk).status == "queued"
    assert not Run.objects.filter(eval_cell=second).exists()


def test_llm_judge_runs_the_judges_prompt_version_and_reads_its_verdict(owner, providers):
    prompt, version = make_prompt(owner)
    judge_prompt, judge = make_prompt(
        owner,
        title="Judge",
        system="Score the answer against the rubric. Reply with JSON.",
        messages=[{"role": "user", "content": "Rubric: {{rubric}}\nAnswer: {{output}}"}],
        variables={"rubric": "", "output": ""},
    )
    providers.plan(Behaviour(), Behaviour(text='{"score": 0.8, "reason": "Names the risk."}'))
    evaluation = _evaluation(
        owner,
        prompt,
        [version],
        [{"type": "llm-judge", "rubric": "Names a concrete risk", "judge_version": judge.pk}],
    )
    cell = EvalCell.objects.get(evaluation=evaluation)
    assert cell_execute(cell_id=cell.pk) == "graded"
    cell.refresh_from_db()
    assert cell.grades == [
        {"type": "llm-judge", "passed": True, "score": 0.8, "reason": "Names the risk."}
    ]
    assert len(providers.requests) == 2
    judged = providers.requests[1].body["messages"][0]["content"]
    assert "Rubric: Names a concrete risk" in judged
    assert "Answer: Hello from the fake provider" in judged
    # The judge's call is a run of the judge's version, kept like any other run.
    assert Run.objects.filter(version=judge).count() == 1
    assert cell_execute(cell_id=cell.pk) == "graded"
    assert len(providers.requests) == 2


def test_a_judge_version_the_author_cannot_read_is_refused(owner, inline_runs):
    other = make_user("other")
    _, judge = make_prompt(other, title="Their judge")
    prompt, version = make_prompt(owner, provider="echo", model="echo-1")
    from evals.exceptions import EvalInvalid

    with pytest.raises(EvalInvalid) as caught:
        _evaluation(
            owner,
            prompt,
            [version],
            [{"type": "llm-judge", "rubric": "r", "judge_version": judge.pk}],
        )
    assert caught.value.field == "graders.0.judge_version"


def test_pass_rates_for_the_tree_come_from_each_versions_latest_finished_evaluation(
    owner, inline_runs, settings, django_capture_on_commit_callbacks
):
    settings.EVAL_EAGER_MODE = "inline"
    prompt, v1 = make_prompt(owner, provider="echo", model="echo-1")
    v2 = prompt_version_create(
        actor=owner,
        prompt=prompt,
        parent=v1,
        content=content(provider="echo", model="echo-1", system="Other."),
    ).version
    rows = [{"variables": {"design": "a cache"}}, {"variables": {"design": "a queue"}}]
    with django_capture_on_commit_callbacks(execute=True):
        _evaluation(owner, prompt, [v1, v2], [{"type": "contains", "value": "cache"}], rows=rows)
    rates = version_pass_rates(prompt_id=prompt.pk, version_ids=[v1.pk, v2.pk])
    assert {v: (r.rate, r.passed, r.graded) for v, r in rates.items()} == {
        v1.pk: (0.5, 1, 2),
        v2.pk: (0.5, 1, 2),
    }
    with django_capture_on_commit_callbacks(execute=True):
        _evaluation(owner, prompt, [v2], [{"type": "contains", "value": "Echo"}], rows=rows)
    rates = version_pass_rates(prompt_id=prompt.pk, version_ids=[v1.pk, v2.pk])
    assert {v: r.rate for v, r in rates.items()} == {v1.pk: 0.5, v2.pk: 1.0}
    assert rates[v1.pk].evaluation_id != rates[v2.pk].evaluation_id


def test_too_many_running_evaluations_is_a_429(owner, settings):
    settings.EVALS_ACTIVE_PER_USER = 1
    prompt, version = make_prompt(owner, provider="echo", model="echo-1")
    _evaluation(owner, prompt, [version], [{"type": "json-valid"}])  # stays queued: no commit
    from common.exceptions import RateLimited

    with pytest.raises(RateLimited):
        _evaluation(owner, prompt, [version], [{"type": "json-valid"}])


def test_a_fair_run_queue_turn_never_takes_a_cells_run(owner, inline_runs):
    """A cell's run is executed by its cell task; a run-queue message's turn must not pick it
    (it would leave the cell task nothing to run), nor count it against interactive runs."""
    from playground.runs.fair import run_claim_next

    prompt, version = make_prompt(owner, provider="echo", model="echo-1")
    evaluation = _evaluation(owner, prompt, [version], [{"type": "json-valid"}])
    cell = EvalCell.objects.select_related("evaluation", "target", "row").get(evaluation=evaluation)
    from evals.services.cells import _cell_run

    run_id = _cell_run(cell)
    assert Run.objects.get(pk=run_id).status == "queued"
    assert run_claim_next() is None
    assert Run.objects.get(pk=run_id).status == "queued"


def test_a_stalled_evaluation_is_handed_to_workers_again(owner, inline_runs, settings):
    """Cells whose messages a killed worker held (queued, or claimed with their run still
    queued) are handed over again once the evaluation has made no progress for
    EVAL_STALL_SECONDS; a fresh one is left alone."""
    settings.EVAL_EAGER_MODE = "inline"
    settings.EVAL_STALL_SECONDS = 60
    prompt, version = make_prompt(owner, provider="echo", model="echo-1")
    rows = [{"variables": {"design": f"design {i}"}} for i in range(3)]
    # Never dispatched: the test's transaction does not commit.
    stalled = _evaluation(owner, prompt, [version], [{"type": "contains", "value": "Echo"}], rows)
    fresh = _evaluation(owner, prompt, [version], [{"type": "json-valid"}], rows)
    first = EvalCell.objects.filter(evaluation=stalled).order_by("pk").first()
    from evals.services.cells import _cell_run

    EvalCell.objects.filter(pk=first.pk).update(status="running")
    _cell_run(EvalCell.objects.select_related("evaluation", "target", "row").get(pk=first.pk))
    old = timezone.now() - timedelta(seconds=61)
    Evaluation.objects.filter(pk=stalled.pk).update(dispatched_at=old)
    assert evaluations_redispatch_stalled() == [stalled.pk]
    stalled.refresh_from_db()
    assert (stalled.status, stalled.cells_done) == ("done", 3)
    assert set(EvalCell.objects.filter(evaluation=stalled).values_list("status", flat=True)) == {
        "graded"
    }
    assert Run.objects.filter(eval_cell__evaluation=stalled).count() == 3
    assert Evaluation.objects.get(pk=fresh.pk).cells_done == 0
    assert evaluations_redispatch_stalled() == []


def _echo_judge(judge_owner):
    """A judge on the echo provider whose reply carries a verdict (echo quotes the user turn)."""
    return make_prompt(
        judge_owner,
        title="Judge",
        provider="echo",
        model="echo-1",
        messages=[{"role": "user", "content": '{"score": 1, "reason": "fine"}'}],
        variables={},
    )


def test_a_revoked_judge_grant_stops_the_judge_calls(owner, inline_runs):
    """The judge's visibility is read as each cell runs: after the grant is revoked, the cells
    still to run end `error` ("judge no longer visible") and no judge run is made."""
    from playground.services import grant_revoke, grant_set

    judge_owner = make_user("judge-owner")
    judge_prompt, judge = _echo_judge(judge_owner)
    grant_set(actor=judge_owner, prompt=judge_prompt, username=owner.username, role="viewer")
    prompt, version = make_prompt(owner, provider="echo", model="echo-1")
    rows = [{"variables": {"design": f"design {n}"}} for n in range(3)]
    evaluation = _evaluation(
        owner,
        prompt,
        [version],
        [{"type": "llm-judge", "rubric": "r", "judge_version": judge.pk}],
        rows=rows,
    )
    first, *rest = EvalCell.objects.filter(evaluation=evaluation).order_by("pk")
    assert cell_execute(cell_id=first.pk) == "graded"
    assert Run.objects.filter(version=judge).count() == 1

    grant_revoke(actor=judge_owner, prompt=judge_prompt, username=owner.username)
    for cell in rest:
        assert cell_execute(cell_id=cell.pk) == "error"
        cell.refresh_from_db()
        assert cell.error == "judge no longer visible"
    assert Run.objects.filter(version=judge).count() == 1  # no judge call after the revocation
    evaluation.refresh_from_db()
    assert (evaluation.status, evaluation.cells_done) == ("done", 3)


def test_a_judge_revoked_while_a_cell_runs_is_not_called(owner, inline_runs):
    """Revoked between a cell's own run and its grading: the cell errors before the judge."""
    from playground.services import grant_revoke, grant_set

    judge_owner = make_user("judge-owner")
    judge_prompt, judge = _echo_judge(judge_owner)
    grant_set(actor=judge_owner, prompt=judge_prompt, username=owner.username, role="viewer")
    prompt, version = make_prompt(owner, provider="echo", model="echo-1")
    evaluation = _evaluation(
        owner, prompt, [version], [{"type": "llm-judge", "rubric": "r", "judge_version": judge.pk}]
    )
    cell = EvalCell.objects.get(evaluation=evaluation)
    EvalCell.objects.filter(pk=cell.pk).update(status="running")
    run = _cell_run(EvalCell.objects.select_related("target__version").get(pk=cell.pk))
    from playground.runs.services import run_execute

    run_execute(run_id=run)
    grant_revoke(actor=judge_owner, prompt=judge_prompt, username=owner.username)
    assert cell_grade(cell_id=cell.pk) == "error"
    assert EvalCell.objects.get(pk=cell.pk).error == "judge no longer visible"
    assert not Run.objects.filter(version=judge).exists()


def test_an_author_who_lost_the_prompt_runs_no_more_cells(owner, inline_runs):
    from playground.services import grant_revoke, grant_set

    editor = make_user("editor")
    prompt, version = make_prompt(owner, provider="echo", model="echo-1")
    grant_set(actor=owner, prompt=prompt, username=editor.username, role="editor")
    revision = testsets.testset_create(
        actor=editor,
        prompt=prompt,
        role=Role.EDITOR,
        name="t",
        rows=testsets.testset_rows_parse(ROWS),
    )
    evaluation = evaluation_create(
        actor=editor,
        prompt=prompt,
        role=Role.EDITOR,
        revision=revision,
        versions=[version.pk],
        graders=[{"type": "json-valid"}],
    )
    grant_revoke(actor=owner, prompt=prompt, username=editor.username)
    cell = EvalCell.objects.get(evaluation=evaluation)
    assert cell_execute(cell_id=cell.pk) == "error"
    cell.refresh_from_db()
    assert (cell.error, cell.run_id) == ("test set no longer visible", None)


def _running_cell_run(owner):
    """An evaluation whose one cell a worker has claimed, with its run running."""
    from evals.services.cells import _cell_run
    from playground.runs.services import run_claim

    prompt, version = make_prompt(owner, provider="echo", model="echo-1")
    evaluation = _evaluation(owner, prompt, [version], [{"type": "json-valid"}])
    cell = EvalCell.objects.get(evaluation=evaluation)
    EvalCell.objects.filter(pk=cell.pk).update(status="running")
    run_id = _cell_run(
        EvalCell.objects.select_related("evaluation", "target", "row").get(pk=cell.pk)
    )
    assert run_claim(run_id=run_id)
    return evaluation, cell, run_id


@pytest.fixture
def published(settings, monkeypatch):
    """What the run notification channel publishes (playground/runs/notify.py), recorded in
    process: the embedded default has no Redis; the services pass hears it below."""
    from playground.runs import notify

    settings.REDIS_URL = settings.REDIS_URL or "redis://127.0.0.1:1/0"  # the channel is on
    sent = []
    monkeypatch.setattr(
        notify, "_publish", lambda channel, message: sent.append((channel, message))
    )
    return sent


def test_cancelling_an_evaluation_tells_its_runs_stream_readers(
    owner, published, django_capture_on_commit_callbacks
):
    """Cells' runs are cancelled as run_cancel cancels one: each run's stream readers hear the
    new status once the cancel commits, not only at their next poll (issue #35)."""
    from playground.runs.notify import run_channel

    evaluation, _, run_id = _running_cell_run(owner)
    with django_capture_on_commit_callbacks(execute=True):
        cancelled = evaluation_cancel(actor=owner, evaluation=evaluation)
    assert cancelled.status == "cancelled"
    assert Run.objects.get(pk=run_id).status == "cancelled"
    assert published == [(run_channel(run_id), {"s": "cancelled"})]


def test_a_cell_past_its_time_limit_tells_its_runs_stream_readers(
    owner, published, django_capture_on_commit_callbacks
):
    from playground.runs.notify import run_channel

    _, cell, run_id = _running_cell_run(owner)
    with django_capture_on_commit_callbacks(execute=True):
        assert cell_time_out(cell_id=cell.pk) == "error"
    assert Run.objects.get(pk=run_id).status == "failed"
    assert published == [(run_channel(run_id), {"s": "failed"})]


def test_a_stream_reader_of_a_cancelled_evaluations_run_hears_it_through_redis(
    owner, settings, django_capture_on_commit_callbacks
):
    """The same, end to end on the services pass: a reader joined to the run's channel (as a
    stream under the ASGI server joins it) gets the status notice from Redis."""
    if not settings.REDIS_URL:
        pytest.skip("needs REDIS_URL (the services pass)")
    import asyncio
    import threading

    from playground.runs import notify

    evaluation, _, run_id = _running_cell_run(owner)
    channel = notify.run_channel(run_id)
    joined = threading.Event()
    heard: list[object] = []

    async def reader() -> None:
        inbox = await notify.run_join(channel=channel)
        assert inbox is not None
        joined.set()
        heard.append(await inbox.next(timeout=10))
        await notify.run_leave(inbox)

    thread = threading.Thread(target=lambda: asyncio.run(reader()))
    thread.start()
    assert joined.wait(10)
    with django_capture_on_commit_callbacks(execute=True):
        evaluation_cancel(actor=owner, evaluation=evaluation)
    thread.join(15)
    assert heard == [notify.Notice(status="cancelled")]
