"""Answer keys and timers in the admin: read-only (keys come from the data files, timers from
the mock-review service)."""

from django.contrib import admin
from django.http import HttpRequest

from common.admin import ReadOnlyAdmin

from .models import AnswerKey, PlantedItem, TimedReview


class PlantedItemInline(admin.TabularInline):
    model = PlantedItem
    fields = ("position", "slug", "kind", "area", "severity", "quote")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: AnswerKey | None = None) -> bool:
        return False


@admin.register(AnswerKey)
class AnswerKeyAdmin(ReadOnlyAdmin):
    list_display = ("doc", "worst", "minutes", "updated_at")
    list_select_related = ("doc",)
    inlines = [PlantedItemInline]


@admin.register(TimedReview)
class TimedReviewAdmin(ReadOnlyAdmin):
    list_display = ("review", "started_at", "minutes_allowed")
    list_select_related = ("review", "review__revision")
