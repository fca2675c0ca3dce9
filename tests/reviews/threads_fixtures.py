"""Data for the thread tests: a submitted review with two annotations, and a second revision
that moves one passage and deletes the other."""

from reviews.revision_diff import blocks_split
from tests.reviews.factories import DOC

KV = "Each decode replica holds a 40 GB paged KV cache"
ROUTER = "The router terminates TLS, authenticates the tenant key"
ROUTER_PARAGRAPH = next(b.text for b in blocks_split(DOC) if b.text.startswith(ROUTER))
PREFACE = "## Summary\n\nOne gateway, one quota, one place to see cost.\n\n"
REVISED = PREFACE + DOC.replace(
    ROUTER_PARAGRAPH, "An off-the-shelf API gateway takes this job; see the appendix."
)


def revise(author, doc, body: str = REVISED, message: str = ""):
    """Save a revision and re-anchor onto it, as the after-commit task would."""
    from reviews.services import doc_revision_create
    from reviews.services.anchors import revision_anchors_write

    revision, _ = doc_revision_create(actor=author, doc=doc, body=body, message=message)
    revision_anchors_write(revision=revision)
    return revision
