"""Re-anchoring writes: where every annotation landed in each revision (docs/design.md, Invariants).

The algorithm is `reviews.anchoring` (pure text, including the similarity it scores with); this
module decides what to map from where and stores the result as AnnotationAnchor rows. Each
annotation is mapped from its latest anchored revision — the most recent earlier revision where
it was not orphaned — so an annotation follows its passage through a chain of edits, and an
orphan can come back when its passage does.
"""

import logging
from collections import defaultdict

from django.db import transaction

from ..anchoring import (
    Anchor,
    anchors_locate,
    quote_similarity,
    selector_from_position,
)
from ..models import Annotation, AnnotationAnchor, DocRevision
from ..notifications import inbox_notify_orphans
from ..selectors import revision_text

logger = logging.getLogger(__name__)

# Prefix/suffix characters kept with every quote: at least a W3C selector's SELECTOR_CONTEXT,
# and more than the CONTEXT_CHARS that re-anchoring compares.
ANCHOR_CONTEXT = 48


def _as_row(
    annotation: Annotation,
    target: DocRevision,
    anchor: Anchor,
    new_text: str,
    reference: str,
) -> AnnotationAnchor:
    """The stored anchor, judged against the annotation's reference passage: its original
    quote, or the passage it was last re-attached to by hand.

    `anchor_locate` judges against the passage in the source revision; when that passage was
    itself a fuzzy match, landing on it verbatim is still only fuzzy for the reference.
    """
    status: str = anchor.status
    score = anchor.score
    if anchor.start is not None and anchor.end is not None:
        landed = new_text[anchor.start : anchor.end]
        if landed != reference:
            status = AnnotationAnchor.Status.FUZZY
            score = round(min(quote_similarity(reference, landed), 0.9999), 4)
    return AnnotationAnchor(
        annotation=annotation,
        revision=target,
        status=status,
        start=anchor.start,
        end=anchor.end,
        score=score,
    )


def _fill(target: DocRevision) -> int:
    """Anchor onto `target` every annotation of an earlier revision that has no anchor there."""
    pending = list(
        Annotation.objects.filter(
            revision__doc_id=target.doc_id, revision__number__lt=target.number
        ).exclude(anchors__revision=target)
    )
    if not pending:
        return 0
    rows: list[AnnotationAnchor] = []
    whole = [a for a in pending if a.whole_document]
    rows.extend(
        AnnotationAnchor(
            annotation=a, revision=target, status=AnnotationAnchor.Status.EXACT, score=1.0
        )
        for a in whole
    )
    passages = {a.pk: a for a in pending if not a.whole_document}
    # Latest earlier anchor that is not orphaned, and latest one set by hand (one query).
    sources: dict[int, AnnotationAnchor] = {}
    manual: dict[int, AnnotationAnchor] = {}
    for stored in (
        AnnotationAnchor.objects.filter(
            annotation_id__in=passages, revision__number__lt=target.number
        )
        .exclude(status=AnnotationAnchor.Status.ORPHANED)
        .select_related("revision")
        .order_by("revision__number")
    ):
        sources[stored.annotation_id] = stored
        if stored.manual:
            manual[stored.annotation_id] = stored
    by_source: dict[int, list[tuple[Annotation, AnnotationAnchor]]] = defaultdict(list)
    for annotation_id, annotation in passages.items():
        source = sources.get(annotation_id)
        if source is None:  # never anchored (cannot happen: creation anchors it) → orphan
            rows.append(
                AnnotationAnchor(
                    annotation=annotation,
                    revision=target,
                    status=AnnotationAnchor.Status.ORPHANED,
                    score=0.0,
                )
            )
            continue
        by_source[source.revision_id].append((annotation, source))
    new_text = revision_text(revision=target)
    for group in by_source.values():
        old_text = revision_text(revision=group[0][1].revision)
        selectors = []
        for _, source in group:
            assert source.start is not None and source.end is not None  # not orphaned
            selectors.append(
                selector_from_position(
                    text=old_text, start=source.start, end=source.end, context=ANCHOR_CONTEXT
                )
            )
        # One revision pair for the group: its diff and folded texts are computed once.
        found = anchors_locate(selectors=selectors, old_text=old_text, new_text=new_text)
        for (annotation, _), located in zip(group, found, strict=True):
            reference = annotation.exact
            by_hand = manual.get(annotation.pk)
            if by_hand is not None:
                reference = revision_text(revision=by_hand.revision)[by_hand.start : by_hand.end]
            rows.append(_as_row(annotation, target, located, new_text, reference))
    # A concurrent run may have stored some of these already: theirs stand (and the inbox
    # keeps one "orphaned" row per annotation and revision).
    AnnotationAnchor.objects.bulk_create(rows, ignore_conflicts=True)
    inbox_notify_orphans(anchors=rows, revision_author_id=target.author_id)
    return len(rows)


def revision_anchors_write(*, revision: DocRevision) -> int:
    """Anchor every annotation of earlier revisions onto `revision` and store the anchors;
    returns how many were stored.

    Earlier revisions still missing anchors are filled first, in order, so every chain is
    complete. Idempotent: annotations already anchored on a revision are left alone. One
    transaction per revision.
    """
    stored = 0
    for target in DocRevision.objects.filter(
        doc_id=revision.doc_id, number__gt=1, number__lte=revision.number
    ).order_by("number"):
        with transaction.atomic():
            count = _fill(target)
        stored += count
    logger.info("revision.reanchored", extra={"revision_id": revision.pk, "anchors_stored": stored})
    return stored
