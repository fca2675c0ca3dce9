from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from .models import Question
from .related import related_for
from .selectors import question_get, question_list


def question_list_view(request: HttpRequest) -> HttpResponse:
    """The bank, optionally filtered by kind; an unknown kind is said so (400), never
    silently ignored."""
    kind = request.GET.get("kind") or None
    unknown_kind = kind if kind is not None and kind not in Question.Kind.values else None
    return render(
        request,
        "questionbank/question_list.html",
        {
            "questions": question_list(kind=None if unknown_kind else kind),
            "kinds": Question.Kind.choices,
            "kind": None if unknown_kind else kind,
            "unknown_kind": unknown_kind,
            "section": "questions",
        },
        status=400 if unknown_kind else 200,
    )


def question_detail_view(request: HttpRequest, slug: str) -> HttpResponse:
    question = question_get(slug=slug)  # NotFound → 404 via common.middleware
    return render(
        request,
        "questionbank/question_detail.html",
        {
            "question": question,
            "related": related_for(question=question, user=request.user),
            "section": "questions",
        },
    )
