from django.db.models import QuerySet

from common.exceptions import NotFound

from .models import Question

DETAIL_PREFETCH = ("depth_areas", "follow_ups", "numbers")


def question_list(*, kind: str | None = None) -> QuerySet[Question]:
    """Questions are public reading: every account sees the whole bank."""
    questions = Question.objects.all()
    if kind:
        questions = questions.filter(kind=kind)
    return questions


def question_get(*, slug: str) -> Question:
    try:
        return Question.objects.prefetch_related(*DETAIL_PREFETCH).get(slug=slug)
    except Question.DoesNotExist:
        raise NotFound from None


def question_by_slug(*, slug: str | None) -> Question | None:
    """The question for an optional slug given by a client; NotFound for an unknown one."""
    if not slug:
        return None
    question = Question.objects.filter(slug=slug).first()
    if question is None:
        raise NotFound
    return question
