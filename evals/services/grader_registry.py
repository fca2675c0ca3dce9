"""Grader types other apps add to evaluations (docs/evals.md, Graders; the answer-key grader
of critique/ registers through `grader_register` in its `AppConfig.ready()`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from common.auth import Viewer
from common.registry import Registry, RegistryDuplicate

from ..graders import GRADER_TYPES, CellOutcome, Grade, GraderSpec
from ..selectors import grade_reason_guard_register


# Grader types other apps add (the answer-key grader of critique/): type → grade function, and
# type → spec parser (so the API and pages accept the type like a built-in one).
@dataclass(frozen=True)
class RegisteredGrader:
    grade_fn: Callable[[GraderSpec, CellOutcome], Grade]
    parse_fn: Callable[..., GraderSpec]  # (spec, where) → GraderSpec, EvalInvalid if bad
    label: str  # what the evaluation form says of it


registered_graders: Registry[RegisteredGrader] = Registry("grader type")


# Live read-only views (type → grade function, type → spec parser): what evals.graders takes as
# `extra` beside its built-in types.
grade_fns = registered_graders.view(lambda grader: grader.grade_fn)
spec_parsers = registered_graders.view(lambda grader: grader.parse_fn)


def grader_register(
    *,
    type: str,  # noqa: A002
    grade_fn: Callable[[GraderSpec, CellOutcome], Grade],
    parse_fn: Callable[..., GraderSpec],
    label: str = "",
    reason_visible: Callable[[Viewer, str], bool] | None = None,
) -> None:
    """Add a grader type (`label`: what the evaluation form says of it; it takes no options
    there). With `reason_visible(reader, secret)`, the type's reasons are shown only to readers
    it allows (given the grade's `secret`); everyone else sees the score alone. A built-in
    type's name is refused like a registered one's."""
    if type in GRADER_TYPES:
        raise RegistryDuplicate(f"grader type {type!r} is built in (evals.graders).")
    registered_graders.register(
        type, RegisteredGrader(grade_fn=grade_fn, parse_fn=parse_fn, label=label or type)
    )
    if reason_visible is not None:
        grade_reason_guard_register(type=type, may_read=reason_visible)


def grader_types() -> tuple[str, ...]:
    """Every grader type an evaluation may name: the built-in ones, then those other apps
    registered."""
    return (*GRADER_TYPES, *registered_graders)


def graders_registered() -> tuple[tuple[str, str], ...]:
    """The grader types other apps registered, with what the form says of each."""
    return tuple((type_, grader.label) for type_, grader in registered_graders.items())
