"""The Responses API's WebSocket mode through the recording proxy: the Codex CLI's default
transport, and the OpenAI SDK's `responses.connect()`.

A local stand-in for the vendor's socket answers each `response.create` with the events
of a real streamed call from the corpus; the real OpenAI SDK talks to it through a real
daphne. The relay must hand the SDK every event unchanged, send the vendor the SDK's
frames and key (never our token), and record each call as the streamed HTTP call it
stands for."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator

import openai
import pytest
import websockets
from channels.testing import WebsocketCommunicator
from django.core.cache import cache
from django.db import connections
from websockets.sync.client import connect

from inspector.asgi import application
from tests.capture.conftest import LiveServer, capture_server
from tests.capture.fake_socket import FakeResponsesSocket, corpus_events
from tests.capture.scenario import OPENAI_SECRET
from tests.capture.test_proxy_edges import recorded_line
from tests.live.conftest import run_async
from tests.web.team_world import build_world
from traces import models
from traces.capture.recording import recording
from traces.conf import inspector_settings

pytestmark = pytest.mark.corpus


def recorded_lines(server: LiveServer, trace_id: str) -> list[bytes]:
    return server.get(f"/traces/{trace_id}/download").splitlines()


@pytest.fixture(scope="module")
def vendor_socket(corpus) -> Iterator[FakeResponsesSocket]:
    with FakeResponsesSocket(corpus_events(corpus)) as fake:
        yield fake


@pytest.fixture(scope="module")
def socket_server(vendor_socket, tmp_path_factory) -> Iterator[LiveServer]:
    """A daphne whose OpenAI upstream is the fake socket's host (http, so ws://)."""
    with capture_server(
        tmp_path_factory.mktemp("socket-server"),
        INSPECTOR_UPSTREAM_OPENAI=f"http://127.0.0.1:{vendor_socket.port}/v1",
    ) as server:
        yield server


def socket_url(server: LiveServer, session: str) -> str:
    return server.base.replace("http", "ws") + f"/proxy/s/{session}/openai/v1/responses"


def test_the_openai_sdk_socket_is_relayed_event_for_event_and_recorded(
    socket_server, vendor_socket
):
    client = openai.OpenAI(
        api_key=OPENAI_SECRET, base_url=f"{socket_server.base}/proxy/s/sdk-socket/openai/v1"
    )
    received: list[list[str]] = []
    with client.responses.connect(
        extra_headers={"X-Loop-Inspector-Token": "li_not_for_the_vendor"}
    ) as connection:
        previous = None
        for turn in ("What is 2+2?", "And 3+3?"):
            connection.response.create(
                model="gpt-4o-mini",
                input=turn,
                **({"previous_response_id": previous} if previous else {}),
            )
            events = []
            for event in connection:
                events.append(event.to_json(indent=None))
                if event.type == "response.completed":
                    previous = event.response.id
                    break
            received.append(events)

    expected = [json.loads(text) for text in vendor_socket.events]
    for events in received:  # the SDK read every event the vendor sent, as sent
        assert [json.loads(text) for text in events] == expected
    handshake = vendor_socket.handshakes[-1]
    assert handshake["authorization"] == f"Bearer {OPENAI_SECRET}"
    assert "x-loop-inspector-token" not in handshake
    creates = [json.loads(m) for m in vendor_socket.received[-2:]]
    assert [c["input"] for c in creates] == ["What is 2+2?", "And 3+3?"]

    trace_id = socket_server.trace_id("proxy:openai-responses:sdk-socket")
    report = socket_server.wait_report(trace_id, calls=2)
    assert [call["status"] for call in report["calls"]] == ["ok", "ok"]
    assert all(call["output_tokens"] for call in report["calls"])
    line = recorded_line(socket_server, trace_id)
    assert line["transport"] == "websocket"
    assert line["request"]["body"]["previous_response_id"] == previous_id(expected)
    assert line["request"]["headers"]["Authorization"] == "[masked]"
    assert OPENAI_SECRET not in json.dumps(line)


def previous_id(events: list[dict]) -> str:
    return next(e["response"]["id"] for e in events if e["type"] == "response.completed")


def test_a_client_that_leaves_mid_response_is_recorded_as_interrupted(socket_server):
    with connect(socket_url(socket_server, "socket-leaver")) as socket:
        socket.send(json.dumps({"type": "response.create", "model": "slow", "input": "hi"}))
        socket.recv(timeout=10)  # the first event, then hang up
    trace_id = socket_server.trace_id("proxy:openai-responses:socket-leaver")
    call = socket_server.wait_report(trace_id, calls=1)["calls"][0]
    assert call["status"] == "error"
    line = recorded_line(socket_server, trace_id)
    assert line["interrupted"] == "the client closed the socket mid-response"


def test_an_upstream_that_drops_the_socket_closes_the_clients_and_fails_the_call(
    socket_server,
):
    with connect(socket_url(socket_server, "socket-cut")) as socket:
        socket.send(json.dumps({"type": "response.create", "model": "cut", "input": "hi"}))
        with pytest.raises(websockets.ConnectionClosedError) as closed:
            while True:
                socket.recv(timeout=10)
    # The upstream's 1011 (internal error), passed on as 4011: servers may send only
    # 1000 and 3000-4999.
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4011
    trace_id = socket_server.trace_id("proxy:openai-responses:socket-cut")
    assert socket_server.wait_report(trace_id, calls=1)["calls"][0]["status"] == "error"
    assert recorded_line(socket_server, trace_id)["interrupted"] == (
        "the upstream closed the socket mid-response"
    )


