"""What the question page lists from the review desk: the design documents tied to it.

For "Review a design document" that is every practice document: they are written to be
reviewed.
"""

from typing import Any

from django.urls import reverse

from questionbank.related import RELATED_SHOWN, RelatedGroup, RelatedItem

from .selectors import doc_list_for_question


def docs_for_question(question: Any, user: Any) -> RelatedGroup:
    if not user.is_authenticated:
        return RelatedGroup(
            title="Design documents to review",
            items=[],
            empty_text="Log in to review the design documents for this question.",
        )
    docs = list(
        doc_list_for_question(user=user, question=question).order_by("title")[: RELATED_SHOWN + 1]
    )
    return RelatedGroup(
        title="Design documents to review",
        items=[
            RelatedItem(
                title=doc.title,
                url=reverse("reviews:doc", args=[doc.pk]),
                meta="practice" if doc.practice else f"by {doc.author.get_username()}",
            )
            for doc in docs[:RELATED_SHOWN]
        ],
        empty_text="None yet.",
        more=len(docs) > RELATED_SHOWN,
    )
