"""Abstract model bases shared by the feature apps (no tables of their own)."""

from django.db import models

from common.exceptions import DomainError


class Immutable(DomainError):
    """A write-once row was asked to change or disappear."""


class WriteOnceQuerySet(models.QuerySet):
    """Rows written once: bulk update and delete are not available."""

    def update(self, **kwargs):
        raise self.model.immutable_error(f"{self.model.__name__} rows are immutable.")

    def delete(self):
        raise self.model.immutable_error(f"{self.model.__name__} rows are immutable.")


class WriteOnceModel(models.Model):
    """Immutable rows: `save()` only inserts, `delete()` refuses (like Wagtail's Revision).

    Subclasses name the error they raise in `immutable_error` (a subclass of Immutable).
    """

    immutable_error: type[Immutable] = Immutable

    objects = WriteOnceQuerySet.as_manager()

    class Meta:
        abstract = True

    def save(self, *args, **kwargs) -> None:
        if not self._state.adding:
            raise self.immutable_error(f"{type(self).__name__} rows are immutable.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise self.immutable_error(f"{type(self).__name__} rows are immutable.")
