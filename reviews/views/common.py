"""What the review desk's page views share: the htmx request type and picking a revision."""

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django_htmx.middleware import HtmxDetails

from ..exceptions import NotFound
from ..models import DocRevision


class HtmxHttpRequest(HttpRequest):
    """A request through django-htmx's middleware (typing only: it sets `request.htmx`)."""

    htmx: HtmxDetails


def revision_or_default(revisions: list[DocRevision], wanted: Any) -> DocRevision:
    """The revision `?r=` names by its number among the document's (404 if it is not one),
    else the latest."""
    if not wanted:
        return revisions[-1]
    found = next((r for r in revisions if str(r.number) == str(wanted)), None)
    if found is None:
        raise NotFound
    return found


def legacy_revision_redirect(request: HttpRequest, revisions: list[DocRevision]) -> HttpResponse:
    """Old links named a revision by its id (`?rev=<id>`): send them to `?r=<number>` with the
    rest of the query kept (404 for an id that is not one of the document's revisions)."""
    legacy = request.GET["rev"]
    found = next((r for r in revisions if str(r.pk) == legacy), None)
    if found is None:
        raise NotFound
    query = request.GET.copy()
    del query["rev"]
    query["r"] = str(found.number)
    return redirect(f"{request.path}?{query.urlencode()}")
