from django.contrib import admin

from .models import Label, LabelMove, Prompt, PromptVersion


class ReadOnlyAdmin(admin.ModelAdmin):
    """Immutable rows: viewable in the admin, never added, changed or deleted there."""

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Prompt)
class PromptAdmin(admin.ModelAdmin):
    list_display = ("title", "owner", "question", "created_at", "archived_at")
    list_select_related = ("owner", "question")
    search_fields = ("title",)
    raw_id_fields = ("owner",)


@admin.register(PromptVersion)
class PromptVersionAdmin(ReadOnlyAdmin):
    list_display = ("prompt", "number", "author", "created_at", "message", "content_hash")
    list_select_related = ("prompt", "author")
    search_fields = ("prompt__title", "message", "content_hash")


@admin.register(Label)
class LabelAdmin(ReadOnlyAdmin):
    list_display = ("prompt", "name", "version", "protected", "updated_at")


@admin.register(LabelMove)
class LabelMoveAdmin(ReadOnlyAdmin):
    list_display = ("label", "from_version", "to_version", "actor", "moved_at")
