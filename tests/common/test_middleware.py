"""common.middleware: domain errors raised under an HTML view become 404 / 403 / 429 pages."""

import pytest
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.test import RequestFactory

from common.exceptions import DomainError, Forbidden, NotFound, RateLimited
from common.middleware import DomainErrorMiddleware
from tests.factories import make_user
from tests.playground.factories import make_prompt

pytestmark = pytest.mark.django_db


def _middleware() -> DomainErrorMiddleware:
    return DomainErrorMiddleware(lambda request: pytest.fail("not called"))


def _request():
    request = RequestFactory().get("/somewhere/")
    request.user = AnonymousUser()
    return request


def test_not_found_becomes_http404():
    with pytest.raises(Http404):
        _middleware().process_exception(_request(), NotFound())


def test_forbidden_becomes_permission_denied_with_its_message():
    with pytest.raises(PermissionDenied, match="Only the owner can do this."):
        _middleware().process_exception(_request(), Forbidden("Only the owner can do this."))


def test_rate_limited_is_a_429_page_with_retry_after():
    response = _middleware().process_exception(_request(), RateLimited("Slow down.", retry_after=7))
    assert response is not None
    assert response.status_code == 429
    assert response["Retry-After"] == "7"


def test_other_errors_are_left_to_the_view():
    assert _middleware().process_exception(_request(), DomainError("bad input")) is None
    assert _middleware().process_exception(_request(), ValueError("bug")) is None


def test_pages_answer_hidden_prompts_like_missing_ones_and_read_only_access_403(client):
    from playground.services import grant_set

    owner, viewer, stranger = make_user("owner"), make_user("viewer"), make_user("stranger")
    prompt, root = make_prompt(owner)
    grant_set(actor=owner, prompt=prompt, username="viewer", role="viewer")

    client.force_login(stranger)
    hidden = client.get(f"/playground/p/{prompt.pk}/")
    missing = client.get("/playground/p/999999/")
    assert hidden.status_code == 404
    assert hidden.content == missing.content

    client.force_login(viewer)
    assert client.get(f"/playground/p/{prompt.pk}/").status_code == 200
    save = client.post(f"/playground/p/{prompt.pk}/save/", {"parent": root.pk})
    assert save.status_code == 403
    assert b"read-only access" in save.content
