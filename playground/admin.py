from django.contrib import admin

from common.admin import ReadOnlyAdmin

from .models import Label, LabelMove, Prompt, PromptVersion


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
