"""Find (and with --delete, remove) stored texts nothing references: blob rows no version,
revision or live upload uses (textstore.references), and objects no blob row references."""

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser
from django.utils import timezone

from textstore.selectors import blob_orphans, object_orphans
from textstore.services import blob_orphans_delete, export_copy_sweep, object_orphan_delete


class Command(BaseCommand):
    help = (
        "List stored texts (blob rows and their objects) that no version, review revision or "
        "live upload references, and objects under blobs/ that no blob row references, older "
        "than a grace period (left by a failed or killed save). Delta bases of referenced "
        "texts are always kept. "
        "Dry run by default; --delete removes them, and also the plain download copies under "
        "texts/ whose presigned URLs have all expired (SHARE_PRESIGNED_TTL)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--grace",
            type=int,
            default=None,
            help="seconds an object must be old to count (default TEXTSTORE_GC_GRACE)",
        )
        parser.add_argument("--delete", action="store_true", help="delete the orphans found")

    def handle(self, *args: Any, **options: Any) -> None:
        grace = options["grace"] if options["grace"] is not None else settings.TEXTSTORE_GC_GRACE
        cutoff = timezone.now() - timedelta(seconds=max(0, grace))
        blobs = blob_orphans(older_than=cutoff)
        for blob in blobs:
            verb = "orphan" if not options["delete"] else "deleting"
            self.stdout.write(f"{verb} blob {blob.sha256} ({blob.stored_size} bytes stored)")
        if options["delete"]:
            gone = blob_orphans_delete(orphans=blobs)
            self.stdout.write(
                f"deleted {gone.rows} orphan blobs ({gone.bytes} bytes, {gone.objects} objects)"
            )
        else:
            self.stdout.write(
                f"{len(blobs)} orphan blobs, {sum(b.stored_size for b in blobs)} bytes"
            )
        found = deleted = size = 0
        for orphan in object_orphans(older_than=cutoff):
            found += 1
            size += orphan.size
            if options["delete"]:
                if object_orphan_delete(key=orphan.key):
                    deleted += 1
                    self.stdout.write(f"deleted {orphan.key} ({orphan.size} bytes)")
            else:
                self.stdout.write(f"orphan {orphan.key} ({orphan.size} bytes)")
        if options["delete"]:
            copies = export_copy_sweep(ttl=settings.SHARE_PRESIGNED_TTL)
            self.stdout.write(f"deleted {copies} expired download copies")
        action = f"deleted {deleted}" if options["delete"] else "dry run, deleted nothing"
        self.stdout.write(
            self.style.SUCCESS(
                f"{found} orphan objects, {size} bytes, older than {grace} s; {action}"
            )
        )
