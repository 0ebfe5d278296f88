"""A viewer's socket never waits for the process's sync thread (issue 26).

Every thread-sensitive call of a websocket in one process runs on one thread, and
channels hops there before each message a consumer handles. After a web process was
killed under load, the viewers reconnecting to the survivor queued their handshakes
there behind every other socket's work, past daphne's 5 s handshake timeout, and never
got back in (bench/load.py). The consumers now skip channels' hop (their database calls
close their own connections) and run their reads (access check, trace state, backlog,
the head a ping reads) on the event loop's thread pool; here the sync thread is held
busy for the whole scenario and a viewer still connects, gets its backlog and is
answered a ping and a resume.

Through the consumers' own URL router: channels' AuthMiddlewareStack in front of it
reads the session's user on the sync thread (one short call per handshake, left as
channels has it).
"""

from __future__ import annotations

import asyncio
import threading

import pytest
from asgiref.sync import sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.db import connections

from tests.live.events import agent_lines
from tests.live.test_consumers import (
    ORIGIN,
    append,
    create,
    receive_frame,
    run,
    stored_events,
    viewer,
)
from traces import live
from traces.routing import websocket_urlpatterns

pytestmark = pytest.mark.django_db(transaction=True)


async def until_pong(communicator: WebsocketCommunicator) -> tuple[list[dict], dict]:
    events: list[dict] = []
    while True:
        for message in await receive_frame(communicator):
            if message["type"] == "pong":
                return events, message
            events.append(message)


def test_a_viewer_connects_and_catches_up_while_the_sync_thread_is_busy():
    run(_a_viewer_connects_and_catches_up_while_the_sync_thread_is_busy)


async def _a_viewer_connects_and_catches_up_while_the_sync_thread_is_busy():
    trace = await create(name="busy sync thread")
    await append(trace_id=trace.pk, offset=0, lines=agent_lines(3))
    assert await asyncio.to_thread(live.wait_for_reports, 20)
    stored = await stored_events(trace.pk)
    assert len(stored) > 3

    release = threading.Event()
    holding = asyncio.ensure_future(sync_to_async(release.wait)())  # the sync thread, busy
    try:
        await asyncio.sleep(0.1)
        assert not holding.done()
        communicator = WebsocketCommunicator(
            URLRouter(websocket_urlpatterns), f"/ws/traces/{trace.pk}/", headers=ORIGIN
        )
        connected, _ = await communicator.connect(timeout=5)
        assert connected
        backlog: list[dict] = []
        while len(backlog) < len(stored):
            backlog += await receive_frame(communicator, timeout=5)
        assert backlog == stored
        await communicator.send_json_to({"type": "ping", "seq": stored[-1]["seq"]})
        missed, pong = await until_pong(communicator)
        assert missed == []
        assert pong["seq"] == pong["last"] == stored[-1]["seq"]
        # A resume reads the stored events again, from the seq it names.
        await communicator.send_json_to({"type": "resume", "after": stored[-3]["seq"]})
        again, pong = await until_pong(communicator)
        assert again == stored[-2:]
        assert not holding.done()  # all of it while the sync thread was held
        await communicator.disconnect()
    finally:
        release.set()
        await holding


def pool_in_use() -> int | None:
    """Connections checked out of this process's PostgreSQL pool (None: no pool)."""
    pool = getattr(connections["default"], "pool", None)
    if pool is None:
        return None
    stats = pool.get_stats()
    return stats["pool_size"] - stats["pool_available"]


@pytest.mark.skipif(
    connections["default"].vendor != "postgresql", reason="needs PostgreSQL's connection pool"
)
def test_viewer_reads_give_every_pool_connection_back():
    """A read on the loop's pool runs on any of its threads, and a test's loop (with its
    pool) ends after each scenario: a connection a call kept stays checked out for good.
    Closing only the stale ones (channels' `close_old_connections`) kept one per backlog
    read and one per ping here, until PostgreSQL's pool had none left (PoolTimeout)."""
    before = pool_in_use()
    if before is None:
        pytest.skip("PostgreSQL without Django's pool (INSPECTOR_DB_POOL=0 or PgBouncer)")
    for number in range(3):
        run(_a_viewer_reads_its_backlog_and_pings, number)
    assert pool_in_use() <= before


async def _a_viewer_reads_its_backlog_and_pings(number: int) -> None:
    trace = await create(name=f"pool {number}")
    await append(trace_id=trace.pk, offset=0, lines=agent_lines(3))
    assert await asyncio.to_thread(live.wait_for_reports, 20)
    stored = await stored_events(trace.pk)
    watcher = await viewer(trace.pk)
    backlog: list[dict] = []
    while len(backlog) < len(stored):
        backlog += await receive_frame(watcher)
    await watcher.send_json_to({"type": "ping", "seq": stored[-1]["seq"]})
    missed, pong = await until_pong(watcher)
    assert (backlog, missed, pong["last"]) == (stored, [], stored[-1]["seq"])
    await watcher.disconnect()
