"""Websockets of live traces, through the project's ASGI application (in-memory or Redis
channel layer, whichever the settings name)."""

from __future__ import annotations

import asyncio
import json

import orjson
import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.db import connections

from inspector.asgi import application
from tests.live.conftest import run_async
from tests.live.events import agent_lines
from traces import live, models
from traces.live import events as live_events

pytestmark = pytest.mark.django_db(transaction=True)

ORIGIN = [(b"origin", b"http://127.0.0.1"), (b"host", b"127.0.0.1")]
create = database_sync_to_async(live.create_live_trace)
append = database_sync_to_async(live.append_lines)
close = database_sync_to_async(live.close_live_trace)


def failed_call_lines(call_id: str = "c-err") -> list[bytes]:
    """A call that timed out: the api-error rule reports it."""
    request = {
        "type": "request",
        "call_id": call_id,
        "ts": 1_750_000_050.0,
        "body": {"model": "claude-sonnet-4-5", "messages": [{"role": "user", "content": "title?"}]},
    }
    response = {
        "type": "response",
        "call_id": call_id,
        "ts": 1_750_000_051.0,
        "error": "read timeout",
    }
    return [orjson.dumps(request), orjson.dumps(response)]  # fmt: skip


def run(scenario, *args):
    """Run an async scenario in a thread of its own (see tests.live.conftest.run_async),
    then close the connection that database_sync_to_async's thread keeps (CONN_MAX_AGE),
    or PostgreSQL cannot drop the test database at the end."""

    async def closing():
        try:
            return await scenario(*args)
        finally:
            await database_sync_to_async(connections.close_all)()

    return run_async(closing)


async def viewer(trace_id, after: int | None = None) -> WebsocketCommunicator:
    path = f"/ws/traces/{trace_id}/" + ("" if after is None else f"?after={after}")
    communicator = WebsocketCommunicator(application, path, headers=ORIGIN)
    connected, _ = await communicator.connect(timeout=10)
    assert connected
    return communicator


async def receive_frame(communicator, timeout: float = 10.0) -> list[dict]:
    """The messages of one frame: one JSON object per line."""
    text = await communicator.receive_from(timeout=timeout)
    return [json.loads(line) for line in text.split("\n")]


async def receive_until(communicator, done, timeout: float = 10.0) -> list[dict]:
    """Messages (whole frames) until `done(message)` is true for one."""
    messages = []
    while not any(done(m) for m in messages):
        messages += await receive_frame(communicator, timeout)
    return messages


def is_closed_state(message: dict) -> bool:
    return message["type"] == "state" and message["data"]["state"] == "closed"


async def stored_events(trace_id) -> list[dict]:
    return await database_sync_to_async(live.events_after)(trace_id=trace_id, after=0)


def test_a_viewer_gets_calls_tool_runs_findings_and_state_in_seq_order():
    run(_a_viewer_gets_calls_tool_runs_findings_and_state_in_seq_order)


async def _a_viewer_gets_calls_tool_runs_findings_and_state_in_seq_order():
    trace = await create(name="watched")
    watcher = await viewer(trace.pk)
    lines = agent_lines(2, finish=False) + failed_call_lines()
    result = await append(trace_id=trace.pk, offset=0, lines=lines[:5])
    batch = await receive_frame(watcher)  # one frame per batch: the call and its tool run
    assert [(m["type"], m["seq"]) for m in batch] == [("call", 1), ("tool_run", 2)]
    assert batch[0]["data"]["index"] == 1
    assert batch[0]["data"]["tool_names"] == ["search"]
    await append(trace_id=trace.pk, offset=result.total, lines=lines[5:])
    assert await asyncio.to_thread(live.wait_for_reports, 20)
    await close(trace_id=trace.pk)
    messages = [*batch, *await receive_until(watcher, is_closed_state)]
    assert [m["seq"] for m in messages] == list(range(1, len(messages) + 1))
    assert messages == await stored_events(trace.pk)
    kinds = {m["type"] for m in messages}
    assert kinds == {"call", "call_account", "tool_run", "finding", "state"}
    calls = [m["data"]["index"] for m in messages if m["type"] == "call"]
    assert calls == [1, 2, 3]
    # Each call's accounting follows once a report covers it.
    assert [m["data"]["index"] for m in messages if m["type"] == "call_account"] == calls
    findings = [m["data"] for m in messages if m["type"] == "finding"]
    assert any(f["rule"] == "api-error" and f["call"] == 3 for f in findings)
    runs = [m["data"] for m in messages if m["type"] == "tool_run"]
    assert runs[-1]["status"] == "dangling"  # closing settled the unanswered tool call
    await watcher.receive_nothing(timeout=0.2)
    await watcher.disconnect()


