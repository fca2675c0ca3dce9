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
from dataclasses import dataclass
from typing import Any

import redis
import redis.asyncio as aioredis
from django.conf import settings
from django.db import connection, transaction

logger = logging.getLogger(__name__)

_publisher: dict[str, redis.Redis] = {}


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
#
# One subscriber connection per web process (per event loop), whatever the number of open
# streams: a hub keeps it, subscribes to a run's channel while at least one stream of that run
# is open, and hands each message to the inboxes of the run's streams. A connection per stream
# did not hold: with 500 streams opened at once some subscriptions timed out, and those streams
# polled the row for the rest of their life (a core's worth of reads; docs/operations.md).

INBOX_SIZE = 256  # notices a slow stream may have waiting; past it, it reads the row instead
SUBSCRIBE_TIMEOUT = 2.0  # seconds to wait for Redis to confirm a subscription


@dataclass(frozen=True)
class Notice:
    """A message on a run's channel: a piece of output at `offset`, or a new `status`."""

    offset: int | None = None
    text: str = ""
    status: str = ""


RESYNC = Notice(status="?")  # "read the row": an unreadable message, or notices were dropped


class InboxLost(Exception):
    """The channel's connection broke: the reader falls back to polling the row."""


class RunInbox:
    """One stream's notices, filled by its process's hub."""

    def __init__(self, hub: _Hub, channel: str) -> None:
        self.hub = hub
        self.channel = channel
        self._queue: asyncio.Queue[Notice | None] = asyncio.Queue(maxsize=INBOX_SIZE)
        self._lost = False

    def put(self, notice: Notice) -> None:
        try:
            self._queue.put_nowait(notice)
        except asyncio.QueueFull:
            # Drop the backlog and ask for one read of the row, which holds all of it.
            while not self._queue.empty():
                self._queue.get_nowait()
            self._queue.put_nowait(RESYNC)

    def lose(self) -> None:
        self._lost = True
        if self._queue.full():
            self._queue.get_nowait()
        self._queue.put_nowait(None)

    async def next(self, *, timeout: float) -> Notice | None:
        """The next notice, or None when nothing came within `timeout` seconds; InboxLost once
        the hub's connection broke."""
        if self._lost and self._queue.empty():
            raise InboxLost(self.channel)
        try:
            notice = await asyncio.wait_for(self._queue.get(), timeout=max(0.0, timeout))
        except TimeoutError:
            return None
        if notice is None:
            raise InboxLost(self.channel)
        return notice


def _notice(data: Any) -> Notice:
    try:
        body = json.loads(data)
    except (TypeError, ValueError):
        return RESYNC
    if not isinstance(body, dict):
        return RESYNC
    if "s" in body:
        return Notice(status=str(body["s"]))
    if isinstance(body.get("o"), int) and isinstance(body.get("t"), str):
        return Notice(offset=body["o"], text=body["t"])
    return RESYNC


class _Hub:
    """The process's subscriber connection and the inboxes listening on each channel."""

    def __init__(self) -> None:
        self.client = aioredis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=2)
        self.pubsub = self.client.pubsub()
        self.inboxes: dict[str, set[RunInbox]] = {}
        self.confirmed: dict[str, asyncio.Event] = {}
        self.lock = asyncio.Lock()  # one SUBSCRIBE / UNSUBSCRIBE at a time on the connection
        self.reader: asyncio.Task[None] | None = None
        self.lost = False

    async def join(self, channel: str) -> RunInbox:
        async with self.lock:
            if self.lost:
                raise InboxLost(channel)
            inbox = RunInbox(self, channel)
            listeners = self.inboxes.setdefault(channel, set())
            listeners.add(inbox)
            if len(listeners) == 1:
                confirmed = self.confirmed[channel] = asyncio.Event()
                try:
                    await self.pubsub.subscribe(channel)
                except (redis.RedisError, OSError) as error:
                    self._break(error)
                    raise InboxLost(channel) from error
                if self.reader is None:
                    self.reader = asyncio.create_task(self._read())
            else:
                confirmed = self.confirmed[channel]
        # Nothing published after the confirmation can be missed, and the caller reads the row
        # after this returns: so the row and the channel together hold every piece.
        try:
            await asyncio.wait_for(confirmed.wait(), timeout=SUBSCRIBE_TIMEOUT)
        except TimeoutError:
            await self.leave(inbox)
            raise InboxLost(channel) from None
        return inbox

    async def leave(self, inbox: RunInbox) -> None:
        async with self.lock:
            listeners = self.inboxes.get(inbox.channel)
            if listeners is None:
                return
            listeners.discard(inbox)
            if listeners or self.lost:
                return
            del self.inboxes[inbox.channel]
            self.confirmed.pop(inbox.channel, None)
            try:
                await self.pubsub.unsubscribe(inbox.channel)
            except (redis.RedisError, OSError) as error:
                self._break(error)

    async def _read(self) -> None:
        try:
            while True:
                message = await self.pubsub.get_message(timeout=None)
                if message is None:
                    continue
                channel = message.get("channel")
                if isinstance(channel, bytes):
                    channel = channel.decode()
                kind = message.get("type")
                if kind == "subscribe":
                    event = self.confirmed.get(channel)
                    if event is not None:
                        event.set()
                elif kind == "message":
                    notice = _notice(message.get("data"))
                    for inbox in list(self.inboxes.get(channel, ())):
                        inbox.put(notice)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # noqa: BLE001 - any failure ends the hub; streams poll
            self._break(error)

    def _break(self, error: BaseException) -> None:
        if self.lost:
            return
        self.lost = True
        logger.warning("run.notify_lost", extra={"error": str(error)})
        if _hubs.get(asyncio.get_running_loop()) is self:
            del _hubs[asyncio.get_running_loop()]
        for listeners in self.inboxes.values():
            for inbox in listeners:
                inbox.lose()
        for event in self.confirmed.values():
            event.set()  # waiters see `lost` and give up
        asyncio.get_running_loop().create_task(self._close())

    async def _close(self) -> None:
        if self.reader is not None and self.reader is not asyncio.current_task():
            self.reader.cancel()
        try:
            await self.pubsub.aclose()
            await self.client.aclose()
        except (redis.RedisError, OSError):
            pass  # the connection is gone already


_hubs: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Hub] = weakref.WeakKeyDictionary()


async def run_join(*, channel: str) -> RunInbox | None:
    """An inbox on the run's channel, or None without a channel (no REDIS_URL, or Redis
    unreachable: the caller polls the row, and may try again later). Call it before reading the
    row: nothing written after that read can be missed. Leave with `run_leave`."""
    if not notify_enabled():
        return None
    loop = asyncio.get_running_loop()
    hub = _hubs.get(loop)
    if hub is None:
        hub = _hubs[loop] = _Hub()
    try:
        inbox = await hub.join(channel)
    except InboxLost:
        logger.warning("run.listen_failed", extra={"channel": channel})
        return None
    if hub.lost:
        return None
    return inbox


async def run_leave(inbox: RunInbox | None) -> None:
    if inbox is not None:
        await inbox.hub.leave(inbox)
