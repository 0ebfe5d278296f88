"""The proxy when things go wrong or get big: disconnects, cut streams, timeouts, limits,
bad paths; streams pass chunk by chunk; viewers see each call; no credential is kept."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import os
import socket
import sqlite3
import time
from pathlib import Path

import anthropic
import httpx
import openai
import pytest
import zstandard
from django.test import AsyncClient, override_settings

from tests.capture.gemini_calls import gemini_calls_with_keys
from tests.capture.gemini_script import GEMINI_SECRET
from tests.capture.scenario import OPENAI_SECRET, SECRET
from tests.live.conftest import run_async
from tests.live.wsclient import connect
from traces.core.reading import archive, blobs

pytestmark = pytest.mark.corpus

BODY = {"max_tokens": 50, "messages": [{"role": "user", "content": "hello"}]}


def recorded_line(server, trace_id: str) -> dict:
    """The trace's original bytes (the download), as the one line recorded."""
    lines = server.get(f"/traces/{trace_id}/download").splitlines()
    return json.loads(lines[-1])


def test_streamed_events_reach_the_client_as_they_arrive(inspector_server, upstream):
    """A slow stream (a chunk every 0.25 s): the first event is read long before the end."""
    started = time.monotonic()
    arrivals: list[float] = []
    with httpx.stream(
        "POST",
        f"{inspector_server.base}/proxy/s/chunks/anthropic/v1/messages",
        json={**BODY, "model": "slow", "stream": True},
        headers={"x-api-key": SECRET},
        timeout=30,
    ) as response:
        body = b""
        for chunk in response.iter_raw():
            arrivals.append(time.monotonic() - started)
            body += chunk
    assert body == upstream.sent[-1]
    total = arrivals[-1]
    assert total > 2.0  # the upstream took its time...
    assert arrivals[0] < total - 1.5  # ...and the client had the first event at once
    assert len(arrivals) > 5


def test_a_client_that_leaves_mid_stream_is_recorded_as_interrupted(inspector_server):
    with httpx.stream(
        "POST",
        f"{inspector_server.base}/proxy/s/leaver/anthropic/v1/messages",
        json={**BODY, "model": "slow", "stream": True},
        headers={"x-api-key": SECRET},
        timeout=30,
    ) as response:
        next(response.iter_raw())  # the first event, then hang up
    trace_id = inspector_server.trace_id("proxy:anthropic-messages:leaver")
    report = inspector_server.wait_report(trace_id, calls=1)
    call = report["calls"][0]
    assert call["status"] == "error"
    assert "cut short" in call["error"]
    line = recorded_line(inspector_server, trace_id)
    assert line["interrupted"] == "the client disconnected mid-response"
    assert "message_start" in line["response"]["body_raw"]


def test_a_client_that_leaves_before_the_answer_is_recorded_as_interrupted(inspector_server):
    with pytest.raises(httpx.TimeoutException):
        httpx.post(
            f"{inspector_server.base}/proxy/s/impatient/anthropic/v1/messages",
            json={**BODY, "model": "hang"},
            headers={"x-api-key": SECRET},
            timeout=0.5,
        )
    trace_id = inspector_server.trace_id("proxy:anthropic-messages:impatient")
    call = inspector_server.wait_report(trace_id, calls=1)["calls"][0]
    assert call["status"] == "error"
    line = recorded_line(inspector_server, trace_id)
    assert line["interrupted"] == "the client disconnected before the answer"
    assert line["response"] is None


def test_an_upstream_that_cuts_the_stream_is_a_failed_call(inspector_server, upstream):
    client = anthropic.Anthropic(
        api_key=SECRET, base_url=f"{inspector_server.base}/proxy/s/cut/anthropic", max_retries=0
    )
    with (
        pytest.raises(anthropic.APIStatusError) as caught,  # the SDK sees the stream fail
        client.messages.stream(model="cut", **BODY) as stream,
    ):
        stream.get_final_message()
    assert "upstream connection failed mid-response" in str(caught.value)
    trace_id = inspector_server.trace_id("proxy:anthropic-messages:cut")
    call = inspector_server.wait_report(trace_id, calls=1)["calls"][0]
    assert call["status"] == "error"
    assert "cut short" in call["error"]


