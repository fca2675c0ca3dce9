"""`manage.py eval_run`: the CI gate exits 0 at or above the bar, 3 below it, 1 on bad input."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from evals.services import testsets
from playground.models import Role
from playground.services import label_move
from tests.factories import make_user
from tests.playground.factories import make_prompt

pytestmark = pytest.mark.django_db


@pytest.fixture
def gate(settings):
    settings.RUN_ECHO_DELAY_MS = 0
    owner = make_user("owner")
    prompt, version = make_prompt(owner, provider="echo", model="echo-1")
    label_move(actor=owner, prompt=prompt, name="production", version=version, expected=None)
    rows = [
        {"variables": {"design": "a cache"}, "expected": "cache"},
        {"variables": {"design": "a queue"}, "expected": "queue"},
        {"variables": {"design": "a CDN"}, "expected": "nothing-here"},
    ]
    revision = testsets.testset_create(
        actor=owner,
        prompt=prompt,
        role=Role.OWNER,
        name="t",
        rows=testsets.testset_rows_parse(rows),
    )
    return prompt, revision.testset_id


def _run(prompt, testset, bar: float) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command(
            "eval_run",
            f"--prompt={prompt.pk}",
            "--label=production",
            f"--testset={testset}",
            f"--min-pass-rate={bar}",
            stdout=out,
            stderr=err,
        )
    except SystemExit as exit_:
        return int(exit_.code or 0), out.getvalue() + err.getvalue()
    return 0, out.getvalue()


def test_the_gate_passes_at_or_above_the_bar(gate):
    prompt, testset = gate
    code, output = _run(prompt, testset, 0.6)
    assert code == 0
    assert "pass rate 0.667 (2 passed, 1 failed, 0 errors)" in output


def test_the_gate_fails_below_the_bar(gate):
    prompt, testset = gate
    code, output = _run(prompt, testset, 0.9)
    assert code == 3
    assert "Below the bar of 0.9: 1 column(s)." in output


def test_bad_arguments_are_command_errors(gate):
    prompt, testset = gate
    with pytest.raises(CommandError, match="no label"):
        call_command("eval_run", f"--prompt={prompt.pk}", "--label=nope", f"--testset={testset}")
    with pytest.raises(CommandError, match="not JSON"):
        call_command("eval_run", f"--prompt={prompt.pk}", f"--testset={testset}", "--grader={x")
    with pytest.raises(CommandError, match="No prompt"):
        call_command("eval_run", "--prompt=999999", f"--testset={testset}")
