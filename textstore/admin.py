from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from .models import Blob


@admin.register(Blob)
class BlobAdmin(admin.ModelAdmin):
    """Read-only: blobs are immutable and referenced by other apps' rows."""

    list_display = (
        "sha256",
        "kind",
        "snapshot_level",
        "depth",
        "char_length",
        "stored_size",
        "created_at",
    )
    list_filter = ("kind", "codec")
    search_fields = ("sha256",)
    fields = (
        "sha256",
        "kind",
        "base",
        "anchor",
        "snapshot_level",
        "codec",
        "object_key",
        "chunk_chars",
        "stored_size",
        "char_length",
        "byte_length",
        "depth",
        "run",
        "delta_bytes",
        "snapshot_bytes",
        "created_at",
    )
    readonly_fields = fields
    raw_id_fields = ("base", "anchor")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Blob]:
        return super().get_queryset(request).defer("payload", "chunk_index")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Blob | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Blob | None = None) -> bool:
        return False
