"""Grader types other apps add to evaluations (docs/evals.md, Graders; the answer-key grader
of critique/ registers through `grader_register` in its `AppConfig.ready()`).
"""

from __future__ import annotations

from collections.abc import Callable

from common.auth import Viewer

from ..graders import GRADER_TYPES, CellOutcome, Grade, GraderSpec
from ..selectors import grade_reason_guard_register

# Grader types other apps add (the answer-key grader of critique/): type → grade function, and
# type → spec parser (so the API and pages accept the type like a built-in one).
_extra_graders: dict[str, Callable[[GraderSpec, CellOutcome], Grade]] = {}
_extra_parsers: dict[str, Callable[..., GraderSpec]] = {}
_extra_labels: dict[str, str] = {}


def grader_register(
    *,
    type: str,  # noqa: A002
    grade_fn: Callable[[GraderSpec, CellOutcome], Grade],
    parse_fn: Callable[..., GraderSpec] | None = None,
    label: str = "",
    reason_visible: Callable[[Viewer, str], bool] | None = None,
) -> None:
    """Add a grader type (`label`: what the evaluation form says of it; it takes no options
    there). With `reason_visible(reader, secret)`, the type's reasons are shown only to readers
    it allows (given the grade's `secret`); everyone else sees the score alone."""
    if reason_visible is not None:
        grade_reason_guard_register(type=type, may_read=reason_visible)
    _extra_graders[type] = grade_fn
    if parse_fn is not None:
        _extra_parsers[type] = parse_fn
    _extra_labels[type] = label or type


def grader_types() -> tuple[str, ...]:
    """Every grader type an evaluation may name: the built-in ones, then those other apps
    registered."""
    return (*GRADER_TYPES, *(t for t in _extra_graders if t not in GRADER_TYPES))


def graders_registered() -> tuple[tuple[str, str], ...]:
    """The grader types other apps registered, with what the form says of each."""
    return tuple(_extra_labels.items())