def test_an_upstream_timeout_is_a_504_in_the_vendor_shape_and_a_failed_call(inspector_server):
    client = anthropic.Anthropic(
        api_key=SECRET,
        base_url=f"{inspector_server.base}/proxy/s/timeout/anthropic",
        max_retries=0,
    )
    with pytest.raises(anthropic.APIStatusError) as caught:
        client.messages.create(model="hang", **BODY)
    assert caught.value.status_code == 504
    assert "did not answer within 1.5 s" in caught.value.message
    trace_id = inspector_server.trace_id("proxy:anthropic-messages:timeout")
    call = inspector_server.wait_report(trace_id, calls=1)["calls"][0]
    assert (call["status"], call["http_status"]) == ("error", 504)


def test_a_request_over_the_size_limit_is_refused_with_413(inspector_server, upstream):
    before = len(upstream.received)
    huge = {**BODY, "model": "claude-sonnet-4-6", "system": "x" * (1024 * 1024 + 10)}
    reply = httpx.post(
        f"{inspector_server.base}/proxy/anthropic/v1/messages", json=huge, timeout=30
    )
    assert reply.status_code == 413
    assert reply.json()["error"]["type"] == "request_too_large"
    assert len(upstream.received) == before  # nothing was sent on


def test_unknown_paths_and_bad_sessions_are_clear_4xx(inspector_server):
    reply = httpx.post(f"{inspector_server.base}/proxy/mistral/v1/models", json={}, timeout=10)
    assert reply.status_code == 404
    assert "/proxy/anthropic" in reply.json()["error"]["message"]
    reply = httpx.post(
        f"{inspector_server.base}/proxy/anthropic/v1/messages",
        json=BODY,
        headers={"X-Loop-Inspector-Session": "no spaces/or slashes"},
        timeout=10,
    )
    assert reply.status_code == 400
    assert "session name" in reply.json()["error"]["message"]


@pytest.mark.asyncio
@override_settings(INSPECTOR_UPSTREAM_OPENAI="")
async def test_an_unconfigured_vendor_is_a_404_saying_which_setting():
    reply = await AsyncClient().post(
        "/proxy/openai/v1/chat/completions", data=b"{}", content_type="application/json"
    )
    assert reply.status_code == 404
    assert "INSPECTOR_UPSTREAM_OPENAI" in reply.json()["error"]["message"]


def test_a_viewer_websocket_receives_each_proxied_call(inspector_server):
    client = anthropic.Anthropic(
        api_key=SECRET, base_url=f"{inspector_server.base}/proxy/s/watched/anthropic", max_retries=0
    )
    messages = [{"role": "user", "content": "What's the weather in New York?"}]
    client.messages.create(model="claude-sonnet-4-6", max_tokens=50, messages=messages)
    trace_id = inspector_server.trace_id("proxy:anthropic-messages:watched")
    url = inspector_server.base.replace("http", "ws") + f"/ws/traces/{trace_id}/"

    async def watch() -> list[dict]:
        socket = await connect(url)
        calls: list[dict] = []
        try:
            loop = asyncio.get_running_loop()
            sending = loop.run_in_executor(None, make_two_more_calls, client, messages)
            while len(calls) < 3:
                received = await socket.recv_messages(timeout=20)
                assert received is not None, "the server closed the viewer's socket"
                calls += [m for m in received if m["type"] == "call"]
            await sending
        finally:
            await socket.close()
        return calls

    calls = run_async(watch)
    assert [c["data"]["index"] for c in calls] == [1, 2, 3]
    assert all(c["data"]["model"] == "claude-sonnet-4-6" for c in calls)


def make_two_more_calls(client: anthropic.Anthropic, messages: list) -> None:
    """Called once the viewer's socket is open (its consumer joined the trace's group)."""
    for _ in range(2):
        client.messages.create(model="claude-sonnet-4-6", max_tokens=50, messages=messages)


def test_an_upstream_cookie_goes_to_its_caller_and_never_rides_on_later_calls(
    inspector_server, upstream
):
    """The proxy's pooled client serves every caller: a cookie the upstream sets for one
    must reach that caller and must not be sent upstream with anyone's next call."""
    url = f"{inspector_server.base}/proxy/s/cookies/anthropic/v1/messages"
    first = httpx.post(url, json={**BODY, "model": "set-cookie"}, headers={"x-api-key": SECRET})
    assert first.status_code == 200
    assert first.headers["set-cookie"] == "__cf_bm=tracker; Path=/"
    second = httpx.post(
        url, json={**BODY, "model": "claude-sonnet-4-6"}, headers={"x-api-key": "other"}
    )
    assert second.status_code == 200
    forwarded = {k.lower(): v for k, v in upstream.received[-1].headers.items()}
    assert forwarded["x-api-key"] == "other"
    assert "cookie" not in forwarded


