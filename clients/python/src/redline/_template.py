"""Template variables: `{{name}}` placeholders in the system prompt and message contents.

Matching, filling and refusing follow the Redline server exactly, so a compiled prompt is what
a run of the version sends and what its export shows:

- a placeholder is `{{name}}` with optional whitespace inside the braces (Python's Unicode
  whitespace, spelled out so it cannot drift);
- filling is one pass: a value that itself contains `{{other}}` is not expanded again;
- a name the version does not declare is refused; a value that is missing or empty falls back
  to the version's default, and a placeholder left without a non-empty value is refused — by
  `compile`, as by a run. Request bodies follow the export, which sends a placeholder the
  version does not declare literally (and still refuses a declared one left empty).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from ._errors import VariableError

_SPACE = r"[\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*"
PLACEHOLDER = re.compile(r"\{\{" + _SPACE + r"([A-Za-z_][A-Za-z0-9_]*)" + _SPACE + r"\}\}")


def placeholders(texts: Iterable[str]) -> list[str]:
    """Variable names used in `texts`, in order of first use."""
    seen: dict[str, None] = {}
    for text in texts:
        for match in PLACEHOLDER.finditer(text):
            seen.setdefault(match.group(1), None)
    return list(seen)


def values_resolve(
    *,
    declared: Mapping[str, str],
    used: Iterable[str],
    given: Mapping[str, object],
    declared_only: bool = False,
) -> dict[str, str]:
    """The values to fill with: the declared defaults, overridden by non-empty `given` values.

    Raises VariableError naming the variable: one the version does not declare, a value that is
    not a string or holds NUL, or a placeholder that ends up with no non-empty value (a run's
    rule). `declared_only` is an export's rule: a placeholder the version does not declare is
    left in the text, braces and all, and only declared ones need a value.
    """
    for name, value in given.items():
        if name not in declared:
            known = ", ".join(sorted(declared)) or "none"
            raise VariableError(
                f"variables.{name}: this version declares no such variable (declared: {known}).",
                variable=name,
            )
        if not isinstance(value, str):
            raise VariableError(
                f"variables.{name}: must be a string, not {type(value).__name__}.", variable=name
            )
        if "\x00" in value:
            raise VariableError(f"variables.{name}: must not contain NUL.", variable=name)
    values = {**declared, **{name: str(value) for name, value in given.items() if value}}
    for name in used:
        if declared_only and name not in declared:
            continue
        if not values.get(name):
            state = "is empty" if name in values else "has no value"
            raise VariableError(
                f"variables.{name}: {{{{{name}}}}} is used in the prompt but {state}; pass a"
                " non-empty value or declare a non-empty default.",
                variable=name,
            )
    return values


def fill(text: str, values: Mapping[str, str]) -> str:
    """`text` with each `{{name}}` replaced by `values[name]`, in one pass; others stay."""

    def value(match: re.Match[str]) -> str:
        return values.get(match.group(1), match.group(0))

    return PLACEHOLDER.sub(value, text)
