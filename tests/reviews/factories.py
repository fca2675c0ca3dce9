"""Review-desk test data, built through the services."""

from pathlib import Path
from typing import Any

from reviews.models import Annotation, DesignDoc, DocRevision, Review
from reviews.services import annotation_create, doc_create, review_create

DOC = (Path(__file__).parent / "design_doc.md").read_text(encoding="utf-8")
CONSTRAINT = "No autoscaling: the fleet size is fixed at 64 GPUs per region."


def make_doc(author, *, body: str = DOC, title: str = "Inference gateway", **kwargs: Any):
    kwargs.setdefault("constraints", [CONSTRAINT])
    return doc_create(actor=author, title=title, body=body, **kwargs)


def make_review(reviewer, revision: DocRevision) -> Review:
    return review_create(actor=reviewer, revision=revision)[0]


def span_of(text: str, passage: str, *, after: str | None = None) -> tuple[int, int]:
    """Offsets of the one occurrence of `passage` (the first after `after`, when given)."""
    begin = text.index(after) if after else 0
    if after is None:
        assert text.count(passage) == 1, f"{passage!r} occurs {text.count(passage)} times"
    start = text.index(passage, begin)
    return start, start + len(passage)


def annotate(
    review: Review, passage: str | None = None, *, text: str = DOC, **kwargs: Any
) -> Annotation:
    """An annotation on `passage` of the reviewed text (whole document when None)."""
    values: dict[str, Any] = {
        "area": "failure-modes",
        "kind": "risk",
        "severity": "major",
        "body": "What happens when this fails?",
    }
    values.update(kwargs)
    if passage is not None:
        start, end = span_of(text, passage)
        values.update(start=start, end=end)
    return annotation_create(actor=review.reviewer, review=review, **values)


def doc_of(revision: DocRevision) -> DesignDoc:
    return DesignDoc.objects.get(pk=revision.doc_id)