def test_the_upstream_gets_the_callers_headers_and_none_of_the_proxys_own(
    inspector_server, upstream
):
    """No `User-Agent: python-httpx` or `Accept: */*` added to a caller's call: the
    vendor sees the agent's headers (its SDK's user agent, or none)."""
    host, port = inspector_server.base.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    payload = json.dumps({**BODY, "model": "claude-sonnet-4-6"})
    connection.request(
        "POST",
        "/proxy/s/bare/anthropic/v1/messages",
        body=payload,
        headers={"x-api-key": SECRET, "content-type": "application/json"},
    )
    assert connection.getresponse().status == 200
    connection.close()
    forwarded = {k.lower() for k in upstream.received[-1].headers}
    assert "user-agent" not in forwarded
    assert "accept" not in forwarded
    assert {"x-api-key", "content-type", "content-length"} <= forwarded


@pytest.mark.parametrize(
    "ours", [{"X-Loop-Inspector-Token": "li_ours"}, {"Authorization": "Bearer li_ours"}]
)
def test_a_loop_inspector_token_never_goes_upstream(inspector_server, upstream, ours):
    """The token is for this server; the vendor gets only the vendor's key."""
    reply = httpx.post(
        f"{inspector_server.base}/proxy/s/tokens/anthropic/v1/messages",
        json={**BODY, "model": "claude-sonnet-4-6"},
        headers={"x-api-key": SECRET, **ours},
    )
    assert reply.status_code == 200
    forwarded = {k.lower(): v for k, v in upstream.received[-1].headers.items()}
    assert forwarded["x-api-key"] == SECRET
    assert "x-loop-inspector-token" not in forwarded
    assert "authorization" not in forwarded
    assert b"li_ours" not in str(upstream.received[-1].headers).encode()


def raw_post(base: str, target: bytes, extra_headers: bytes = b"") -> bytes:
    """A POST written byte by byte (no client library to tidy it up); the status line."""
    host, port = base.removeprefix("http://").split(":")
    body = json.dumps({**BODY, "model": "claude-sonnet-4-6"}).encode()
    request = (
        b"POST " + target + b" HTTP/1.1\r\nHost: " + host.encode() + b"\r\n"
        b"x-api-key: "
        + SECRET.encode()
        + b"\r\nContent-Type: application/json\r\n"
        + extra_headers
        + b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body)
        + body
    )
    with socket.create_connection((host, int(port)), timeout=30) as connection:
        connection.sendall(request)
        reply = b""
        while chunk := connection.recv(65536):
            reply += chunk
    return reply.split(b"\r\n", 1)[0]


@pytest.mark.parametrize(
    ("target", "forwarded"),
    [
        (b"/proxy/anthropic/v1/%00messages", "/v1/%00messages"),
        (b"/proxy/anthropic/v1/m%C3%A9ssages", "/v1/m%C3%A9ssages"),
        (b"/proxy/anthropic/v1/messages%3Fbeta=1", "/v1/messages%3Fbeta=1"),
        (b"/proxy/anthropic/v1/messages?beta=%00&x=%FF", "/v1/messages?beta=%00&x=%FF"),
        (b"/proxy/anthropic/v1/mess%0Aages", None),  # no route: Django's 404
    ],
)
def test_odd_paths_reach_the_upstream_as_sent_never_a_500(
    inspector_server, upstream, target, forwarded
):
    before = len(upstream.received)
    status = raw_post(inspector_server.base, target)
    assert b" 500 " not in status
    if forwarded is None:
        assert status.endswith(b" 404 Not Found")
        assert len(upstream.received) == before
    else:
        assert upstream.received[-1].path == forwarded


@pytest.mark.parametrize("value", [b"caf\xe9", "\u2713".encode(), b"a\x01b"])
def test_header_bytes_reach_the_upstream_as_sent_never_a_500(inspector_server, upstream, value):
    """Header values that are not ASCII text (Latin-1, UTF-8, a control character) go on
    byte for byte; httpx alone would refuse them and the agent would get a 500."""
    status = raw_post(
        inspector_server.base, b"/proxy/anthropic/v1/messages", b"x-agent-note: " + value + b"\r\n"
    )
    assert status.endswith(b" 200 OK")
    forwarded = {k.lower(): v for k, v in upstream.received[-1].headers.items()}
    assert forwarded["x-agent-note"] == value.decode("latin-1")


