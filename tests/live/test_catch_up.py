"""A viewer converges on the stored trace when broadcasts are lost (issue 26): a ping sends
what the socket missed, even the last events (no later message reveals that hole), a
resume re-sends from a seq, and nothing is ever sent twice. Through the project's ASGI
application, on whichever channel layer the settings name (in-memory, or channels_redis
with REDIS_URL)."""

from __future__ import annotations

import asyncio

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from tests.live.events import agent_lines
from tests.live.test_consumers import (
    append,
    close,
    create,
    is_closed_state,
    receive_frame,
    run,
    stored_events,
    viewer,
)
from traces import live
from traces.live import consumers
from traces.live import events as live_events

pytestmark = pytest.mark.django_db(transaction=True)


async def until_pong(communicator: WebsocketCommunicator) -> tuple[list[dict], dict]:
    """The events received before the next pong, and the pong."""
    events: list[dict] = []
    while True:
        for message in await receive_frame(communicator):
            if message["type"] == "pong":
                return events, message
            events.append(message)


def test_a_ping_sends_the_last_events_a_lost_broadcast_never_brought(monkeypatch):
    run(_a_ping_sends_the_last_events_a_lost_broadcast_never_brought, monkeypatch)


async def _a_ping_sends_the_last_events_a_lost_broadcast_never_brought(monkeypatch):
    trace = await create(name="lost tail")
    watcher = await viewer(trace.pk)
    real_broadcast = live_events.broadcast
    monkeypatch.setattr(live_events, "broadcast", lambda *args: None)  # the layer lost them
    lines = agent_lines(3)
    await append(trace_id=trace.pk, offset=0, lines=lines)
    assert await asyncio.to_thread(live.wait_for_reports, 20)
    assert await watcher.receive_nothing(timeout=0.3)  # no later message reveals the hole
    stored = await stored_events(trace.pk)
    assert stored
    await watcher.send_json_to({"type": "ping", "seq": 0})
    missed, pong = await until_pong(watcher)
    assert missed == stored
    assert pong == {"type": "pong", "seq": stored[-1]["seq"], "last": stored[-1]["seq"],
                    "state": "live"}  # fmt: skip
    # Caught up: the next ping (once the socket may read again) sends nothing twice.
    monkeypatch.setattr(consumers, "CATCH_UP_SECONDS", 0.0)
    await watcher.send_json_to({"type": "ping", "seq": stored[-1]["seq"]})
    again, pong = await until_pong(watcher)
    assert again == []
    assert pong["last"] == pong["seq"] == stored[-1]["seq"]
    # Broadcasts work again: the stream goes on after what the catch-up sent, once each.
    monkeypatch.setattr(live_events, "broadcast", real_broadcast)
    await close(trace_id=trace.pk)
    rest = []
    while not any(is_closed_state(m) for m in rest):
        rest += await receive_frame(watcher)
    assert await watcher.receive_nothing(timeout=0.3)
    assert missed + rest == await stored_events(trace.pk)
    await watcher.disconnect()


def test_a_resume_fills_a_gap_in_the_middle_exactly_once():
    run(_a_resume_fills_a_gap_in_the_middle_exactly_once)


async def _a_resume_fills_a_gap_in_the_middle_exactly_once():
    trace = await create(name="gap")
    lines = agent_lines(4)
    await append(trace_id=trace.pk, offset=0, lines=lines)
    await close(trace_id=trace.pk)
    stored = await stored_events(trace.pk)
    watcher = await viewer(trace.pk)
    backlog = []
    while not any(is_closed_state(m) for m in backlog):
        backlog += await receive_frame(watcher)
    assert backlog == stored
    # The page found it lacks everything after seq 3 (it dropped a frame, say).
    await watcher.send_json_to({"type": "resume", "after": 3})
    refilled, pong = await until_pong(watcher)
    assert refilled == stored[3:]
    assert (pong["seq"], pong["last"], pong["state"]) == (stored[-1]["seq"],) * 2 + ("closed",)
    assert await watcher.receive_nothing(timeout=0.3)
    await watcher.send_json_to({"type": "resume", "after": -1})
    assert (await watcher.receive_json_from(timeout=5))["type"] == "error"
    await watcher.disconnect()


def test_pings_between_catch_ups_are_answered_without_reading_again(monkeypatch):
    run(_pings_between_catch_ups_are_answered_without_reading_again, monkeypatch)


async def _pings_between_catch_ups_are_answered_without_reading_again(monkeypatch):
    trace = await create(name="chatty")
    watcher = await viewer(trace.pk)
    monkeypatch.setattr(live_events, "broadcast", lambda *args: None)
    monkeypatch.setattr(consumers, "CATCH_UP_SECONDS", 60.0)
    await watcher.send_json_to({"type": "ping"})
    assert await until_pong(watcher) == ([], {"type": "pong", "seq": 0, "last": 0,
                                             "state": "live"})  # fmt: skip
    await append(trace_id=trace.pk, offset=0, lines=agent_lines(1))
    await watcher.send_json_to({"type": "ping"})  # too soon: what the socket knew
    assert await until_pong(watcher) == ([], {"type": "pong", "seq": 0, "last": 0,
                                             "state": "live"})  # fmt: skip
    await watcher.send_json_to({"type": "resume", "after": 0})  # a resume always reads
    missed, pong = await until_pong(watcher)
    assert missed == await stored_events(trace.pk)
    assert pong["seq"] == pong["last"] == missed[-1]["seq"]
    await watcher.disconnect()
    await database_sync_to_async(live.wait_for_reports)(20)
