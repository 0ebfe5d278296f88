"""Two daphne processes sharing PostgreSQL and Redis: lines posted to one reach a viewer
connected to the other, and appends through both keep one consistent trace.

Runs when DATABASE_URL names PostgreSQL and REDIS_URL is set (.ci/run's second pass).
"""

from __future__ import annotations

import asyncio
import json
import os
import urllib.request
import uuid
from urllib.parse import urlsplit, urlunsplit

import pytest

from tests.live.conftest import run_async
from tests.live.events import agent_lines, ndjson
from tests.live.servers import daphne, migrate, server_env
from tests.live.wsclient import connect

DATABASE_URL = os.environ.get("DATABASE_URL", "")
REDIS_URL = os.environ.get("REDIS_URL", "")

pytestmark = pytest.mark.skipif(
    not (DATABASE_URL.startswith(("postgres://", "postgresql://")) and REDIS_URL),
    reason="needs DATABASE_URL pointing at PostgreSQL and REDIS_URL (.ci/run's second pass)",
)


def post(url: str, body: bytes = b"") -> dict:
    request = urllib.request.Request(
        url, data=body, method="POST", headers={"Content-Type": "application/x-ndjson"}
    )
    with urllib.request.urlopen(request, timeout=20) as reply:
        return json.loads(reply.read())


@pytest.fixture
def shared_database():
    """A fresh PostgreSQL database on the server DATABASE_URL names, dropped afterwards."""
    import psycopg

    name = f"loop_inspector_live_{uuid.uuid4().hex[:12]}"
    parts = urlsplit(DATABASE_URL)
    admin = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    try:
        yield urlunsplit(parts._replace(path=f"/{name}"))
    finally:
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


async def read_calls(url: str, wanted: int, received: list[dict], joined: asyncio.Event) -> None:
    """Collect a viewer's messages until `wanted` calls; `joined` is set once the socket is
    open (the consumer joins the trace's group before it accepts)."""
    socket = await connect(url)
    joined.set()
    try:
        while sum(1 for m in received if m["type"] == "call") < wanted:
            messages = await socket.recv_messages(timeout=20)
            assert messages is not None, "the server closed the viewer's socket"
            received.extend(messages)
    finally:
        await socket.close()


def test_a_viewer_on_one_process_sees_lines_posted_to_the_other(shared_database, tmp_path):
    env = server_env(DATABASE_URL=shared_database, REDIS_URL=REDIS_URL)
    migrate(env)
    lines = agent_lines(6)
    with daphne(env, tmp_path / "a.log") as server_a, daphne(env, tmp_path / "b.log") as server_b:
        trace = post(f"{server_a}/api/traces?live=1&name=two-processes")
        path = f"/ws/traces/{trace['id']}/"

        async def scenario() -> tuple[list[dict], list[dict]]:
            on_b: list[dict] = []
            on_a: list[dict] = []
            on_b_joined, on_a_joined = asyncio.Event(), asyncio.Event()
            ws_b, ws_a = server_b.replace("http", "ws"), server_a.replace("http", "ws")
            viewers = [
                asyncio.create_task(read_calls(ws_b + path, 6, on_b, on_b_joined)),
                asyncio.create_task(read_calls(ws_a + path, 6, on_a, on_a_joined)),
            ]
            # Both viewers joined their groups before the first line is posted.
            await asyncio.wait_for(asyncio.gather(on_b_joined.wait(), on_a_joined.wait()), 30)
            sent = 0
            # Batches alternate between the processes: each must catch up on the other's.
            for number, start in enumerate(range(0, len(lines), 3)):
                server = server_a if number % 2 == 0 else server_b
                batch = lines[start : start + 3]
                url = f"{server}/api/traces/{trace['id']}/lines?offset={sent}"
                reply = await asyncio.to_thread(post, url, ndjson(batch))
                sent = reply["total"]
            await asyncio.wait_for(asyncio.gather(*viewers), 60)
            return on_a, on_b

        on_a, on_b = run_async(scenario)
        for received in (on_a, on_b):
            seqs = [m["seq"] for m in received]
            assert seqs == list(range(1, len(seqs) + 1))  # in order, nothing missed or doubled
            assert [m["data"]["index"] for m in received if m["type"] == "call"] == [
                1,
                2,
                3,
                4,
                5,
                6,
            ]
        closed = post(f"{server_b}/api/traces/{trace['id']}/close")
        assert (closed["state"], closed["total"], closed["calls"]) == ("closed", len(lines), 6)
        with urllib.request.urlopen(f"{server_a}/traces/{trace['id']}/download") as download:
            assert download.read() == ndjson(lines)
