"""The stored texts the playground references, for `textstore_gc` (textstore.references):
every version's system prompt and message texts, and the text of each upload still waiting to
be used (its SHA-256 names the blob it becomes)."""

from collections.abc import Iterator

from django.utils import timezone

from ..models import PromptVersion, Upload


def playground_blob_references() -> Iterator[str]:
    for system_sha, messages in PromptVersion.objects.values_list(
        "system_sha", "messages"
    ).iterator(chunk_size=2000):
        yield system_sha
        for message in messages or []:
            sha = message.get("sha") if isinstance(message, dict) else None
            if isinstance(sha, str):
                yield sha
    yield from Upload.objects.filter(
        used_at__isnull=True, expires_at__gt=timezone.now()
    ).values_list("sha256", flat=True)
