from django.contrib import admin
from django.http import HttpRequest

from .models import ApiToken


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("key_prefix", "user", "created_at", "last_used_at", "expires_at")
    readonly_fields = ("user", "key_hash", "key_prefix", "created_at", "last_used_at", "expires_at")

    def has_add_permission(
        self, request: HttpRequest
    ) -> bool:  # keys are created through the API only
        return False
