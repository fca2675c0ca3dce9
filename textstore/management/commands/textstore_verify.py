"""Rebuild every stored text from storage and check it against its SHA-256 and bookkeeping."""

from collections.abc import Iterable
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from textstore.exceptions import BlobNotFound, ObjectStoreError, TextstoreIntegrityError
from textstore.models import Blob
from textstore.selectors import blob_verify, object_orphans


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
        orphans = 0
        if not options["sha"]:
            for orphan in object_orphans():
                orphans += 1
                self.stdout.write(f"ORPHAN {orphan.key} ({orphan.size} bytes, no blob row)")
        summary = f"checked {checked} blobs, {len(damaged)} damaged, {orphans} orphan objects"
        if orphans:
            summary += " (remove old ones with `manage.py textstore_gc --delete`)"
        if damaged:
            raise CommandError(summary)
        self.stdout.write(self.style.SUCCESS(summary))
