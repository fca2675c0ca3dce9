"""What evaluations put beside versions in the playground's version tree: the pass rate of each
version's newest finished evaluation, linking to it (registered in `EvalsConfig.ready`)."""

from django.urls import reverse

from playground.version_tree.badges import VersionBadge

from .selectors import version_pass_rates

# A pass rate's colour in the tree: green from GOOD_PERCENT, amber from WARN_PERCENT, red below.
GOOD_PERCENT = 90
WARN_PERCENT = 50


def pass_rate_badges(prompt_id: int, version_ids: list[int]) -> dict[int, VersionBadge]:
    """Two queries for any number of versions. Whoever sees the tree may read the prompt's
    evaluations (viewers do, evals.selectors), so no further check is needed here."""
    badges = {}
    for version_id, rate in version_pass_rates(
        prompt_id=prompt_id, version_ids=version_ids
    ).items():
        percent = rate.passed * 100 // rate.graded  # 100% only when every cell passed
        tone = "good" if percent >= GOOD_PERCENT else "warn" if percent >= WARN_PERCENT else "bad"
        badges[version_id] = VersionBadge(
            text=f"{percent}% pass",
            url=reverse("evals:evaluation", args=[rate.evaluation_id]),
            title=(
                f"Evaluation #{rate.evaluation_id}: {rate.passed} of {rate.graded} graded"
                " cells passed"
            ),
            tone=tone,
        )
    return badges
