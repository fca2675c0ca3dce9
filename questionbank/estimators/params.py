"""Parsing and validating estimator inputs from a query string.

One table of parameters per estimator; every bad input raises `EstimateInputError` naming the
field, so the API answers 400 and the page shows the message beside that field.
"""

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from common.exceptions import DomainError


class EstimateInputError(DomainError):
    """A missing, non-numeric, non-finite, non-positive or out-of-range estimator input."""


@dataclass(frozen=True)
class Param:
    name: str
    label: str
    unit: str
    minimum: float
    maximum: float
    integer: bool = False
    required: bool = True
    # Strict lower bound (value must be > minimum) unless `inclusive_minimum`.
    inclusive_minimum: bool = False
    help: str = ""

    def openapi_schema(self) -> dict[str, Any]:
        """The range `param_parse` accepts, as an OpenAPI 3.0 schema for the query parameter."""
        schema: dict[str, Any] = {
            "type": "integer" if self.integer else "number",
            "minimum": self.minimum,
            "maximum": self.maximum,
        }
        if not self.inclusive_minimum:
            schema["exclusiveMinimum"] = True
        return schema

    def describe_range(self) -> str:
        low = "≥" if self.inclusive_minimum else ">"
        return f"{low} {_number(self.minimum)} and ≤ {_number(self.maximum)}"


def amount(
    name: str, label: str, unit: str, maximum: float, *, minimum: float = 0.001, **options: Any
) -> Param:
    """A measured quantity from `minimum` (inclusive) to `maximum`."""
    return Param(name, label, unit, minimum, maximum, inclusive_minimum=True, **options)


def count(name: str, label: str, unit: str, maximum: int, **options: Any) -> Param:
    """A whole number above zero, up to `maximum`."""
    return Param(name, label, unit, 0, maximum, integer=True, **options)


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(value)


# Longest text accepted for one number; anything longer is not a number a person typed.
MAX_INPUT_LENGTH = 32


def param_parse(param: Param, raw: str | None) -> float | int | None:
    """One input, parsed and checked. None for an absent optional input."""
    if raw is None or raw.strip() == "":
        if param.required:
            raise EstimateInputError(f"{param.name}: this input is required.", field=param.name)
        return None
    text = raw.strip().replace(",", "").replace("_", "")
    if len(text) > MAX_INPUT_LENGTH:
        raise EstimateInputError(f"{param.name}: not a number.", field=param.name)
    try:
        value = float(text)
    except ValueError:
        raise EstimateInputError(f"{param.name}: not a number.", field=param.name) from None
    if not math.isfinite(value):
        raise EstimateInputError(f"{param.name}: must be a finite number.", field=param.name)
    if param.integer and not value.is_integer():
        raise EstimateInputError(f"{param.name}: must be a whole number.", field=param.name)
    zero_allowed = param.inclusive_minimum and param.minimum <= 0
    if value < 0 or (value == 0 and not zero_allowed):
        word = "must not be negative" if zero_allowed else "must be positive"
        raise EstimateInputError(f"{param.name}: {word}.", field=param.name)
    too_low = value < param.minimum if param.inclusive_minimum else value <= param.minimum
    if too_low or value > param.maximum:
        raise EstimateInputError(
            f"{param.name}: must be {param.describe_range()}.", field=param.name
        )
    return int(value) if param.integer else value


def params_parse(
    params: tuple[Param, ...], query: Mapping[str, str]
) -> dict[str, float | int | None]:
    """Every input of one estimator, in table order; the first bad one raises."""
    return {param.name: param_parse(param, query.get(param.name)) for param in params}
