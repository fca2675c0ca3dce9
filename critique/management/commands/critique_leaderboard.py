"""`manage.py critique_leaderboard`: score the starter critique prompt (or a version of it) on
the six practice documents with the answer-key grader, and print the score per document.

    manage.py critique_leaderboard --model fixture/fixture-1 --model anthropic/claude-sonnet-4-6

Acts as the system account that owns the starter. Without a broker the cells run in this
process; with one, workers run them and this command waits (at most `--timeout` seconds). The
result is the starter's row on the practice page's leaderboard.
"""

from __future__ import annotations

import time
from typing import Any

from celery import current_app
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from common.exceptions import DomainError
from critique.selectors import leaderboard_for_user, practice_columns
from critique.services import (
    practice_evaluation_create,
    practice_testset_ensure,
    starter_version_ensure,
)
from evals.models import Evaluation
from evals.selectors import evaluation_results, evaluation_wait
from evals.services.evaluations import evaluation_dispatch
from playground.models import Role


class Command(BaseCommand):
    help = "Score the starter critique prompt on the six practice documents; print the scores."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--model", action="append", default=[], help="provider/model, repeatable"
        )
        parser.add_argument("--timeout", type=float, default=600.0)

    def handle(self, *args: Any, **options: Any) -> None:
        models = []
        for item in options["model"] or ["fixture/fixture-1"]:
            provider, _, model = item.partition("/")
            models.append({"provider": provider, "model": model})
        version = starter_version_ensure()
        owner = version.prompt.owner
        settings.EVAL_EAGER_MODE = "inline"  # without a broker, run the cells right here
        started = time.monotonic()
        try:
            revision = practice_testset_ensure(
                actor=owner,
                prompt=version.prompt,
                role=Role.OWNER,
                docs=practice_columns(user=owner),
            )
            evaluation = practice_evaluation_create(
                actor=owner,
                prompt=version.prompt,
                role=Role.OWNER,
                revision=revision,
                versions=[version.pk],
                models=models,
            )
        except DomainError as error:
            raise CommandError(error.message) from None
        if current_app.conf.task_always_eager:
            evaluation_dispatch(evaluation_id=evaluation.pk)
        self._wait(evaluation, options["timeout"])
        self._report(evaluation, owner, time.monotonic() - started)

    def _wait(self, evaluation: Evaluation, timeout: float) -> None:
        if not evaluation_wait(evaluation=evaluation, timeout=timeout):
            raise CommandError(
                f"Evaluation {evaluation.pk} did not finish in {timeout:g} s"
                f" ({evaluation.cells_done}/{evaluation.cells_total} cells)."
            )

    def _report(self, evaluation: Evaluation, owner: Any, seconds: float) -> None:
        self.stdout.write(
            f"evaluation {evaluation.pk}: {evaluation.status} in {seconds:.1f} s"
            f" ({evaluation.cells_total} cells)"
        )
        # reader=None: the operator's own command reads every reason.
        cells, _ = evaluation_results(
            evaluation=evaluation, reader=None, limit=evaluation.cells_total
        )
        for cell in cells:
            reason = next((g["reason"] for g in cell.grades if g["type"] == "answer-key"), "")
            score = "—" if cell.score is None else f"{cell.score:.2f}"
            self.stdout.write(f"  {cell.provider}/{cell.model}  {score}  {reason or cell.error}")
        board = leaderboard_for_user(user=owner)
        for row in board.rows:
            if row.evaluation_id == evaluation.pk:
                mean = "—" if row.mean is None else f"{row.mean:.3f}"
                self.stdout.write(f"mean {row.provider}/{row.model} v{row.version_number}: {mean}")
        if evaluation.status != Evaluation.Status.DONE:
            raise SystemExit(3)
