"""Abstract model bases shared by the feature apps (no tables of their own)."""

from typing import Any, NoReturn, TypeVar, cast

from django.db import models

from common.exceptions import DomainError


class Immutable(DomainError):
    """A write-once row was asked to change or disappear."""


_M = TypeVar("_M", bound=models.Model)


class WriteOnceQuerySet(models.QuerySet[_M]):
    """Rows written once: bulk update and delete are not available."""

    def update(self, **kwargs: Any) -> NoReturn:
        raise self._write_once().immutable_error(f"{self.model.__name__} rows are immutable.")

    def delete(self) -> NoReturn:
        raise self._write_once().immutable_error(f"{self.model.__name__} rows are immutable.")

    def _write_once(self) -> "type[WriteOnceModel]":
        # The queryset of WriteOnceModel only. (A TypeVar bound to it, a forward reference,
        # crashes mypy's semantic analysis with the Django plugin.)
        return cast("type[WriteOnceModel]", self.model)


class WriteOnceModel(models.Model):
    """Immutable rows: `save()` only inserts, `delete()` refuses (like Wagtail's Revision).

    Subclasses name the error they raise in `immutable_error` (a subclass of Immutable).
    """

    immutable_error: type[Immutable] = Immutable

    objects = WriteOnceQuerySet.as_manager()

    class Meta:
        abstract = True

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise self.immutable_error(f"{type(self).__name__} rows are immutable.")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise self.immutable_error(f"{type(self).__name__} rows are immutable.")
