"""What the estimator panel on a question page shows: a page builder over the registry.

The panel renders from query parameters alone, so the first render (presets), every htmx
refresh and the no-script form submission all go through `estimate_page_build`.
"""

import math
from collections.abc import Mapping
from dataclasses import dataclass

from django.utils.safestring import SafeString, mark_safe

from .formatting import number_text
from .params import EstimateInputError, Param
from .registry import Estimator, Figure, PracticeTarget, practice_check


@dataclass(frozen=True)
class FieldView:
    param: Param
    value: str
    source: str  # "pool", "practice" or "" (no preset)
    error: str


@dataclass(frozen=True)
class PracticeView:
    target: PracticeTarget
    guess: str
    expected: str
    checked: bool
    correct: bool
    error: str


@dataclass(frozen=True)
class EstimatePage:
    slug: str
    title: str
    fields: tuple[FieldView, ...]
    error: str
    error_field: str
    figures: tuple[Figure, ...]
    notes: tuple[str, ...]
    plot: SafeString
    practice: bool
    checked: bool  # practice answers were submitted and the results are shown
    practice_items: tuple[PracticeView, ...]
    practice_message: str

    @property
    def hidden(self) -> bool:
        """Practice mode hides every figure until the user has given an answer."""
        return self.practice and not self.checked


def _format(value: float, exact: bool) -> str:
    return f"{value:,.0f}" if exact else number_text(value)


def _guess_parse(raw: str) -> float | None:
    try:
        value = float(raw.replace(",", "").strip())
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def estimate_page_build(
    *, estimator: Estimator, query: Mapping[str, str], use_presets: bool
) -> EstimatePage:
    """The panel for these inputs; `use_presets` fills the pool's (and our) starting numbers."""
    raw = {
        param.name: (
            query.get(param.name, "")
            if not use_presets
            else (estimator.presets[param.name].value if param.name in estimator.presets else "")
        )
        for param in estimator.params
    }
    error_field, error = "", ""
    figures: tuple[Figure, ...] = ()
    notes: tuple[str, ...] = ()
    plot = mark_safe("")  # noqa: S308 - empty
    answers: dict[str, float] = {}
    try:
        values = estimator.parse(raw)
    except EstimateInputError as exc:
        error_field, error = exc.field or "", exc.message
    else:
        outcome = estimator.run(values)
        figures, notes, answers = outcome.figures, outcome.notes, outcome.answers
    practice = query.get("practice") == "1" and not use_presets
    submitted = query.get("check") == "1"
    items = []
    for target in estimator.targets:
        guess = query.get(f"answer_{target.key}", "").strip()[:40] if practice else ""
        parsed = _guess_parse(guess) if guess else None
        expected = answers.get(target.key)
        items.append(
            PracticeView(
                target=target,
                guess=guess,
                expected="" if expected is None else _format(expected, target.exact),
                checked=submitted and parsed is not None and expected is not None,
                correct=(
                    parsed is not None
                    and expected is not None
                    and practice_check(target, expected, parsed)
                ),
                error="Type a number." if guess and parsed is None else "",
            )
        )
    given = [item for item in items if item.checked]
    checked = practice and submitted and bool(given) and not error
    message = ""
    if practice and submitted and not given and not error:
        message = "Type at least one answer, then check."
    elif checked:
        right = sum(item.correct for item in given)
        message = f"{right} of {len(given)} right."
    if not (practice and not checked) and not error:
        plot = mark_safe(estimator.plot(values, outcome))  # noqa: S308 - built with escaped text
    fields = tuple(
        FieldView(
            param=param,
            value=raw[param.name],
            source=estimator.presets[param.name].source if param.name in estimator.presets else "",
            error=error if param.name == error_field else "",
        )
        for param in estimator.params
    )
    return EstimatePage(
        slug=estimator.slug,
        title=estimator.title,
        fields=fields,
        error=error,
        error_field=error_field,
        figures=figures,
        notes=notes,
        plot=plot,
        practice=practice,
        checked=checked,
        practice_items=tuple(items),
        practice_message=message,
    )
