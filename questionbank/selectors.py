from django.db.models import QuerySet

from common.selectors import object_get_or_not_found

from .models import Question

DETAIL_PREFETCH = ("depth_areas", "follow_ups", "numbers")


def question_list(*, kind: str | None = None) -> QuerySet[Question]:
    """Questions are public reading: every account sees the whole bank."""
    questions = Question.objects.all()
    if kind:
        questions = questions.filter(kind=kind)
    return questions


def question_get(*, slug: str) -> Question:
    return object_get_or_not_found(Question.objects.prefetch_related(*DETAIL_PREFETCH), slug=slug)


def question_by_slug(*, slug: str | None) -> Question | None:
    """The question for an optional slug given by a client; NotFound for an unknown one."""
    if not slug:
        return None
    return object_get_or_not_found(Question.objects.all(), slug=slug)
