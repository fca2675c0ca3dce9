"""The gate: the one function that decides whether a change request may be merged
(docs/design.md, Prompt change review).

`gate_evaluate` reads the label's `GateRule` (or the default: one approval) and returns every
rule with whether it holds and a sentence saying why. The merge service refuses unless all
hold; the request page and API show the same list; the playground's label guard names the
rules through `gate_describe_for_label` (registered in `ChangesConfig.ready`).
"""

from dataclasses import dataclass

from evals.selectors import evaluations_of_version
from reviews.models import Annotation, Review, Verdict

from .models import ChangeRequest, GateRule, RequestRevision


@dataclass(frozen=True)
class RuleResult:
    key: str  # "approvals", "reviewers", "no-blockers", "evaluation"
    holds: bool
    message: str

    def as_json(self) -> dict[str, object]:
        return {"rule": self.key, "holds": self.holds, "message": self.message}


@dataclass(frozen=True)
class GateResult:
    rules: tuple[RuleResult, ...]

    @property
    def holds(self) -> bool:
        return all(rule.holds for rule in self.rules)

    @property
    def failing(self) -> tuple[RuleResult, ...]:
        return tuple(rule for rule in self.rules if not rule.holds)

    def failing_message(self) -> str:
        return "Cannot merge: " + " ".join(rule.message for rule in self.failing)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _approvers(request: ChangeRequest, current: RequestRevision) -> set[int]:
    """Accounts (not the request's author) whose latest submitted verdict on the request is
    `approve`, given on the current revision: a push asks everyone again."""
    latest: dict[int, tuple[str, int]] = {}
    for reviewer_id, verdict, revision_id in (
        Review.objects.filter(revision__doc_id=request.doc_id, status=Review.Status.SUBMITTED)
        .exclude(reviewer_id=request.author_id)
        .order_by("submitted_at", "id")
        .values_list("reviewer_id", "verdict", "revision_id")
    ):
        latest[reviewer_id] = (verdict, revision_id)
    return {
        reviewer
        for reviewer, (verdict, revision_id) in latest.items()
        if verdict == Verdict.APPROVE and revision_id == current.revision_id
    }


def _evaluation_rule(rule: GateRule, request: ChangeRequest) -> RuleResult:
    assert rule.eval_testset is not None and rule.eval_threshold is not None
    version = request.to_version
    name = rule.eval_testset.name
    wanted = f"{rule.eval_threshold:.0%}"
    runs = evaluations_of_version(
        prompt_id=request.prompt_id, version_id=version.pk, testset_id=rule.eval_testset_id
    )
    required = list(rule.eval_graders)
    runs = [e for e in runs if all(spec in e.graders for spec in required)]
    graded = [e for e in runs if e.pass_rate is not None]
    passing = [e for e in graded if e.pass_rate is not None and e.pass_rate >= rule.eval_threshold]
    if passing:
        best = passing[0]
        return RuleResult(
            "evaluation",
            True,
            f"Evaluation {best.evaluation_id} ({name}) passed v{version.number} at "
            f"{best.pass_rate:.0%} (at least {wanted} required).",
        )
    if graded:
        best_rate = max(e.pass_rate or 0.0 for e in graded)
        return RuleResult(
            "evaluation",
            False,
            f"Evaluation: v{version.number} passed {name} at {best_rate:.0%} at best; "
            f"{wanted} is required.",
        )
    graders = " with the required graders" if required else ""
    return RuleResult(
        "evaluation",
        False,
        f"Evaluation: no finished evaluation of test set {name}{graders} has run "
        f"v{version.number} (at least {wanted} pass required).",
    )


def gate_evaluate(*, request: ChangeRequest) -> GateResult:
    """Every rule of the request's label, on the request as it is now (a handful of queries).

    Without gate rules on the label, one approval is required.
    """
    rule = GateRule.objects.filter(label_id=request.label_id).select_related("eval_testset").first()
    current = RequestRevision.objects.filter(request=request).order_by("-revision__number").first()
    assert current is not None  # a request is opened with its first revision
    approvers = _approvers(request, current)
    needed = rule.required_approvals if rule is not None else 1
    results = [
        RuleResult(
            "approvals",
            len(approvers) >= needed,
            f"Approvals: {len(approvers)} of {needed} required on the current revision "
            f"(v{request.to_version.number}).",
        )
    ]
    if rule is not None:
        named = list(rule.required_reviewers.order_by("username"))
        if named:
            missing = [u.get_username() for u in named if u.pk not in approvers]
            results.append(
                RuleResult(
                    "reviewers",
                    not missing,
                    "Required reviewers: "
                    + (
                        f"{', '.join(missing)} {'has' if len(missing) == 1 else 'have'} not "
                        "approved the current revision."
                        if missing
                        else "all approved."
                    ),
                )
            )
        if rule.no_blockers:
            blockers = Annotation.objects.filter(
                review__revision__doc_id=request.doc_id,
                review__status=Review.Status.SUBMITTED,
                severity=Annotation.Severity.BLOCKER,
                status=Annotation.Status.OPEN,
            ).count()
            results.append(
                RuleResult(
                    "no-blockers",
                    blockers == 0,
                    "Blockers: none open."
                    if blockers == 0
                    else f"Blockers: {_plural(blockers, 'blocker annotation')} still open.",
                )
            )
        if rule.eval_testset_id is not None:
            results.append(_evaluation_rule(rule, request))
    return GateResult(rules=tuple(results))


def rule_describe(rule: GateRule) -> str:
    """The rules in one sentence (what a refused direct move names)."""
    parts = [_plural(rule.required_approvals, "approval")]
    named = [u.get_username() for u in rule.required_reviewers.order_by("username")]
    if named:
        parts.append(f"approval from {', '.join(named)}")
    if rule.no_blockers:
        parts.append("no open blocker")
    if rule.eval_testset is not None and rule.eval_threshold is not None:
        parts.append(
            f"an evaluation of test set {rule.eval_testset.name} passing the promoted version "
            f"at {rule.eval_threshold:.0%} or more"
        )
    return "Request rules: " + "; ".join(parts) + "."


def gate_describe_for_label(label_id: int) -> str | None:
    rule = GateRule.objects.filter(label_id=label_id).select_related("eval_testset").first()
    return rule_describe(rule) if rule is not None else None
