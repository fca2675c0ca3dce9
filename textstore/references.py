"""Which stored texts are still in use, without textstore importing the apps that use them.

`textstore` depends on nothing of ours (docs/architecture.md), yet `textstore_gc` must know
which blobs a prompt version, a document revision or a live upload still needs. Each feature
app registers a provider in its `AppConfig.ready()`: a callable yielding the SHA-256 of every
blob it references (duplicates are fine). A blob no provider names, that no referenced blob
builds on (its delta base or anchor, transitively) and that is older than the grace period is
an orphan (`textstore.selectors.blob_orphans`).

A new kind of row that stores texts must register here too, or gc would collect its texts.
"""

from collections.abc import Callable, Iterable, Iterator

from common.registry import Registry

BlobReferenceProvider = Callable[[], Iterable[str]]
blob_reference_providers: Registry[BlobReferenceProvider] = Registry("blob reference provider")


def blob_references_register(*, name: str, provider: BlobReferenceProvider) -> None:
    blob_reference_providers.register(name, provider)


def blob_references_providers() -> list[str]:
    return list(blob_reference_providers)


def blob_references() -> Iterator[str]:
    """Every SHA-256 any registered app references now."""
    for provider in blob_reference_providers.values():
        yield from provider()