def test_a_zstd_request_goes_on_compressed_and_is_recorded_readable(inspector_server, upstream):
    """The Codex CLI zstd-compresses its Responses requests: the upstream gets the very
    bytes and header it sent, the trace gets the call with its request."""
    request = {
        "model": "gpt-5",
        "input": [{"role": "user", "content": "What is the weather like in New York?"}],
        "tools": [{"type": "function", "name": "get_weather", "parameters": {}}],
    }
    body = zstandard.ZstdCompressor(level=3).compress(json.dumps(request).encode())
    reply = httpx.post(
        f"{inspector_server.base}/proxy/s/codex-zstd/openai/v1/responses",
        content=body,
        headers={
            "Authorization": f"Bearer {OPENAI_SECRET}",
            "Content-Type": "application/json",
            "Content-Encoding": "zstd",
        },
    )
    assert reply.status_code == 200
    received = upstream.received[-1]
    assert received.body == body
    assert {k.lower(): v for k, v in received.headers.items()}["content-encoding"] == "zstd"
    trace_id = inspector_server.trace_id("proxy:openai-responses:codex-zstd")
    report = inspector_server.wait_report(trace_id, calls=1)
    (call,) = report["calls"]
    assert call["status"] == "ok"
    assert call["messages"] == 1  # read from the request
    line = recorded_line(inspector_server, trace_id)
    assert line["request"]["body"] == request


def test_no_credential_is_stored_or_shown(inspector_server):
    """Calls of every kind carry the keys; then the database, the pages, the downloads and
    the exports of every captured trace are searched for them."""
    claude = anthropic.Anthropic(
        api_key=SECRET, base_url=f"{inspector_server.base}/proxy/s/secrets/anthropic", max_retries=0
    )
    claude.messages.create(model="claude-sonnet-4-6", **BODY)
    with claude.messages.stream(model="claude-sonnet-4-6", **BODY) as stream:
        stream.get_final_message()
    with pytest.raises(anthropic.RateLimitError):
        claude.messages.create(model="error-429", **BODY)
    gpt = openai.OpenAI(
        api_key=OPENAI_SECRET,
        base_url=f"{inspector_server.base}/proxy/s/secrets/openai/v1",
        default_query={"key": OPENAI_SECRET},
        max_retries=0,
    )
    gpt.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "x"}])
    gemini_recorded = gemini_calls_with_keys(inspector_server, "secrets")  # header and ?key=
    gemini_trace = inspector_server.trace_id("proxy:gemini:secrets")
    inspector_server.wait_report(gemini_trace, calls=gemini_recorded)
    anthropic_trace = inspector_server.trace_id("proxy:anthropic-messages:secrets")
    openai_trace = inspector_server.trace_id("proxy:openai-chat:secrets")
    inspector_server.wait_report(anthropic_trace, calls=3)
    inspector_server.wait_report(openai_trace, calls=1)

    assert_nowhere(
        inspector_server, [SECRET.encode(), OPENAI_SECRET.encode(), GEMINI_SECRET.encode()]
    )
    log = inspector_server.log.read_bytes()
    assert b"/gemini/" in log  # the Gemini calls went through, and their key is in no log
    line = recorded_line(inspector_server, anthropic_trace)
    assert line["request"]["headers"]["Authorization"] == "[masked]"
    line = recorded_line(inspector_server, gemini_trace)  # the last: `?key=` on a stream
    assert line["request"]["url"].endswith("?alt=sse&key=%5Bmasked%5D")


