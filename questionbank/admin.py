from django.contrib import admin

from .models import DepthArea, FollowUp, Question, WorkedNumber


class DepthAreaInline(admin.StackedInline):
    model = DepthArea
    extra = 0


class FollowUpInline(admin.StackedInline):
    model = FollowUp
    extra = 0


class WorkedNumberInline(admin.StackedInline):
    model = WorkedNumber
    extra = 0


@admin.register(Question)
class QuestionAdmin(admin.ModelAdmin):
    list_display = ("title", "slug", "kind", "duration_minutes", "position")
    list_filter = ("kind",)
    search_fields = ("title", "slug", "prompt")
    inlines = [DepthAreaInline, FollowUpInline, WorkedNumberInline]
