"""What the question page lists from the playground: the viewer's prompts tied to it."""

from typing import Any

from django.urls import reverse

from questionbank.related import RELATED_SHOWN, RelatedGroup, RelatedItem

from ..selectors import prompt_list_for_user


def prompts_for_question(question: Any, user: Any) -> RelatedGroup:
    prompts = list(prompt_list_for_user(user=user).filter(question=question)[: RELATED_SHOWN + 1])
    return RelatedGroup(
        title="Your prompts for this question",
        items=[
            RelatedItem(title=p.title, url=reverse("playground:prompt", args=[p.pk]))
            for p in prompts[:RELATED_SHOWN]
        ],
        more=len(prompts) > RELATED_SHOWN,
        empty_text="None yet."
        if user.is_authenticated
        else "Log in to write prompts for this question.",
    )
