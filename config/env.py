"""The one way settings read the environment: django-environ's `Env`, made strict.

Typed reads (`env.int`, `env.float`, `env.bool`, `env.list`, `env.str`, `env.pairs`) with a default
that stands when the variable is unset; for anything but `env.str` an empty value counts as
unset. A value that does not parse stops start-up with `ImproperlyConfigured` naming the
variable. Two of django-environ's conveniences are left out on purpose: a value starting with
`$` is taken as it is (not as the name of another variable: secrets may start with `$`), and a
float is parsed by `float()` (not stripped of every character but digits first).
"""

import builtins
from collections.abc import Callable
from typing import Any, TypeVar

import environ
from django.core.exceptions import ImproperlyConfigured

T = TypeVar("T")


class Env(environ.Env):  # type: ignore[misc]  # django-environ ships no types
    def get_value(
        self, var: builtins.str, cast: Any = None, default: Any = environ.Env.NOTSET, **_: Any
    ) -> Any:
        raw = self.ENVIRON.get(var)
        if raw is None or (raw == "" and cast is not builtins.str):
            if default is self.NOTSET:
                raise ImproperlyConfigured(f"Set the {var} environment variable")
            return default
        try:
            return self.parse_value(raw, cast)
        except ValueError as exc:
            kind = {builtins.int: "an integer", builtins.float: "a number"}.get(cast, "valid")
            raise ImproperlyConfigured(f"{var} must be {kind}, not {raw!r}") from exc

    @classmethod
    def parse_value(cls, value: builtins.str, cast: Any) -> Any:
        if cast is builtins.float:
            return builtins.float(value)
        if cast is builtins.list:  # comma-separated, each item stripped, empty items dropped
            return [item.strip() for item in value.split(",") if item.strip()]
        return super().parse_value(value, cast)

    # Typed reads: what mypy (and django-stubs' settings) see of each setting.
    def str(self, var: builtins.str, default: builtins.str = "") -> builtins.str:
        return builtins.str(self.get_value(var, cast=builtins.str, default=default))

    def int(self, var: builtins.str, default: builtins.int) -> builtins.int:
        return builtins.int(self.get_value(var, cast=builtins.int, default=default))

    def float(self, var: builtins.str, default: builtins.float) -> builtins.float:
        return builtins.float(self.get_value(var, cast=builtins.float, default=default))

    def bool(self, var: builtins.str, default: builtins.bool) -> builtins.bool:
        return builtins.bool(self.get_value(var, cast=builtins.bool, default=default))

    def list(
        self, var: builtins.str, default: builtins.list[builtins.str]
    ) -> builtins.list[builtins.str]:
        return builtins.list(self.get_value(var, cast=builtins.list, default=default))

    def pairs(
        self, var: builtins.str, default: builtins.str, cast: Callable[[builtins.str], T]
    ) -> dict[builtins.str, T]:
        """Space-separated `name=value` items ("echo=16 anthropic=4"), each value cast."""
        text = self.str(var, default)
        try:
            return {
                name: cast(value) for name, _, value in (i.partition("=") for i in text.split())
            }
        except ValueError as exc:
            raise ImproperlyConfigured(f"{var} must be name=value items, not {text!r}") from exc


env = Env()
