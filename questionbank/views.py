from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from .models import Question
from .related import related_for
from .selectors import question_get, question_list


def question_list_view(request: HttpRequest) -> HttpResponse:
    kind = request.GET.get("kind") or None
    if kind not in Question.Kind.values:
        kind = None
    return render(
        request,
        "questionbank/question_list.html",
        {"questions": question_list(kind=kind), "kinds": Question.Kind.choices, "kind": kind},
    )


def question_detail_view(request: HttpRequest, slug: str) -> HttpResponse:
    question = question_get(slug=slug)  # NotFound → 404 via common.middleware
    return render(
        request,
        "questionbank/question_detail.html",
        {"question": question, "related": related_for(question=question, user=request.user)},
    )
