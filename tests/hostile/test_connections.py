"""A long-running server holds no more database connections or frozen garbage than it uses.

Issue 26: each request's SQLite connection stayed open after the request (under ASGI
each request's sync code runs on a thread of its own; the kept connection was never
reused and stayed open until the collector freed it, which `gc.freeze()` after a report
cache miss prevented), so a daphne ran out of file descriptors after ~40,000 requests.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

import httpx
import pytest

from tests.live.events import agent_lines
from tests.live.servers import daphne, migrate, process_figures, server_env, server_pid
from tests.live.wsclient import connect
from traces.core.reading.sample import sample_bytes

DATABASE_URL = os.environ.get("DATABASE_URL", "")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("connections")
    database = folder / "db.sqlite3"
    env = server_env(DATABASE_URL=f"sqlite:///{database}", REDIS_URL="")
    migrate(env)
    with daphne(env, folder / "daphne.log") as url:
        yield url, str(database)


async def _pages(base: str, traces: int) -> list[int]:
    async with httpx.AsyncClient(timeout=60) as client:
        ids = []
        for n in range(traces):
            answer = await client.post(
                f"{base}/api/traces", files={"file": (f"c{n}.jsonl", sample_bytes())}
            )
            ids.append(answer.json()["id"])
        statuses = []
        for start in range(0, len(ids), 10):  # ten at a time, each a report-cache miss
            answers = await asyncio.gather(
                *(client.get(f"{base}/traces/{trace}/") for trace in ids[start : start + 10])
            )
            statuses += [answer.status_code for answer in answers]
        return statuses


def test_distinct_trace_pages_leave_no_sqlite_connection_open(server):
    """Long-lived threads (the ingest pool, the embedded queue) keep a connection each;
    requests keep none: 90 more distinct pages add no open database file."""
    base, database = server
    pid = server_pid(base)
    assert asyncio.run(_pages(base, 30)) == [200] * 30
    _fds, settled, _rss = process_figures(pid, database)
    assert asyncio.run(_pages(base, 90)) == [200] * 90
    # A request's connection is closed by request_finished, which Django sends after the
    # last body chunk: the client can hold its answer a moment before that. Give the last
    # batch up to 5 s to finish; a leak (before the fix: ~2 more files per request, the
    # database and its WAL, ~180 here) never settles.
    deadline = time.monotonic() + 5
    while True:
        _fds, after, _rss = process_figures(pid, database)
        if after <= max(settled, 3) + 6 or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert after <= max(settled, 3) + 6, (settled, after)
    assert after < 30, after


async def _live_trace(base: str) -> tuple[str, int]:
    """A live trace with a few calls: its id and the seq of its last stored event."""
    async with httpx.AsyncClient(timeout=60) as client:
        created = await client.post(f"{base}/api/traces?live=1&format=loop-inspector")
        trace_id = created.json()["id"]
        body = b"".join(line + b"\n" for line in agent_lines(4, finish=False))
        appended = await client.post(f"{base}/api/traces/{trace_id}/lines?offset=0", content=body)
        assert appended.status_code == 200, appended.text
    # The events of the batch, then those of its report (refreshed after the batch): the
    # stored last seq once it stops moving.
    last, seen = 0, -1
    while last != seen:
        await asyncio.sleep(1.0)
        seen, last = last, await _stored_last(base, trace_id)
    return trace_id, last


async def _stored_last(base: str, trace_id: str) -> int:
    """The trace's stored last seq, as a viewer's pong names it."""
    socket_ = await connect(f"{base.replace('http', 'ws')}/ws/traces/{trace_id}/", timeout=30)
    try:
        await socket_.send_json({"type": "ping", "seq": 0})
        while True:
            text = await asyncio.wait_for(socket_.recv(), 30)
            assert text is not None
            for line in text.splitlines():
                message = json.loads(line)
                if message["type"] == "pong":
                    return message["last"]
    finally:
        await socket_.close()


async def _viewers(base: str, trace_id: str, count: int) -> list[int]:
    """`count` viewers at once, each given the backlog and answered a ping and a resume
    (each a read on the event loop's thread pool), then closed: the seqs each pong named."""

    async def one() -> int:
        socket_ = await connect(f"{base.replace('http', 'ws')}/ws/traces/{trace_id}/", timeout=30)
        got, pongs = 0, 0
        try:
            await socket_.send_json({"type": "ping", "seq": 0})
            await socket_.send_json({"type": "resume", "after": 0})
            while pongs < 2:
                text = await asyncio.wait_for(socket_.recv(), 30)
                assert text is not None
                for line in text.splitlines():
                    message = json.loads(line)
                    if message["type"] == "pong":
                        pongs += 1
                        assert message["seq"] == message["last"]
                    else:
                        got = message["seq"]
            return got
        finally:
            await socket_.close()

    return await asyncio.gather(*(one() for _ in range(count)))


def test_viewer_sockets_leave_no_sqlite_connection_open(server):
    """A viewer's reads run on the event loop's thread pool, a thread per call at random:
    each call closes its connection, so 120 viewers (backlog, ping, resume) leave no
    database file open. Kept open, each pool thread would hold the database and its WAL."""
    base, database = server
    pid = server_pid(base)
    trace_id, last = asyncio.run(_live_trace(base))
    assert last > 0
    _fds, settled, _rss = process_figures(pid, database)
    for _ in range(4):
        assert asyncio.run(_viewers(base, trace_id, 30)) == [last] * 30
    deadline = time.monotonic() + 5
    while True:
        _fds, after, _rss = process_figures(pid, database)
        if after <= max(settled, 3) + 6 or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert after <= max(settled, 3) + 6, (settled, after)


def test_process_figures_count_this_process(tmp_path):
    """The helper the test relies on sees an open file as one descriptor on it."""
    path = tmp_path / "probe.sqlite3"
    before = process_figures(os.getpid(), str(path))[1]
    with Path(path).open("wb"):
        assert process_figures(os.getpid(), str(path))[1] == before + 1
