"""The sources an evaluation reads through its author's access: its test set and its judges'
prompt versions (docs/evals.md, Graders). Checked when the evaluation is created and again
before each cell runs, so a revoked grant stops the next cell.
"""

from __future__ import annotations

from django.contrib.auth.models import User

from playground.models import PromptVersion

from ..exceptions import EvalInvalid, SourceHidden
from ..graders import GraderSpec, grader_spec_load
from ..models import Evaluation

JUDGE_HIDDEN = "judge no longer visible"
TESTSET_HIDDEN = "test set no longer visible"


def judge_version_visible(*, actor: User, spec: GraderSpec) -> PromptVersion:
    """The llm-judge's version if `actor` may still read it; SourceHidden otherwise."""
    from playground.selectors import version_get_for_user

    from ..exceptions import NotFound

    try:
        return version_get_for_user(user=actor, version_id=spec.options["judge_version"])
    except NotFound:
        raise SourceHidden(JUDGE_HIDDEN) from None


def sources_visible_check(*, evaluation: Evaluation) -> None:
    """SourceHidden unless the evaluation's author may still read its prompt (and so the test
    set and versions) and every judge: checked as each cell runs, so a revoked grant stops
    the cells still to run."""
    from playground.selectors import prompt_readable_by

    # The prompt as read with the cell (cell_execute joins it): when the author owns it, as
    # is usual, no query is needed; a grant is read now otherwise.
    if not prompt_readable_by(user_id=evaluation.created_by_id, prompt=evaluation.prompt):
        raise SourceHidden(TESTSET_HIDDEN)
    for body in evaluation.graders:
        spec = grader_spec_load(body)
        if spec.type == "llm-judge":
            judge_version_visible(actor=evaluation.created_by, spec=spec)


def judges_check(*, actor: User, specs: list[GraderSpec], where: str = "graders") -> None:
    """Every llm-judge's prompt version is one `actor` may read (a 400 naming it otherwise)."""
    from playground.selectors import version_get_for_user

    from ..exceptions import NotFound

    for index, spec in enumerate(specs):
        if spec.type != "llm-judge":
            continue
        try:
            version_get_for_user(user=actor, version_id=spec.options["judge_version"])
        except NotFound:
            raise EvalInvalid(
                f"{where}.{index}.judge_version: no such prompt version visible to you.",
                field=f"{where}.{index}.judge_version",
            ) from None
