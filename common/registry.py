"""One way for an app to let other apps plug into it without importing them (issue #35).

A `Registry` is a named table from a key (a short string: an app's name, a grader type, a
provider's name) to an item, usually a callable. The app that owns it creates it at module level
and reads it; every entry — another app's, or the owner's own built-in ones — is added in an
`AppConfig.ready()` and nowhere else (`tests/common/test_registry.py` checks the source), through
the owner's keyword-only `<noun>_register` function. docs/architecture.md, Registries, lists them.

- A key registers once. A second registration under the same key is a mistake (two apps
  claiming one name, a typo copied) and raises `RegistryDuplicate` naming both, instead of the
  later one silently replacing the first.
- Reads go in key order, so what a page shows never depends on the order apps were loaded in.
- Registries are filled at start-up and only read afterwards, so reads take no lock. A test that
  needs a different entry uses `override`, which puts the registry back as it found it.
- `registries()` lists every registry alive, so a test can check each one's entries and its row
  in the docs without knowing which module holds it.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Generic, TypeVar

T = TypeVar("T")
U = TypeVar("U")


class RegistryDuplicate(ValueError):
    """A key registered twice in one registry."""


def _describe(item: object) -> str:
    module = getattr(item, "__module__", None)
    name = getattr(item, "__qualname__", None)
    return f"{module}.{name}" if module and name else repr(item)


class Registry(Mapping[str, T]):
    """Items by key, read in key order; a read-only `Mapping` apart from `register`."""

    def __init__(self, what: str) -> None:
        self.what = what  # what an entry is, for messages: "version badge provider"
        self._items: dict[str, T] = {}
        _alive[id(self)] = self

    def register(self, key: str, item: T) -> None:
        """Add `item` under `key`; `RegistryDuplicate` if the key is taken."""
        if key in self._items:
            raise RegistryDuplicate(
                f"{self.what} {key!r} is already registered ({_describe(self._items[key])}),"
                f" so {_describe(item)} cannot take its key: each key registers once, in an"
                " AppConfig.ready()."
            )
        self._items = dict(sorted({**self._items, key: item}.items()))

    def __getitem__(self, key: str) -> T:
        try:
            return self._items[key]
        except KeyError:
            known = ", ".join(self._items) or "none"
            raise KeyError(f"no {self.what} {key!r} (registered: {known})") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"<Registry of {self.what}: {', '.join(self._items) or 'empty'}>"

    def view(self, read: Callable[[T], U]) -> Mapping[str, U]:
        """A live read-only mapping of `read(item)` by key: for a caller that wants one field
        of each entry (the grade function of each grader type)."""
        return _View(self, read)

    @contextmanager
    def override(self, key: str, item: T) -> Iterator[None]:
        """For tests: `item` under `key` (replacing an entry already there) inside the block;
        afterwards the registry holds exactly what it held before."""
        saved = self._items
        self._items = dict(sorted({**saved, key: item}.items()))
        try:
            yield
        finally:
            self._items = saved


# Every registry by id, weakly: a registry a test made goes when the test drops it.
_alive: weakref.WeakValueDictionary[int, Registry[Any]] = weakref.WeakValueDictionary()


def registries() -> list[Registry[Any]]:
    """Every registry alive, by what its entries are."""
    return sorted(_alive.values(), key=lambda registry: registry.what)


class _View(Mapping[str, U], Generic[T, U]):
    def __init__(self, registry: Registry[T], read: Callable[[T], U]) -> None:
        self._registry = registry
        self._read = read

    def __getitem__(self, key: str) -> U:
        return self._read(self._registry[key])

    def __iter__(self) -> Iterator[str]:
        return iter(self._registry)

    def __len__(self) -> int:
        return len(self._registry)
