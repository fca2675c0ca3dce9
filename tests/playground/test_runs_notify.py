"""The run streams' notification channel (playground/runs/notify.py): one subscriber connection
per process, shared by every open stream, and a clean fallback to polling without it."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import pytest
import redis

from playground.runs import notify
from tests.conftest import free_port

T = TypeVar("T")


def _run(make: Callable[[], Awaitable[T]]) -> T:
    """The coroutine on a fresh event loop of its own thread (browser tests may leave a loop on
    the main thread)."""
    result: list[T] = []
    errors: list[BaseException] = []

    def target() -> None:
        try:
            result.append(asyncio.run(make()))  # type: ignore[arg-type]
        except BaseException as error:  # noqa: BLE001 - re-raised on the test's thread
            errors.append(error)

    thread = threading.Thread(target=target)
    thread.start()
    thread.join(60)
    if errors:
        raise errors[0]
    return result[0]


def test_without_redis_there_is_no_inbox_and_streams_poll(settings):
    settings.REDIS_URL = ""
    assert _run(lambda: notify.run_join(channel="redline:test:run:1")) is None


def test_an_unreachable_redis_gives_no_inbox_instead_of_an_error(settings):
    settings.REDIS_URL = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    assert _run(lambda: notify.run_join(channel="redline:test:run:2")) is None


@pytest.fixture
def live_redis(settings) -> redis.Redis:
    if not settings.REDIS_URL:
        pytest.skip("needs REDIS_URL (the services pass)")
    return redis.Redis.from_url(settings.REDIS_URL)


def test_streams_of_a_run_share_one_subscription_and_each_gets_every_notice(live_redis):
    channel = f"redline:test:run:shared-{free_port()}"

    async def scenario() -> tuple[int, list[notify.Notice | None], list[notify.Notice | None], int]:
        first = await notify.run_join(channel=channel)
        second = await notify.run_join(channel=channel)
        assert first is not None and second is not None
        ((_, subscribers),) = live_redis.pubsub_numsub(channel)
        live_redis.publish(channel, '{"o": 0, "t": "Hel"}')
        live_redis.publish(channel, '{"s": "done"}')
        got = [
            [await inbox.next(timeout=5), await inbox.next(timeout=5)] for inbox in (first, second)
        ]
        await notify.run_leave(first)
        await notify.run_leave(second)
        # The UNSUBSCRIBE reaches the server a moment later: polled until it has, or 10 s.
        deadline = time.monotonic() + 10
        while (after := live_redis.pubsub_numsub(channel)[0][1]) and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        return subscribers, got[0], got[1], after

    subscribers, first, second, after = _run(scenario)
    expected = [notify.Notice(offset=0, text="Hel"), notify.Notice(status="done")]
    assert (subscribers, first, second, after) == (1, expected, expected, 0)


def test_a_stream_that_falls_behind_is_told_to_read_the_row(live_redis, monkeypatch):
    monkeypatch.setattr(notify, "INBOX_SIZE", 2)
    channel = f"redline:test:run:behind-{free_port()}"

    async def scenario() -> list[notify.Notice | None]:
        inbox = await notify.run_join(channel=channel)
        marker = await notify.run_join(channel=f"{channel}:marker")
        assert inbox is not None and marker is not None
        for offset in range(5):
            live_redis.publish(channel, f'{{"o": {offset}, "t": "x"}}')
        # All five arrive while nobody reads: the hub reads one connection in order, so once a
        # notice published after them has reached another channel's inbox, they are all in.
        live_redis.publish(f"{channel}:marker", '{"s": "done"}')
        assert await marker.next(timeout=5) == notify.Notice(status="done")
        notices = [await inbox.next(timeout=0.2) for _ in range(3)]
        await notify.run_leave(inbox)
        await notify.run_leave(marker)
        return notices

    notices = _run(scenario)
    # The backlog was dropped for one "read the row" (the row holds every piece); then nothing.
    assert notices[0] == notify.RESYNC
    assert notices[-1] is None