def test_resuming_with_after_skips_nothing_and_repeats_nothing():
    run(_resuming_with_after_skips_nothing_and_repeats_nothing)


async def _resuming_with_after_skips_nothing_and_repeats_nothing():
    trace = await create(name="resumed")
    lines = agent_lines(4)
    first = await viewer(trace.pk)
    await append(trace_id=trace.pk, offset=0, lines=lines[:6])
    seen = await receive_until(first, lambda m: m["type"] == "call" and m["data"]["index"] == 1)
    await first.disconnect()  # the page loses its connection here
    await append(trace_id=trace.pk, offset=6, lines=lines[6:])
    await close(trace_id=trace.pk)
    last_seq = seen[-1]["seq"]
    resumed = await viewer(trace.pk, after=last_seq)
    rest = await receive_until(resumed, is_closed_state)
    await resumed.receive_nothing(timeout=0.2)
    everything = await stored_events(trace.pk)
    assert seen + rest == everything
    assert [m["seq"] for m in everything] == list(range(1, len(everything) + 1))
    late = await viewer(trace.pk)  # a page opened after the fact gets the whole backlog
    assert await receive_until(late, is_closed_state) == everything
    for communicator in (resumed, late):
        await communicator.disconnect()


def test_a_lost_broadcast_is_filled_from_storage_and_a_repeated_one_is_dropped(monkeypatch):
    run(_a_lost_broadcast_is_filled_from_storage_and_a_repeated_one_is_dropped, monkeypatch)


