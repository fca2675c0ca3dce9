"""What `Redline` and `AsyncRedline` share: every decision, none of the I/O.

A call is a generator ("flow") that yields what it needs — a GET to send (`Get`) or a pause
before a retry (`Sleep`) — and receives the answer; the sync client drives it with
`httpx.Client`, the async one with `httpx.AsyncClient`. So both parse, cache, retry and
refuse exactly alike.

Caching is exact, never time-based: the last answer per URL is kept with its ETag, every call
revalidates with `If-None-Match`, and only a 304 from the server lets the kept answer be
returned. The ETag is echoed byte for byte; the server decides what it names.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Generator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar
from urllib.parse import quote

import httpx

from ._errors import AuthError, Error, NotFound
from ._models import PromptVersion, version_parse

__version__ = "0.1.0"

T = TypeVar("T")

DEFAULT_TIMEOUT_SECONDS = 30.0
DEFAULT_MAX_RETRIES = 3  # retries after the first attempt, for 503 and 429
DEFAULT_MAX_RETRY_WAIT = 30.0  # seconds; a longer Retry-After is not waited for
DEFAULT_CACHE_ENTRIES = 256
RETRY_STATUSES = frozenset({429, 503})
_BACKOFF_SECONDS = 0.5  # first wait when an answer gives no Retry-After; doubles each time
_MAX_TEXT_RANGES = 100_000  # a text of total N needs about N / page size ranges


@dataclass(frozen=True)
class Get:
    """Send a GET to `url` with `headers` (on top of the client's own)."""

    url: httpx.URL
    headers: Mapping[str, str]


@dataclass(frozen=True)
class Sleep:
    seconds: float


Flow = Generator[Get | Sleep, httpx.Response | None, T]


@dataclass(frozen=True)
class _Kept:
    etag: str
    version: PromptVersion


def _detail(response: httpx.Response) -> str:
    try:
        data = response.json()
    except ValueError:
        data = None
    detail = data.get("detail") if isinstance(data, dict) else None
    if isinstance(detail, str):
        return detail
    text = response.text.strip()
    return text[:500] if text else response.reason_phrase or "no detail"


def retry_after_seconds(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or an HTTP date); None if absent or
    unreadable."""
    if value is None:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def error_from(response: httpx.Response) -> Error:
    """The exception for an answer that is not the version."""
    status = response.status_code
    detail = _detail(response)
    if status == 401:
        return AuthError(detail, status=status)
    if status == 404:
        return NotFound(detail, status=status)
    retry_after = retry_after_seconds(response.headers.get("Retry-After"))
    return Error(detail, status=status, retry_after=retry_after)


def _json(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        raise Error(
            f"unexpected answer from the server: {response.request.url} did not answer JSON",
            status=response.status_code,
        ) from None


class Core:
    """Settings, the per-URL cache and the flows of one client."""

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        max_retries: int = DEFAULT_MAX_RETRIES,
        max_retry_wait: float = DEFAULT_MAX_RETRY_WAIT,
        cache_entries: int = DEFAULT_CACHE_ENTRIES,
    ) -> None:
        if not base_url:
            raise ValueError("base_url is required (or set REDLINE_BASE_URL)")
        if not api_key:
            raise ValueError("api_key is required (or set REDLINE_API_KEY)")
        if max_retries < 0 or max_retry_wait < 0 or cache_entries < 0:
            raise ValueError("max_retries, max_retry_wait and cache_entries must not be negative")
        url = httpx.URL(base_url)
        if url.scheme not in ("http", "https") or not url.host:
            raise ValueError(f"base_url must be an http(s) URL, not {base_url!r}")
        root = url.path.rstrip("/") + "/"
        if root.endswith("/api/v1/"):  # the API's address given for the server's: same thing
            root = root.removesuffix("api/v1/")
        self.base_url = url.copy_with(path=root, query=None, fragment=None)
        self.headers = {
            "Authorization": f"Token {api_key}",
            "Accept": "application/json",
            "User-Agent": f"redline-python/{__version__}",
        }
        self.max_retries = max_retries
        self.max_retry_wait = max_retry_wait
        self.cache_entries = cache_entries
        self._cache: OrderedDict[str, _Kept] = OrderedDict()
        self._lock = threading.Lock()

    # --- URLs ---------------------------------------------------------------------------------

    def _url(self, path: str) -> httpx.URL:
        return self.base_url.join(path.lstrip("/"))

    def version_url(
        self, prompt_id: int, *, label: str | None = None, version: int | None = None
    ) -> httpx.URL:
        """The URL of a prompt's labelled or numbered version, whole texts asked for."""
        if isinstance(prompt_id, bool) or not isinstance(prompt_id, int) or prompt_id < 1:
            raise ValueError(f"prompt_id must be a positive int, not {prompt_id!r}")
        if version is not None and label is not None:
            raise ValueError("pass label or version, not both")
        if version is not None:
            if isinstance(version, bool) or not isinstance(version, int) or version < 1:
                raise ValueError(f"version must be a positive int, not {version!r}")
            path = f"api/v1/prompts/{prompt_id}/versions/{version}/"
        else:
            name = "production" if label is None else label
            if not isinstance(name, str) or not name:
                raise ValueError(f"label must be a non-empty string, not {name!r}")
            path = f"api/v1/prompts/{prompt_id}/labels/{quote(name, safe='')}/version/"
        # Long texts come whole only when asked: this client never hands out a part of one.
        return self._url(path).copy_set_param("full", "1")

    # --- the cache ----------------------------------------------------------------------------

    def _kept(self, key: str) -> _Kept | None:
        with self._lock:
            return self._cache.get(key)

    def _keep(self, key: str, kept: _Kept | None) -> None:
        with self._lock:
            if kept is None or self.cache_entries == 0:
                self._cache.pop(key, None)
                return
            self._cache[key] = kept
            self._cache.move_to_end(key)
            while len(self._cache) > self.cache_entries:
                self._cache.popitem(last=False)

    def cache_clear(self) -> None:
        with self._lock:
            self._cache.clear()

    # --- flows --------------------------------------------------------------------------------

    def get(self, url: httpx.URL, headers: Mapping[str, str] | None = None) -> Flow[httpx.Response]:
        """A GET, retried on 503 and 429 as `Retry-After` says (GETs are idempotent): at most
        `max_retries` more attempts, none after a wait longer than `max_retry_wait`."""
        attempt = 0
        while True:
            response = yield Get(url, dict(headers or {}))
            assert response is not None  # the driver answers every Get
            if response.status_code not in RETRY_STATUSES:
                return response
            wait = retry_after_seconds(response.headers.get("Retry-After"))
            if wait is None:
                wait = _BACKOFF_SECONDS * 2**attempt
            if attempt >= self.max_retries or wait > self.max_retry_wait:
                raise error_from(response)
            attempt += 1
            yield Sleep(min(wait, self.max_retry_wait))

    def version(self, url: httpx.URL) -> Flow[PromptVersion]:
        """The version at `url`, revalidated: a 304 returns the kept answer, anything else
        replaces or drops it."""
        key = str(url)
        kept = self._kept(key)
        headers = {"If-None-Match": kept.etag} if kept is not None else {}
        response = yield from self.get(url, headers)
        if response.status_code == 304 and kept is not None:
            self._keep(key, kept)
            return kept.version
        if response.status_code != 200:
            self._keep(key, None)
            if response.status_code == 304:
                raise Error("the server answered 304 to a request without If-None-Match")
            raise error_from(response)
        data = _json(response)
        if isinstance(data, dict) and isinstance(data.get("content"), dict):
            yield from self._whole_texts(data["content"])
        version = version_parse(data)
        etag = response.headers.get("ETag")
        no_store = "no-store" in response.headers.get("Cache-Control", "").lower()
        self._keep(key, _Kept(etag, version) if etag and not no_store else None)
        return version

    def _whole_texts(self, content: dict[str, Any]) -> Flow[None]:
        """Replace any text the server sent as a head (`{"text", "truncated", "total",
        "text_url"}`) with the whole text, read a range at a time."""
        if isinstance(content.get("system"), dict):
            content["system"] = yield from self._whole_text("system", content["system"])
        messages = content.get("messages")
        for index, message in enumerate(messages if isinstance(messages, list) else []):
            if isinstance(message, dict) and isinstance(message.get("content"), dict):
                field = f"messages.{index}.content"
                message["content"] = yield from self._whole_text(field, message["content"])

    def _whole_text(self, field: str, value: dict[str, Any]) -> Flow[str]:
        head = value.get("text")
        if not isinstance(head, str):
            raise Error(f"unexpected answer from the server: {field} has no text")
        if not value.get("truncated"):
            return head
        total, text_url = value.get("total"), value.get("text_url")
        if not isinstance(total, int) or not isinstance(text_url, str) or not text_url:
            raise Error(
                f"{field}: the server sent only the first {len(head)} characters and no way to "
                "read the rest (total, text_url)"
            )
        url = self.base_url.join(text_url)  # a path, or a URL that must be on the same server
        if (url.scheme, url.host, url.port) != (
            self.base_url.scheme,
            self.base_url.host,
            self.base_url.port,
        ):
            raise Error(f"{field}: text_url {text_url!r} is not on {self.base_url}")
        parts, offset = [head], len(head)
        for _ in range(_MAX_TEXT_RANGES):
            if offset >= total:
                break
            response = yield from self.get(url.copy_set_param("offset", str(offset)))
            if response.status_code != 200:
                raise error_from(response)
            page = _json(response)
            text = page.get("text") if isinstance(page, dict) else None
            if not isinstance(text, str) or not text or page.get("offset") != offset:
                raise Error(f"{field}: the range at offset {offset} of {total} came back empty")
            if page.get("total") != total:
                raise Error(f"{field}: the text changed length while it was read")
            parts.append(text)
            offset += len(text)
        whole = "".join(parts)
        if len(whole) != total:
            raise Error(f"{field}: read {len(whole)} characters of {total}")
        return whole
