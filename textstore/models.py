"""Content-addressed text blobs (docs/design.md, Why the non-obvious choices).

A `Blob` is written once and never changed: there is no update path in this app, the admin is
read-only, and a blob's bytes are pinned by its primary key, the SHA-256 of its UTF-8 text.
"""

from django.db import models
from django.db.models import Q
from django.db.models.functions import Length
from django.db.models.lookups import Exact
from django.utils import timezone

from .compression import CODEC_LZMA, CODEC_NONE, CODEC_ZLIB


class Blob(models.Model):
    """One text, stored full or as a delta against `base`.

    Invariants (the constraints below hold the ones a database can check):
    - full: no base, depth 0, no deltas on its chain, snapshot level 0;
    - delta: a base, depth = base.depth + 1, `payload` is a `diff_toDelta` string from the
      base's text to this text, compressed with `codec`;
    - a snapshot (full, or intermediate: a delta against the previous snapshot) has
      `snapshot_level` set and `run` 0; a plain delta has `anchor` = the nearest snapshot on
      its chain and `run` = plain deltas since it;
    - the payload is in `payload`, or, for large full texts, in object storage under
      `object_key` as chunks described by `chunk_index` (see chunks.py), never both;
    - `delta_bytes` ≤ `snapshot_bytes` and depth ≤ the chain cap at write time (policy.py),
      so a rebuild reads `snapshot_bytes + delta_bytes` ≤ 2 × `snapshot_bytes`.
    """

    class Kind(models.TextChoices):
        FULL = "full", "full snapshot"
        DELTA = "delta", "delta"

    class Codec(models.TextChoices):
        NONE = CODEC_NONE, "uncompressed"
        ZLIB = CODEC_ZLIB, "raw deflate"
        LZMA = CODEC_LZMA, "raw LZMA2"

    sha256 = models.CharField(primary_key=True, max_length=64)
    kind = models.CharField(max_length=5, choices=Kind.choices)
    base = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="dependents"
    )
    anchor = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="anchored"
    )
    snapshot_level = models.PositiveSmallIntegerField(null=True, blank=True)
    codec = models.CharField(max_length=4, choices=Codec.choices)
    payload = models.BinaryField(null=True, blank=True)
    object_key = models.CharField(max_length=200, blank=True, default="")
    chunk_chars = models.PositiveIntegerField(null=True, blank=True)
    chunk_index = models.BinaryField(null=True, blank=True)
    stored_size = models.PositiveBigIntegerField()
    char_length = models.PositiveBigIntegerField()
    byte_length = models.PositiveBigIntegerField()
    depth = models.PositiveIntegerField()
    run = models.PositiveIntegerField()
    delta_bytes = models.PositiveBigIntegerField()
    snapshot_bytes = models.PositiveBigIntegerField()
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Exact(Length("sha256"), 64), name="textstore_blob_sha256_length"
            ),
            models.CheckConstraint(
                condition=(
                    Q(
                        kind="full",
                        base__isnull=True,
                        anchor__isnull=True,
                        snapshot_level=0,
                        depth=0,
                        run=0,
                        delta_bytes=0,
                    )
                    | Q(
                        kind="delta",
                        base__isnull=False,
                        depth__gte=1,
                        payload__isnull=False,
                        object_key="",
                    )
                ),
                name="textstore_blob_kind_shape",
            ),
            models.CheckConstraint(
                condition=(
                    Q(snapshot_level__isnull=True, anchor__isnull=False, run__gte=1)
                    | Q(snapshot_level__isnull=False, anchor__isnull=True, run=0)
                ),
                name="textstore_blob_snapshot_or_run",
            ),
            models.CheckConstraint(
                condition=(
                    Q(payload__isnull=False, object_key="", chunk_index__isnull=True)
                    | Q(
                        payload__isnull=True,
                        chunk_index__isnull=False,
                        chunk_chars__gte=1,
                    )
                    & ~Q(object_key="")
                ),
                name="textstore_blob_payload_or_object",
            ),
            models.CheckConstraint(
                condition=Q(delta_bytes__lte=models.F("snapshot_bytes")),
                name="textstore_blob_delta_bytes_bounded",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.sha256[:12]} ({self.kind}, {self.char_length} chars)"

    @property
    def is_snapshot(self) -> bool:
        return self.snapshot_level is not None
