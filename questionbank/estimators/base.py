"""What every estimator offers the page and the API: inputs, presets, figures, practice targets."""

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .batching import SIM_DEFAULT_SEED
from .params import Param, params_parse

Source = Literal["pool", "practice"]
Values = dict[str, float | int | None]


@dataclass(frozen=True)
class Preset:
    value: str
    source: Source
    # Where the pool writes the number in words ("two children" for a fan-out of 2).
    evidence: str = ""


@dataclass(frozen=True)
class Figure:
    key: str
    label: str
    value: str
    formula: str


@dataclass(frozen=True)
class PracticeTarget:
    key: str  # a key of the result's `answers`
    label: str
    unit: str
    exact: bool  # whole numbers must match; others within PRACTICE_TOLERANCE


PRACTICE_TOLERANCE = 0.02


@dataclass(frozen=True)
class Outcome:
    data: dict[str, Any]  # the API's JSON body
    figures: tuple[Figure, ...]  # what the page shows, each with its formula
    answers: dict[str, float]  # what practice mode checks
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Estimator:
    slug: str
    title: str
    params: tuple[Param, ...]
    presets: Mapping[str, Preset]
    targets: tuple[PracticeTarget, ...]
    run: Callable[[Values], Outcome]
    plot: Callable[[Values, Outcome], str]

    def parse(self, query: Mapping[str, str]) -> Values:
        return params_parse(self.params, query)


def optional_int(values: Values, key: str) -> int | None:
    value = values.get(key)
    return None if value is None else int(value)


# The simulations' random seed: the same seed gives the same run.
SEED_PARAM = Param(
    "seed", "Random seed", "", 0, 2**31 - 1, integer=True, required=False, inclusive_minimum=True
)


def seed_of(values: Values) -> int:
    seed = optional_int(values, "seed")
    return SIM_DEFAULT_SEED if seed is None else seed


def practice_check(target: PracticeTarget, expected: float, guess: float) -> bool:
    if target.exact:
        return math.isclose(guess, expected)
    return math.isclose(guess, expected, rel_tol=PRACTICE_TOLERANCE)
