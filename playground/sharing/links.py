"""Opening a share link from a request: rate-limited token resolution, then the access log.

Used by the shared page (/s/{token}) and the shared API (/api/v1/shared/{token}/).
"""

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest

from common.exceptions import RateLimited
from common.ratelimit import Limit, client_ip, ratelimit_exceeded, ratelimit_hit

from ..exceptions import NotFound
from ..models import AccessLogEntry, PromptVersion, ShareLink
from ..selectors import share_link_ended, share_link_resolve, share_link_version
from ..services import ACCESS_LOG_FETCH_RESOLUTION, access_log_record

SCOPE = "share-token"


class LoginRequired(Exception):
    """A `login` link opened without a session."""


class LinkEnded(NotFound):
    """A real link that was revoked or has expired (`reason`). Still a NotFound, so the API
    answers it as any unknown token (404); the shared page says which (410)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _limit() -> Limit:
    return Limit(count=settings.SHARE_GUESS_LIMIT, window_seconds=settings.SHARE_GUESS_WINDOW)


def shared_open(
    *, request: HttpRequest, token: str, path: str, thin_log: bool = False
) -> tuple[ShareLink, PromptVersion]:
    """The link and the version it shows now, or NotFound / RateLimited / LoginRequired.

    Failed look-ups count against the client; over the limit every look-up is refused
    until the window ends, so guessing costs time whether or not a guess would have hit.
    The link is checked against the database on every call, so a revoked or expired link is
    refused on its very next request. `thin_log` records at most one access-log row a minute
    per link and surface (a reader scrolling a long text asks for many ranges).
    """
    ident = client_ip(request)
    wait = ratelimit_exceeded(scope=SCOPE, ident=ident, limit=_limit())
    if wait:
        raise RateLimited(
            "Too many invalid links from this address; try again later.", retry_after=wait
        )
    link = share_link_resolve(token=token)
    version = share_link_version(link=link) if link is not None else None
    if link is None or version is None:
        ratelimit_hit(scope=SCOPE, ident=ident, limit=_limit())
        reason = share_link_ended(token=token) if link is None else ""
        if reason:
            raise LinkEnded(reason)
        raise NotFound
    if link.access == ShareLink.Access.LOGIN and not request.user.is_authenticated:
        raise LoginRequired
    if not thin_log or cache.add(
        f"access-log:link:{link.pk}:{path}", 1, timeout=ACCESS_LOG_FETCH_RESOLUTION
    ):
        access_log_record(
            prompt=link.prompt, via=AccessLogEntry.Via.LINK, user=request.user, path=path, link=link
        )
    return link, version
