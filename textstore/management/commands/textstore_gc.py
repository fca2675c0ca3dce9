"""Find (and with --delete, remove) objects in object storage that no blob row references."""

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser
from django.utils import timezone

from textstore.selectors import object_orphans
from textstore.services import export_copy_sweep, object_orphan_delete


class Command(BaseCommand):
    help = (
        "List objects under blobs/ that no blob row references and that are older than a grace "
        "period (left by a save killed between writing its object and committing its row). "
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
