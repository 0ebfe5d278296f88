"""Hostile frames on both websockets get `{"type": "error"}` answers, never a crashed
handler (close 1011): the socket stays usable and nothing of a bad frame is stored."""

from __future__ import annotations

import json

import orjson
import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.db import connections

from inspector.asgi import application
from tests.hostile import inputs
from tests.live.conftest import run_async, settled_live_state  # noqa: F401 (autouse fixture)
from tests.live.events import agent_lines
from traces import live, models

pytestmark = pytest.mark.django_db(transaction=True)

ORIGIN = [(b"origin", b"http://127.0.0.1"), (b"host", b"127.0.0.1")]
DEEP_FRAME = "[" * 100_000 + "]" * 100_000

INGEST_FRAMES = {
    "lone-surrogate": '{"offset": 0, "lines": ["{\\"type\\": \\"meta\\", \\"x\\": \\"\\ud800\\"}"]}',
    "deep-frame": DEEP_FRAME,
    "deep-object-frame": '{"a":' * 50_000 + "1" + "}" * 50_000,
    "not-json": "{offset: 0",
    "negative-offset": '{"offset": -1, "lines": []}',
    "lines-not-strings": '{"offset": 0, "lines": [1, 2]}',
}


def run(scenario, *args):
    async def closing():
        try:
            return await scenario(*args)
        finally:
            await database_sync_to_async(connections.close_all)()

    return run_async(closing)


async def connect(path: str) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(application, path, headers=ORIGIN)
    connected, _ = await communicator.connect(timeout=10)
    assert connected
    return communicator


@pytest.mark.parametrize("frame", list(INGEST_FRAMES.values()), ids=list(INGEST_FRAMES))
def test_the_ingest_socket_answers_a_hostile_frame_with_an_error(frame):
    run(_ingest_answers, frame)


async def _ingest_answers(frame: str) -> None:
    trace = await database_sync_to_async(live.create_live_trace)(name="ws")
    socket = await connect(f"/ws/ingest/{trace.pk}/")
    await socket.send_to(text_data=frame)
    answer = json.loads(await socket.receive_from(timeout=10))
    assert answer["type"] == "error" and answer["error"]
    # Still open and usable: a good frame after the bad one is stored.
    good = [line.decode() for line in agent_lines(1)]
    await socket.send_to(text_data=json.dumps({"offset": 0, "lines": good}))
    assert json.loads(await socket.receive_from(timeout=10)) == {
        "type": "ack",
        "total": len(good),
        "accepted": len(good),
    }
    await socket.send_to(bytes_data=b"\x00\x01")
    assert json.loads(await socket.receive_from(timeout=10))["type"] == "error"
    await socket.disconnect()
    stored = await database_sync_to_async(models.Trace.objects.get)(pk=trace.pk)
    assert stored.lines_total == len(good)


def test_a_lone_surrogate_names_the_line_and_stores_nothing():
    run(_surrogate_names_the_line)


async def _surrogate_names_the_line() -> None:
    trace = await database_sync_to_async(live.create_live_trace)(name="ws")
    socket = await connect(f"/ws/ingest/{trace.pk}/")
    good = agent_lines(1)[0].decode()
    await socket.send_to(text_data=json.dumps({"offset": 0, "lines": [good, "\ud800"]}))
    answer = json.loads(await socket.receive_from(timeout=10))
    assert answer["type"] == "error"
    assert "line 2" in answer["error"] and "\\ud800" in answer["error"]
    await socket.disconnect()
    stored = await database_sync_to_async(models.Trace.objects.get)(pk=trace.pk)
    assert stored.lines_total == 0


@pytest.mark.parametrize(
    "frame", [DEEP_FRAME, "not json", '{"type": "ping"'], ids=["deep", "text", "cut"]
)
def test_the_viewer_socket_answers_a_hostile_frame_with_an_error(frame):
    run(_viewer_answers, frame)


async def _viewer_answers(frame: str) -> None:
    trace = await database_sync_to_async(live.create_live_trace)(name="ws")
    socket = await connect(f"/ws/traces/{trace.pk}/")
    await socket.send_to(text_data=frame)
    assert json.loads(await socket.receive_from(timeout=10))["type"] == "error"
    await socket.send_to(text_data='{"type": "ping"}')
    assert json.loads(await socket.receive_from(timeout=10))["type"] == "pong"
    await socket.disconnect()


def test_ingest_socket_lines_with_nul_and_huge_usage_are_stored():
    run(_nul_and_usage_through_the_socket)


async def _nul_and_usage_through_the_socket() -> None:
    trace = await database_sync_to_async(live.create_live_trace)(name="ws")
    socket = await connect(f"/ws/ingest/{trace.pk}/")
    lines = inputs.with_text(inputs.NUL).decode().splitlines()
    usage = orjson.loads(inputs.usage_trace(input_tokens=2**63))
    usage_line = orjson.dumps(usage).decode()
    await socket.send_to(text_data=json.dumps({"offset": 0, "lines": [*lines, usage_line]}))
    assert json.loads(await socket.receive_from(timeout=10)) == {
        "type": "ack",
        "total": 3,
        "accepted": 3,
    }
    await socket.send_to(text_data='{"type": "close"}')
    assert json.loads(await socket.receive_from(timeout=10))["type"] == "closed"
    stored = await database_sync_to_async(models.Trace.objects.get)(pk=trace.pk)
    assert stored.calls_count == 3
    errors = await database_sync_to_async(
        lambda: list(stored.line_errors.values_list("message", flat=True))
    )()
    assert any("out of range" in message for message in errors)
    names = await database_sync_to_async(
        lambda: list(stored.tool_runs.values_list("tool_call_id", flat=True))
    )()
    assert names == [f"t{inputs.NUL}1"]
