"""A long-running server holds no more database connections or frozen garbage than it uses.

Issue 26: each request's SQLite connection stayed open after the request (under ASGI
each request's sync code runs on a thread of its own; the kept connection was never
reused and stayed open until the collector freed it, which `gc.freeze()` after a report
cache miss prevented), so a daphne ran out of file descriptors after ~40,000 requests.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import httpx
import pytest

from tests.live.servers import daphne, migrate, process_figures, server_env, server_pid
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


def test_process_figures_count_this_process(tmp_path):
    """The helper the test relies on sees an open file as one descriptor on it."""
    path = tmp_path / "probe.sqlite3"
    before = process_figures(os.getpid(), str(path))[1]
    with Path(path).open("wb"):
        assert process_figures(os.getpid(), str(path))[1] == before + 1
