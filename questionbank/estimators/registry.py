"""The three estimators the question pages and the API offer, keyed by question slug.

Each entry (one module per estimator) names its inputs (fixed API parameter names), the page's
preset values with where they come from (the question pool, or a practice suggestion of ours),
the formulas shown beside the results, the figures practice mode asks for, and how to run and
plot it.
"""

from . import batching_panel, checkpoint_panel, storage_panel
from .base import (
    Estimator,
    Figure,
    Outcome,
    PracticeTarget,
    Preset,
    practice_check,
)
from .formatting import seconds_human
from .storage import bytes_human

ESTIMATORS: dict[str, Estimator] = {
    estimator.slug: estimator
    for estimator in (
        batching_panel.ESTIMATOR,
        checkpoint_panel.ESTIMATOR,
        storage_panel.ESTIMATOR,
    )
}


def estimator_for(slug: str) -> Estimator | None:
    return ESTIMATORS.get(slug)


__all__ = [
    "ESTIMATORS",
    "Estimator",
    "Figure",
    "Outcome",
    "PracticeTarget",
    "Preset",
    "bytes_human",
    "estimator_for",
    "practice_check",
    "seconds_human",
]
