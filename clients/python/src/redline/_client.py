"""`Redline` (blocking, on `httpx.Client`) and `AsyncRedline` (asyncio, on `httpx.AsyncClient`).

Both drive the same flows (`redline._core`), so they parse, cache, retry and refuse alike; only
the sending and the sleeping differ.
"""

from __future__ import annotations

import asyncio
import os
import time
from types import TracebackType
from typing import TypeVar

import httpx

from ._core import (
    DEFAULT_CACHE_ENTRIES,
    DEFAULT_MAX_RETRIES,
    DEFAULT_MAX_RETRY_WAIT,
    DEFAULT_TIMEOUT_SECONDS,
    Core,
    Flow,
    Get,
)
from ._errors import Error
from ._models import PromptVersion

T = TypeVar("T")


def _core(
    base_url: str | None,
    api_key: str | None,
    max_retries: int,
    max_retry_wait: float,
    cache_entries: int,
) -> Core:
    return Core(
        base_url=base_url or os.environ.get("REDLINE_BASE_URL", ""),
        api_key=api_key or os.environ.get("REDLINE_API_KEY", ""),
        max_retries=max_retries,
        max_retry_wait=max_retry_wait,
        cache_entries=cache_entries,
    )


def _transport_error(step: Get, exc: httpx.HTTPError) -> Error:
    return Error(f"GET {step.url} failed: {type(exc).__name__}: {exc}")


class Redline:
    """A client for one Redline server and one API key.

    `base_url` is the server's address (`http://127.0.0.1:8000`) and `api_key` a key from
    `POST /api/v1/auth/token/`; they default to `REDLINE_BASE_URL` and `REDLINE_API_KEY`.
    Every `get_prompt` asks the server (a 304 costs no body), so a label move or a revoked
    grant is seen on the very next call. Safe to share between threads.
    """

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
        max_retries: int = DEFAULT_MAX_RETRIES,
        max_retry_wait: float = DEFAULT_MAX_RETRY_WAIT,
        cache_entries: int = DEFAULT_CACHE_ENTRIES,
        http_client: httpx.Client | None = None,
    ) -> None:
        self._core = _core(base_url, api_key, max_retries, max_retry_wait, cache_entries)
        self._http = http_client if http_client is not None else httpx.Client(timeout=timeout)
        self._owns_http = http_client is None

    def get_prompt(
        self, prompt_id: int, label: str = "production", *, version: int | None = None
    ) -> PromptVersion:
        """The version of prompt `prompt_id` that `label` points at now, or its version number
        `version` (1, 2, 3… in save order). Raises `redline.NotFound` (no such prompt, label or
        version, or not yours), `redline.AuthError` (bad key) or `redline.Error`."""
        url = self._core.version_url(
            prompt_id,
            label=None if version is not None and label == "production" else label,
            version=version,
        )
        return self._drive(self._core.version(url))

    def cache_clear(self) -> None:
        """Forget the kept answers (the next call of each gets a full body)."""
        self._core.cache_clear()

    def _drive(self, flow: Flow[T]) -> T:
        answer: httpx.Response | None = None
        while True:
            try:
                step = flow.send(answer)
            except StopIteration as stop:
                result: T = stop.value  # what the flow returned
                return result
            if isinstance(step, Get):
                request = self._http.build_request(
                    "GET", step.url, headers={**self._core.headers, **step.headers}
                )
                try:
                    answer = self._http.send(request)
                except httpx.HTTPError as exc:
                    raise _transport_error(step, exc) from exc
            else:
                time.sleep(step.seconds)
                answer = None

    def close(self) -> None:
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> Redline:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


class AsyncRedline:
    """`Redline` for asyncio: the same arguments, `await client.get_prompt(...)`."""

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
        max_retries: int = DEFAULT_MAX_RETRIES,
        max_retry_wait: float = DEFAULT_MAX_RETRY_WAIT,
        cache_entries: int = DEFAULT_CACHE_ENTRIES,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        self._core = _core(base_url, api_key, max_retries, max_retry_wait, cache_entries)
        self._http = http_client if http_client is not None else httpx.AsyncClient(timeout=timeout)
        self._owns_http = http_client is None

    async def get_prompt(
        self, prompt_id: int, label: str = "production", *, version: int | None = None
    ) -> PromptVersion:
        """As `Redline.get_prompt`."""
        url = self._core.version_url(
            prompt_id,
            label=None if version is not None and label == "production" else label,
            version=version,
        )
        return await self._drive(self._core.version(url))

    def cache_clear(self) -> None:
        self._core.cache_clear()

    async def _drive(self, flow: Flow[T]) -> T:
        answer: httpx.Response | None = None
        while True:
            try:
                step = flow.send(answer)
            except StopIteration as stop:
                result: T = stop.value  # what the flow returned
                return result
            if isinstance(step, Get):
                request = self._http.build_request(
                    "GET", step.url, headers={**self._core.headers, **step.headers}
                )
                try:
                    answer = await self._http.send(request)
                except httpx.HTTPError as exc:
                    raise _transport_error(step, exc) from exc
            else:
                await asyncio.sleep(step.seconds)
                answer = None

    async def aclose(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> AsyncRedline:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()
