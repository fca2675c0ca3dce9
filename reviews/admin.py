from django.contrib import admin
from django.http import HttpRequest

from common.admin import ReadOnlyAdmin

from .models import (
    Annotation,
    AnnotationAnchor,
    BodyEdit,
    ChecklistItem,
    DesignDoc,
    DocRevision,
    InboxItem,
    Reply,
    Review,
)


class RevisionInline(admin.TabularInline):
    model = DocRevision
    fields = ("number", "author", "created_at", "message", "body_sha")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request: HttpRequest, obj: DesignDoc | None = None) -> bool:
        return False


@admin.register(DesignDoc)
class DesignDocAdmin(admin.ModelAdmin):
    list_display = ("title", "author", "question", "practice", "created_at")
    list_select_related = ("author", "question")
    list_filter = ("practice",)
    search_fields = ("title",)
    raw_id_fields = ("author",)
    inlines = [RevisionInline]


@admin.register(DocRevision)
class DocRevisionAdmin(ReadOnlyAdmin):
    """Revisions are immutable (written once, like Wagtail's Revision)."""

    list_display = ("doc", "number", "author", "created_at", "message", "body_sha")
    list_select_related = ("doc", "author")
    search_fields = ("doc__title", "message", "body_sha")


class ChecklistInline(admin.TabularInline):
    model = ChecklistItem
    fields = ("area", "status", "note")
    readonly_fields = ("area",)
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Review | None = None) -> bool:
        return False


@admin.register(Review)
class ReviewAdmin(admin.ModelAdmin):
    list_display = ("id", "revision", "reviewer", "status", "created_at", "submitted_at")
    list_select_related = ("revision", "revision__doc", "reviewer")
    list_filter = ("status",)
    raw_id_fields = ("revision", "reviewer")
    inlines = [ChecklistInline]


@admin.register(Annotation)
class AnnotationAdmin(admin.ModelAdmin):
    list_display = ("id", "review", "kind", "area", "severity", "rank", "status", "author")
    list_select_related = ("review", "author")
    list_filter = ("kind", "severity", "status", "area")
    raw_id_fields = ("review", "revision", "author", "status_changed_by")
    search_fields = ("body", "exact")


@admin.register(AnnotationAnchor)
class AnnotationAnchorAdmin(ReadOnlyAdmin):
    list_display = ("annotation", "revision", "status", "start", "end", "score", "manual")
    list_select_related = ("revision",)
    list_filter = ("status", "manual")


@admin.register(Reply)
class ReplyAdmin(ReadOnlyAdmin):
    """Replies are written and edited by their authors through the app (history kept)."""

    list_display = ("id", "annotation", "author", "created_at", "edited_at")
    list_select_related = ("author",)
    search_fields = ("body",)


@admin.register(BodyEdit)
class BodyEditAdmin(ReadOnlyAdmin):
    """The edit history is written once."""

    list_display = ("id", "annotation", "reply", "written_at", "replaced_at")


@admin.register(InboxItem)
class InboxItemAdmin(ReadOnlyAdmin):
    list_display = ("id", "recipient", "kind", "actor", "created_at", "read_at")
    list_select_related = ("recipient", "actor")
    list_filter = ("kind",)


from .practice import admin as practice_admin  # noqa: E402, F401  (answer keys, timers)
