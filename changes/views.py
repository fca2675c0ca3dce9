"""Pages of change requests (docs/design.md, Prompt change review)."""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from .selectors import request_get_for_user


@login_required
def request_view(request: HttpRequest, request_id: int) -> HttpResponse:
    target = request_get_for_user(user=request.user, request_id=request_id)
    return render(request, "changes/request.html", {"change": target.request})
