"""Who is acting: the project's user model, and the one place an anonymous user is refused.

Services take `actor: User` (a signed-in account, never the anonymous user). Selectors take
`user: Viewer`, which may be anonymous; they answer "nothing visible" for it.
"""

from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from rest_framework.request import Request

# A request's user: a signed-in account or Django's anonymous user.
Viewer = User | AnonymousUser


def request_actor(request: HttpRequest | Request) -> User:
    """The signed-in account acting on this request.

    Pages reach services behind `login_required` and the API behind `IsAuthenticated`, so an
    anonymous user here is a wiring mistake: it is refused (403), never passed on as an actor.
    """
    user = request.user
    if not user.is_authenticated:
        raise PermissionDenied("Sign in to do this.")
    return user
