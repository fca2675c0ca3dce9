"""Rebuild every stored text from storage and check it against its SHA-256 and bookkeeping."""

from collections.abc import Iterable
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from textstore.exceptions import BlobNotFound, ObjectStoreError, TextstoreIntegrityError
from textstore.models import Blob
from textstore.selectors import blob_orphans, blob_verify, object_orphans


class Command(BaseCommand):
    help = (
        "Rebuild every blob (or the given ones) from storage, bypassing the cache, and report "
        "any whose text does not match its SHA-256 or whose bookkeeping is inconsistent. "
        "Exits non-zero if any damage is found."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("sha", nargs="*", help="only these blobs (default: all)")

    def handle(self, *args: Any, **options: Any) -> None:
        shas: Iterable[str] = options["sha"] or (
            Blob.objects.order_by("depth", "sha256")
            .values_list("sha256", flat=True)
            .iterator(chunk_size=1000)
        )
        checked = 0
        damaged: list[str] = []
        for sha in shas:
            checked += 1
            try:
                blob_verify(sha=sha)
            except (TextstoreIntegrityError, BlobNotFound, ObjectStoreError) as exc:
                damaged.append(sha)
                self.stderr.write(f"DAMAGED {sha}: {exc}")
        orphans = unreferenced = 0
        if not options["sha"]:
            for orphan in object_orphans():
                orphans += 1
                self.stdout.write(f"ORPHAN {orphan.key} ({orphan.size} bytes, no blob row)")
            # Unreferenced blobs past the gc grace period: not damage, but space to reclaim.
            cutoff = timezone.now() - timedelta(seconds=max(0, settings.TEXTSTORE_GC_GRACE))
            for blob in blob_orphans(older_than=cutoff):
                unreferenced += 1
                self.stdout.write(f"UNREFERENCED {blob.sha256} ({blob.stored_size} bytes)")
        summary = (
            f"checked {checked} blobs, {len(damaged)} damaged, {orphans} orphan objects,"
            f" {unreferenced} unreferenced blobs"
        )
        if orphans or unreferenced:
            summary += " (remove old ones with `manage.py textstore_gc --delete`)"
        if damaged:
            raise CommandError(summary)
        self.stdout.write(self.style.SUCCESS(summary))
