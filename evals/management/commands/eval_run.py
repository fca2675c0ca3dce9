"""`manage.py eval_run`: a CI gate. Evaluate a prompt's labelled version (or versions) on a test
set and exit non-zero when a column's pass rate is below `--min-pass-rate`.

    manage.py eval_run --prompt 12 --label production --testset 3 --min-pass-rate 0.9 \\
        --grader '{"type": "contains"}'

Acts as `--user` (default: the prompt's owner). Without a broker the cells run in this process;
with one, workers run them and this command waits (at most `--timeout` seconds).
"""

from __future__ import annotations

import json
from typing import Any

from celery import current_app
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from common.exceptions import DomainError
from evals.exceptions import NotFound
from evals.models import Evaluation
from evals.selectors import evaluation_summary, evaluation_wait, testset_get_for_user
from evals.services.evaluations import evaluation_create, evaluation_dispatch
from evals.versions import versions_from_labels
from playground.models import Prompt, Role
from playground.selectors import prompt_access_get_for_user

EXIT_BELOW_BAR = 3  # distinct from 1 (an error) so a CI script can tell them apart


class Command(BaseCommand):
    help = "Evaluate a prompt's labelled versions on a test set; exit 3 below the pass-rate bar."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--prompt", type=int, required=True)
        parser.add_argument("--label", action="append", default=[], help="repeatable")
        parser.add_argument(
            "--version-id", type=int, action="append", default=[], help="repeatable"
        )
        parser.add_argument("--testset", type=int, required=True)
        parser.add_argument("--grader", action="append", default=[], help="a grader as JSON")
        parser.add_argument("--min-pass-rate", type=float, default=1.0)
        parser.add_argument("--repeat", type=int, default=1)
        parser.add_argument("--user", default="", help="acting user (default: the owner)")
        parser.add_argument("--timeout", type=float, default=600.0)

    def handle(self, *args: Any, **options: Any) -> None:
        prompt = Prompt.objects.filter(pk=options["prompt"]).select_related("owner").first()
        if prompt is None:
            raise CommandError(f"No prompt {options['prompt']}.")
        actor = prompt.owner
        if options["user"]:
            named = get_user_model().objects.filter(username=options["user"]).first()
            if named is None:
                raise CommandError(f"No user {options['user']}.")
            actor = named
        try:
            graders = [json.loads(g) for g in options["grader"]] or [{"type": "contains"}]
        except ValueError as error:
            raise CommandError(f"--grader is not JSON: {error}") from None
        settings.EVAL_EAGER_MODE = "inline"  # without a broker, run the cells right here
        try:
            access = prompt_access_get_for_user(
                user=actor, prompt_id=prompt.pk, min_role=Role.VIEWER
            )
            testset = testset_get_for_user(user=actor, testset_id=options["testset"])
            versions = versions_from_labels(
                prompt=prompt, versions=options["version_id"], labels=options["label"]
            )
            evaluation = evaluation_create(
                actor=actor,
                prompt=prompt,
                role=access.role,
                revision=testset.revision,
                versions=versions,
                graders=graders,
                repeat=options["repeat"],
            )
        except DomainError as error:
            raise CommandError(error.message) from None
        except NotFound:
            raise CommandError("No such test set or prompt visible to that user.") from None
        if current_app.conf.task_always_eager:
            # No broker: run the cells here and now (a no-op for cells the on-commit hand-off
            # already ran), instead of waiting for a hand-off an enclosing transaction holds.
            evaluation_dispatch(evaluation_id=evaluation.pk)
        self._wait(evaluation, options["timeout"])
        self._report(evaluation, options["min_pass_rate"])

    def _wait(self, evaluation: Evaluation, timeout: float) -> None:
        if not evaluation_wait(evaluation=evaluation, timeout=timeout):
            raise CommandError(
                f"Evaluation {evaluation.pk} did not finish in {timeout:g} s"
                f" ({evaluation.cells_done}/{evaluation.cells_total} cells)."
            )

    def _report(self, evaluation: Evaluation, bar: float) -> None:
        below = []
        self.stdout.write(f"evaluation {evaluation.pk}: {evaluation.status}")
        for column in evaluation_summary(evaluation=evaluation):
            rate = column.pass_rate if column.pass_rate is not None else 0.0
            self.stdout.write(
                f"  v{column.version_number} {column.provider}/{column.model}: pass rate"
                f" {rate:.3f} ({column.passed} passed, {column.failed} failed,"
                f" {column.errors} errors)"
            )
            if rate < bar:
                below.append(column)
        if evaluation.status != Evaluation.Status.DONE or below:
            self.stderr.write(f"Below the bar of {bar:g}: {len(below)} column(s).")
            raise SystemExit(EXIT_BELOW_BAR)
        self.stdout.write(f"Every column passes the bar of {bar:g}.")
