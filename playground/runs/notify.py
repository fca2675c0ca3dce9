"""The notification channel of run streams: Redis pub/sub when REDIS_URL is set.

The worker publishes each piece it appended to a run's output (`{"o": offset, "t": text}`,
after the write committed) and a status change (`{"s": status}`). A stream reader subscribed to
the run emits a piece that starts exactly at its offset without reading the database, and reads
the row for anything else (a gap, a status change, a lost connection). So the row stays the one
source of truth; the channel only saves reads and latency. Without REDIS_URL (the embedded
default) there is no channel and streams poll the row.

Channels are named per database, so two deployments (or test runs) sharing a Redis server never
hear each other's runs.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import redis
import redis.asyncio as aioredis
from django.conf import settings
from django.db import connection, transaction

logger = logging.getLogger(__name__)

_publisher: dict[str, redis.Redis] = {}
_readers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, aioredis.Redis] = (
    weakref.WeakKeyDictionary()
)


def run_channel(run_id: int) -> str:
    database = hashlib.sha256(str(connection.settings_dict["NAME"]).encode()).hexdigest()[:12]
    return f"redline:{database}:run:{run_id}"


def notify_enabled() -> bool:
    return bool(settings.REDIS_URL)


def _publish(channel: str, message: dict[str, Any]) -> None:
    url = settings.REDIS_URL
    client = _publisher.get(url)
    if client is None:
        client = _publisher[url] = redis.Redis.from_url(
            url, socket_connect_timeout=2, socket_timeout=2
        )
    try:
        client.publish(channel, json.dumps(message, separators=(",", ":")))
    except redis.RedisError as error:
        # Readers also read the row on their own (at every keep-alive), so a lost message
        # delays a stream; it never loses text.
        logger.warning("run.notify_failed", extra={"channel": channel, "error": str(error)})


def run_notify_output(*, run_id: int, offset: int, text: str) -> None:
    """After the append of `text` at character `offset` commits: tell the run's readers."""
    if notify_enabled():
        channel = run_channel(run_id)
        transaction.on_commit(lambda: _publish(channel, {"o": offset, "t": text}))


def run_notify_status(*, run_id: int, status: str) -> None:
    """After a status change commits: readers read the row and finish."""
    if notify_enabled():
        channel = run_channel(run_id)
        transaction.on_commit(lambda: _publish(channel, {"s": status}))


# --- the reader's side (async, under the ASGI server) -----------------------------------------


@dataclass(frozen=True)
class Notice:
    """A message on a run's channel: a piece of output at `offset`, or a new `status`."""

    offset: int | None = None
    text: str = ""
    status: str = ""


class InboxLost(Exception):
    """The channel's connection broke: the reader falls back to polling the row."""


class RunInbox:
    def __init__(self, pubsub: Any) -> None:
        self._pubsub = pubsub

    async def next(self, *, timeout: float) -> Notice | None:
        """The next notice, or None when nothing came within `timeout` seconds."""
        try:
            message = await self._pubsub.get_message(
                ignore_subscribe_messages=True, timeout=max(0.0, timeout)
            )
        except (redis.RedisError, OSError) as error:
            raise InboxLost(str(error)) from error
        if message is None or message.get("type") != "message":
            return None
        try:
            data = json.loads(message["data"])
        except (TypeError, ValueError):
            return Notice(status="?")  # unreadable: the reader reads the row instead
        if "s" in data:
            return Notice(status=str(data["s"]))
        if isinstance(data.get("o"), int) and isinstance(data.get("t"), str):
            return Notice(offset=data["o"], text=data["t"])
        return Notice(status="?")


def _reader_client() -> aioredis.Redis:
    loop = asyncio.get_running_loop()
    client = _readers.get(loop)
    if client is None:
        client = _readers[loop] = aioredis.Redis.from_url(
            settings.REDIS_URL, socket_connect_timeout=2
        )
    return client


@asynccontextmanager
async def run_listen(*, channel: str) -> AsyncIterator[RunInbox | None]:
    """Subscribed to the run's channel for the block, or None without a channel (no
    REDIS_URL, or Redis unreachable: the caller polls). Subscribe before reading the row, so
    nothing written after the read can be missed."""
    if not notify_enabled():
        yield None
        return
    pubsub = _reader_client().pubsub()
    try:
        await pubsub.subscribe(channel)
    except (redis.RedisError, OSError) as error:
        logger.warning("run.listen_failed", extra={"channel": channel, "error": str(error)})
        await _close(pubsub)
        yield None
        return
    try:
        yield RunInbox(pubsub)
    finally:
        await _close(pubsub)


async def _close(pubsub: Any) -> None:
    try:
        await pubsub.aclose()
    except (redis.RedisError, OSError):
        pass  # the connection is gone already
