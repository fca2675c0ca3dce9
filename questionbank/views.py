from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import render

from common.exceptions import RateLimited

from .estimators.page import EstimatePage, estimate_page_build
from .estimators.registry import estimator_for
from .models import Question
from .related import related_for
from .selectors import question_get, question_list
from .throttle import estimate_throttle


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
            "estimate": _estimate_panel(slug=question.slug, query=request.GET, use_presets=True),
        },
    )


def _estimate_panel(*, slug: str, query: QueryDict, use_presets: bool) -> EstimatePage | None:
    estimator = estimator_for(slug)
    if estimator is None:
        return None
    return estimate_page_build(estimator=estimator, query=query, use_presets=use_presets)


def question_estimate_view(request: HttpRequest, slug: str) -> HttpResponse:
    """The estimator panel for typed inputs: its results fragment for htmx, else a full page."""
    if estimator_for(slug) is None:
        raise Http404
    try:
        estimate_throttle(request=request)
    except RateLimited as error:  # our own words: 429.html speaks of share links
        response = HttpResponse(error.message, status=429, content_type="text/plain")
        response["Retry-After"] = str(error.retry_after)
        return response
    estimate = _estimate_panel(slug=slug, query=request.GET, use_presets=False)
    if estimate is None:
        raise Http404
    if getattr(request, "htmx", False):
        if estimate.error:
            # Only the error is swapped in (into the results' error slot): the results of the
            # last valid inputs stay on the page instead of vanishing with one bad keystroke.
            response = render(
                request,
                "questionbank/partials/estimate_error.html",
                {"estimate": estimate, "kept": True},
            )
            response["HX-Retarget"] = "#estimate-error-slot"
            response["HX-Reswap"] = "innerHTML"
            return response
        return render(request, "questionbank/partials/estimate_result.html", {"estimate": estimate})
    question = question_get(slug=slug)  # NotFound → 404 via common.middleware
    return render(
        request,
        "questionbank/estimate_page.html",
        {"question": question, "estimate": estimate},
        status=400 if estimate.error else 200,
    )