async def _a_lost_broadcast_is_filled_from_storage_and_a_repeated_one_is_dropped(monkeypatch):
    sent = []
    real_broadcast = live_events.broadcast

    def unreliable(trace_id, first_seq, texts):
        sent.append(texts)
        if len(sent) == 1:
            return  # the first message never arrives
        # Later ones arrive in part, then whole (overlapping), then whole again.
        real_broadcast(trace_id, first_seq, texts[: len(texts) // 2])
        real_broadcast(trace_id, first_seq, texts)
        real_broadcast(trace_id, first_seq, texts)

    monkeypatch.setattr(live_events, "broadcast", unreliable)
    trace = await create(name="lossy")
    watcher = await viewer(trace.pk)
    lines = agent_lines(3)
    await append(trace_id=trace.pk, offset=0, lines=lines[:4])
    await watcher.receive_nothing(timeout=0.3)
    await append(trace_id=trace.pk, offset=4, lines=lines[4:])
    await close(trace_id=trace.pk)
    messages = await receive_until(watcher, is_closed_state)
    await watcher.receive_nothing(timeout=0.3)
    assert messages == await stored_events(trace.pk)
    await watcher.disconnect()


def test_the_ingest_socket_acknowledges_refuses_gaps_and_closes():
    run(_the_ingest_socket_acknowledges_refuses_gaps_and_closes)


async def _the_ingest_socket_acknowledges_refuses_gaps_and_closes():
    trace = await create(name="socket-fed")
    lines = [line.decode() for line in agent_lines(2)]
    agent = WebsocketCommunicator(application, f"/ws/ingest/{trace.pk}/", headers=ORIGIN)
    connected, _ = await agent.connect(timeout=10)
    assert connected
    await agent.send_json_to({"offset": 0, "lines": lines[:3]})
    assert await agent.receive_json_from(timeout=10) == {"type": "ack", "total": 3, "accepted": 3}
    await agent.send_json_to({"offset": 1, "lines": lines[1:4]})  # a resend overlapping
    assert await agent.receive_json_from(timeout=10) == {"type": "ack", "total": 4, "accepted": 1}
    await agent.send_json_to({"offset": 6, "lines": lines[6:]})  # lines 4 and 5 never came
    gap = await agent.receive_json_from(timeout=10)
    assert (gap["type"], gap["expected"]) == ("error", 4)
    await agent.send_json_to({"offset": "four", "lines": lines[4:]})
    assert "offset" in (await agent.receive_json_from(timeout=10))["error"]
    await agent.send_to(text_data="not json")
    assert (await agent.receive_json_from(timeout=10))["type"] == "error"
    await agent.send_json_to({"offset": 4, "lines": lines[4:]})
    assert await agent.receive_json_from(timeout=10) == {"type": "ack", "total": 7, "accepted": 3}
    await agent.send_json_to({"type": "close"})
    assert await agent.receive_json_from(timeout=10) == {"type": "closed", "total": 7}
    stored = await database_sync_to_async(models.Trace.objects.get)(pk=trace.pk)
    assert (stored.state, stored.calls_count, stored.lines_total) == ("closed", 2, 7)
    # A closed trace takes no socket.
    late = WebsocketCommunicator(application, f"/ws/ingest/{trace.pk}/", headers=ORIGIN)
    connected, _ = await late.connect(timeout=10)
    assert not connected


def test_unknown_traces_and_foreign_origins_are_refused():
    run(_unknown_traces_and_foreign_origins_are_refused)


async def _unknown_traces_and_foreign_origins_are_refused():
    missing = "00000000-0000-0000-0000-000000000000"
    communicator = WebsocketCommunicator(application, f"/ws/traces/{missing}/", headers=ORIGIN)
    connected, _ = await communicator.connect(timeout=10)
    assert not connected
    trace = await create(name="guarded")
    foreign = WebsocketCommunicator(
        application, f"/ws/ingest/{trace.pk}/", headers=[(b"origin", b"http://evil.example")]
    )
    connected, _ = await foreign.connect(timeout=10)
    assert not connected


def test_a_viewer_that_waited_longer_than_a_read_timeout_still_gets_events():
    """With channels_redis, the viewer's channel is read with 5-second blocking pops:
    the Redis client's socket timeout must be longer than that (redis-py 8 defaults to
    5 s), or an idle page's consumer dies. In-memory, this passes trivially."""
    run(_a_viewer_that_waited_longer_than_a_read_timeout_still_gets_events)


async def _a_viewer_that_waited_longer_than_a_read_timeout_still_gets_events():
    trace = await create(name="quiet")
    watcher = await viewer(trace.pk)
    await asyncio.sleep(6.5)
    await append(trace_id=trace.pk, offset=0, lines=agent_lines(1))
    batch = await receive_frame(watcher)
    assert batch[0]["type"] == "call"
    await watcher.disconnect()


def test_viewers_that_miss_the_same_broadcast_each_get_every_event_once(monkeypatch):
    run(_viewers_that_miss_the_same_broadcast_each_get_every_event_once, monkeypatch)


async def _viewers_that_miss_the_same_broadcast_each_get_every_event_once(monkeypatch):
    """The hole is filled by one read shared by the viewers (traces.live.backlog); each
    still gets the stored events in order, none twice."""
    sent = []
    real_broadcast = live_events.broadcast

    def losing_the_first(trace_id, first_seq, texts):
        sent.append(texts)
        if len(sent) > 1:
            real_broadcast(trace_id, first_seq, texts)

    monkeypatch.setattr(live_events, "broadcast", losing_the_first)
    trace = await create(name="shared hole")
    watchers = [await viewer(trace.pk) for _ in range(4)]
    lines = agent_lines(3)
    await append(trace_id=trace.pk, offset=0, lines=lines[:4])
    await append(trace_id=trace.pk, offset=4, lines=lines[4:])
    await close(trace_id=trace.pk)
    everything = await stored_events(trace.pk)
    assert len(sent) >= 2 and len(sent[0]) >= 1  # a first batch was lost
    for watcher in watchers:
        assert await receive_until(watcher, is_closed_state) == everything
        await watcher.receive_nothing(timeout=0.2)
        await watcher.disconnect()