def assert_nowhere(
    server, secrets: list[bytes], *, folders: tuple[Path, ...] = (), logs: bytes = b""
) -> None:
    """None of `secrets` in the server's database, its stored files (and `folders`'), its
    log (and `logs`), nor on any page, download or export of any of its traces. Every
    route's credential test ends here: the reverse proxy's (below) and the forward
    proxy's (tests/capture/test_forward_proxy.py)."""
    for table, column, value in stored_values(server.database):
        for secret in secrets:
            assert secret not in value, f"a credential is stored in {table}.{column}"
    originals = stored_files(Path(os.environ["INSPECTOR_DATA_DIR"]))
    assert any(b"claude-sonnet-4-6" in data for _, data in originals)  # the calls are there
    for path, data in originals + [f for folder in folders for f in stored_files(folder)]:
        for secret in secrets:
            assert secret not in data, f"a credential is stored in the file {path}"
    logged = server.log.read_bytes() + logs
    for secret in secrets:
        assert secret not in logged, "a credential reached a log"
    traces = [row[0] for row in server.rows("SELECT id FROM traces_trace")]
    assert len(traces) >= 2
    for raw_id in traces:
        trace_id = str(raw_id)
        if len(trace_id) == 32:
            trace_id = f"{trace_id[:8]}-{trace_id[8:12]}-{trace_id[12:16]}-{trace_id[16:20]}-{trace_id[20:]}"
        paths = [
            f"/traces/{trace_id}/",
            f"/traces/{trace_id}/download",
            f"/api/traces/{trace_id}",
            f"/traces/{trace_id}/postmortem",
            f"/traces/{trace_id}/export.md",
            f"/traces/{trace_id}/export.html",
            f"/traces/{trace_id}/calls/1/",
            f"/traces/{trace_id}/calls/1/request.json",
        ]
        for path in paths:
            shown = server.get(path)
            for secret in secrets:
                assert secret not in shown, f"a credential is shown at {path}"


def stored_files(folder: Path) -> list[tuple[Path, bytes]]:
    """Every file the servers of this test run stored (originals' chunks, uploads), as
    stored and decompressed."""
    found = []
    for path in folder.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            found.append((path, data))
            with contextlib.suppress(Exception):
                found.append((path, archive.decompress(data)))
    return found


def stored_values(database) -> list[tuple[str, str, bytes]]:
    """Every value of every table, compressed ones (chunks, blobs) decompressed."""
    found = []
    with sqlite3.connect(database, timeout=20) as db:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            cursor = db.execute(f'SELECT * FROM "{table}"')
            columns = [d[0] for d in cursor.description]
            for row in cursor:
                for column, value in zip(columns, row, strict=True):
                    if value is None or isinstance(value, (int, float)):
                        continue
                    data = value.encode() if isinstance(value, str) else bytes(value)
                    found.append((table, column, data))
                    for unpack in (archive.decompress, blobs.unpack):
                        with contextlib.suppress(Exception):
                            found.append((table, column, unpack(data)))
    return found


def test_a_credential_in_a_proxied_query_never_reaches_a_log(inspector_server):
    """Issue 26: `?key=` (Gemini's way of sending its key) was written to daphne's access
    log and httpx's request log."""
    query_secret = "AIzaQUERYSECRETnotForLogs0123456789abcdef"
    httpx.post(
        f"{inspector_server.base}/proxy/s/query/anthropic/v1/messages?key={query_secret}&beta=1",
        json={**BODY, "model": "claude"},
        headers={"x-api-key": SECRET},
        timeout=30,
    )
    log = inspector_server.log.read_text(errors="replace")
    assert "/proxy/s/query/anthropic/v1/messages?" in log  # the request was logged...
    assert query_secret not in log  # ...without its key
    assert "beta=1" in log


def test_the_log_filter_masks_urls_in_any_record():
    import logging

    from inspector.log_masking import MaskQueryCredentials

    record = logging.LogRecord(
        "httpx", logging.INFO, __file__, 1, 'HTTP Request: %s %s "%s"',
        ("POST", httpx.URL("https://up.example/v1/x?api_key=s3cret&n=2"), "HTTP/1.1 200 OK"),
        None,
    )  # fmt: skip
    assert MaskQueryCredentials().filter(record)
    message = record.getMessage()
    assert "s3cret" not in message and "n=2" in message and "api_key=[masked]" in message


@pytest.mark.parametrize("method", ["OPTIONS", "TRACE", "PUT", "PATCH"])
def test_methods_the_vendors_do_not_take_never_reach_the_upstream(
    inspector_server, upstream, method
):
    """Issue 26: OPTIONS and TRACE were passed to the upstream."""
    before = len(upstream.received)
    reply = httpx.request(
        method,
        f"{inspector_server.base}/proxy/s/methods/anthropic/v1/messages",
        headers={"x-api-key": SECRET},
        timeout=30,
    )
    assert reply.status_code == 405
    assert "is not a method the vendors' APIs take" in reply.text
    assert len(upstream.received) == before
