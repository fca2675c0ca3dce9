"""common.auth: the acting user is a signed-in account; an anonymous one is refused, not passed."""

import pytest
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import PermissionDenied
from django.test import RequestFactory

from common.auth import request_actor
from tests.factories import make_user

pytestmark = pytest.mark.django_db


def test_the_signed_in_user_acts():
    request = RequestFactory().post("/")
    request.user = make_user("ada")
    assert request_actor(request) == request.user


def test_an_anonymous_user_never_becomes_an_actor():
    request = RequestFactory().post("/")
    request.user = AnonymousUser()
    with pytest.raises(PermissionDenied):
        request_actor(request)
