"""The stored texts the review desk references, for `textstore_gc` (textstore.references):
every document revision's Markdown body."""

from collections.abc import Iterator

from .models import DocRevision


def reviews_blob_references() -> Iterator[str]:
    yield from DocRevision.objects.values_list("body_sha", flat=True).iterator(chunk_size=5000)