def test_an_upstream_without_the_socket_mode_refuses_the_handshake(inspector_server):
    """The capture server's OpenAI upstream speaks HTTP only (as vLLM, Ollama…): the
    client's handshake is refused at once with 426 Upgrade Required, the one status Codex
    takes for "use HTTP" without retrying (a 403 it retried for 6.5 s)."""
    started = time.monotonic()
    with pytest.raises(websockets.InvalidStatus) as refused:
        connect(socket_url(inspector_server, "no-socket"), open_timeout=10)
    assert refused.value.response.status_code == 426
    assert time.monotonic() - started < 5
    assert not inspector_server.rows(
        "SELECT id FROM traces_trace WHERE capture_key LIKE '%no-socket'"
    )


@pytest.mark.django_db(transaction=True)
def test_a_token_over_its_limit_gets_an_error_event_and_nothing_goes_on(settings, vendor_socket):
    """On a shared server the socket is an ingest like any other: the token (in its own
    header, the key in Authorization) is checked at the handshake, charged per
    `response.create`, never sent on, and the calls land in the token's project."""
    settings.INSPECTOR_AUTH = True
    settings.INSPECTOR_UPSTREAM_OPENAI = f"http://127.0.0.1:{vendor_socket.port}/v1"
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    first = json.dumps({"type": "response.create", "model": "gpt-4o-mini", "input": "hi"})
    settings.INSPECTOR = {"TOKEN_UPLOADS_PER_MINUTE": 0, "TOKEN_BYTES_PER_DAY": len(first) + 5}
    inspector_settings.cache_clear()
    cache.clear()
    world = build_world()
    headers = [
        (b"host", b"127.0.0.1"),
        (b"authorization", f"Bearer {OPENAI_SECRET}".encode()),
        (b"x-loop-inspector-token", world.secrets["ingest_token"].encode()),
    ]
    sent_before = len(vendor_socket.received)

    async def scenario() -> tuple[list[dict], dict]:
        communicator = WebsocketCommunicator(
            application, "/proxy/s/limited/openai/v1/responses", headers=headers
        )
        connected, _ = await communicator.connect(timeout=10)
        assert connected
        await communicator.send_to(text_data=first)
        answered = []
        while not answered or answered[-1]["type"] != "response.completed":
            answered.append(json.loads(await communicator.receive_from(timeout=10)))
        await communicator.send_to(text_data=first)  # over the day's bytes now
        refused = json.loads(await communicator.receive_from(timeout=10))
        await communicator.disconnect()
        deadline = time.monotonic() + 10
        while recording("limited"):  # the first call is stored on this loop
            assert time.monotonic() < deadline, "the answered call was never stored"
            await asyncio.sleep(0.02)
        return answered, refused

    try:
        answered, refused = run_async(scenario)
        assert len(answered) == len(vendor_socket.events)
        assert refused["type"] == "error"
        assert refused["error"]["type"] == "rate_limit_error"
        assert len(vendor_socket.received) == sent_before + 1  # the refused one stayed here
        handshake = vendor_socket.handshakes[-1]
        assert world.secrets["ingest_token"] not in json.dumps(handshake)
        assert handshake["authorization"] == f"Bearer {OPENAI_SECRET}"
        trace = wait_for_trace("proxy:openai-responses:limited", world.alpha)
        assert trace.project_id == world.alpha.pk
    finally:
        inspector_settings.cache_clear()
        cache.clear()
        connections.close_all()


def wait_for_trace(key_end: str, project) -> models.Trace:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        found = models.Trace.objects.filter(capture_key__endswith=key_end).first()
        if found is not None and found.calls_count:
            return found
        time.sleep(0.05)
    raise AssertionError(f"no call was recorded under {key_end}")


def test_a_warm_up_that_generates_nothing_is_no_billed_call(socket_server):
    """The Codex CLI opens each turn with `generate: false` (the server takes the request
    in and generates nothing), then continues from it with `previous_response_id`. The
    warm-up is no model call: not counted, not priced, no `prefix-changed`; the call
    after it inherits its input."""
    client = openai.OpenAI(
        api_key=OPENAI_SECRET, base_url=f"{socket_server.base}/proxy/s/warm-up/openai/v1"
    )
    with client.responses.connect() as connection:
        connection.response.create(
            model="gpt-4o-mini", input="What is 2+2?", instructions="Be brief.", generate=False
        )
        warm = next(e for e in connection if e.type == "response.completed")
        assert warm.response.output == []
        connection.response.create(
            model="gpt-4o-mini", input=[], previous_response_id=warm.response.id
        )
        assert any(e.type == "response.completed" for e in connection)
    trace_id = socket_server.trace_id("proxy:openai-responses:warm-up")
    report = socket_server.wait_report(trace_id, calls=1)
    assert len(recorded_lines(socket_server, trace_id)) == 2  # both stored as they came
    assert len(report["calls"]) == 1  # ...but the warm-up is no call
    call = report["calls"][0]
    assert call["messages"] == 1  # the warm-up's input, kept by the server
    rules = {finding["rule"] for finding in report["findings"]}
    assert "prefix-changed" not in rules
    assert report["other_traffic"][0]["summary"].startswith("Responses warm-up (generate: false)")
