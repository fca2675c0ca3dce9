"""Practice panels as inclusion tags, so the desk's pages show them without their views knowing
about practice: `{% practice_start doc %}` on a document page, `{% practice_timer review %}` on a
review page. Each reads through the practice selectors (two small queries)."""

from typing import Any

from django import template

from ..models import DesignDoc, Review
from ..practice.selectors import doc_practice, review_practice

register = template.Library()


@register.inclusion_tag("reviews/_practice_start.html", takes_context=True)
def practice_start(context: dict[str, Any], doc: DesignDoc) -> dict[str, Any]:
    user = context["request"].user
    return {
        "doc": doc,
        "practice": doc_practice(doc=doc, user=user),
        "csrf_token": context.get("csrf_token"),
    }


@register.inclusion_tag("reviews/_practice_timer.html", takes_context=True)
def practice_timer(context: dict[str, Any], review: Review) -> dict[str, Any]:
    user = context["request"].user
    return {"review": review, "practice": review_practice(review=review, user=user)}
