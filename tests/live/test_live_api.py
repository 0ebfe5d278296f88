"""The live HTTP API: create, append by offset (idempotent, gaps refused), close, idle."""

from __future__ import annotations

import random
from datetime import timedelta

import orjson
import pytest
from django.core.management import call_command
from django.test import override_settings
from django.urls import reverse
from django.utils import timezone

from tests.live.events import agent_lines, ndjson
from traces import models
from traces.conf import inspector_settings
from traces.live import sessions as live_sessions
from traces.selectors.traces import trace_source_bytes
from traces.services.upload import trace_upload
from traces.stores import store

pytestmark = pytest.mark.django_db


def create(client, **query) -> str:
    reply = client.post(reverse("traces:api-traces") + "?" + "&".join(
        ["live=1", *(f"{k}={v}" for k, v in query.items())]
    ))  # fmt: skip
    assert reply.status_code == 201, reply.content
    return reply.json()["id"]


def send(client, trace_id: str, offset, body: bytes):
    url = reverse("live:lines", args=[trace_id])
    if offset is not None:
        url += f"?offset={offset}"
    return client.post(url, data=body, content_type="application/x-ndjson")


def test_create_returns_a_live_trace_with_its_page(client):
    client.handler.enforce_csrf_checks = True
    reply = client.post(reverse("traces:api-traces") + "?live=1&name=agent-7")
    assert reply.status_code == 201
    body = reply.json()
    assert body["state"] == "live"
    assert body["url"].endswith(f"/traces/{body['id']}/")
    trace = models.Trace.objects.get(pk=body["id"])
    assert (trace.name, trace.state, trace.lines_total, trace.format) == ("agent-7", "live", 0, "")
    status = client.get(reverse("live:lines", args=[body["id"]])).json()
    assert status == {"id": body["id"], "total": 0, "state": "live"}


def test_create_refuses_an_unknown_format(client):
    reply = client.post(reverse("traces:api-traces") + "?live=1&format=no-such-format")
    assert reply.status_code == 400
    assert "no-such-format" in reply.json()["error"]
    assert not models.Trace.objects.exists()


def test_batches_in_order_then_a_resend_is_acknowledged_without_duplicates(client):
    lines = agent_lines(3)  # 11 lines: meta + 4 + 4 + 2
    trace_id = create(client, name="resend")
    assert send(client, trace_id, 0, ndjson(lines[:4])).json() == {"total": 4, "accepted": 4}
    # The same batch again (its acknowledgement was lost): nothing stored twice.
    assert send(client, trace_id, 0, ndjson(lines[:4])).json() == {"total": 4, "accepted": 0}
    # Overlapping: lines 2..7 where 2..3 are stored already.
    assert send(client, trace_id, 2, ndjson(lines[2:8])).json() == {"total": 8, "accepted": 4}
    assert send(client, trace_id, 8, ndjson(lines[8:])).json() == {"total": 11, "accepted": 3}
    trace = models.Trace.objects.get(pk=trace_id)
    assert trace.lines_total == 11
    assert trace.calls_count == 3
    assert list(trace.calls.values_list("index", flat=True)) == [1, 2, 3]
    assert trace_source_bytes(trace=trace) == ndjson(lines)
    chunks = list(trace.chunks.values_list("seq", "first_line", "line_count"))
    assert chunks == [(0, 1, 4), (4, 5, 4), (8, 9, 3)]


def test_a_gap_is_refused_with_the_offset_expected(client):
    lines = agent_lines(2)
    trace_id = create(client)
    send(client, trace_id, 0, ndjson(lines[:3]))
    reply = send(client, trace_id, 5, ndjson(lines[5:]))
    assert reply.status_code == 409
    assert reply.json()["expected"] == 3
    assert models.Trace.objects.get(pk=trace_id).lines_total == 3


@pytest.mark.parametrize("offset", [None, "x", "-1"])
def test_an_offset_is_required(client, offset):
    trace_id = create(client)
    url = reverse("live:lines", args=[trace_id]) + ("" if offset is None else f"?offset={offset}")
    reply = client.post(url, data=b"{}\n", content_type="application/x-ndjson")
    assert reply.status_code in (400, 409)
    assert models.Trace.objects.get(pk=trace_id).lines_total == 0


def test_unknown_trace_is_404(client):
    missing = "00000000-0000-0000-0000-000000000000"
    assert send(client, missing, 0, b"{}\n").status_code == 404
    assert client.post(reverse("live:close", args=[missing])).status_code == 404
    assert client.get(reverse("live:lines", args=[missing])).status_code == 404


def test_lines_no_adapter_recognises_are_refused_and_not_stored(client):
    trace_id = create(client)
    reply = send(client, trace_id, 0, b'{"hello": "world"}\n')
    assert reply.status_code == 400
    assert "No supported trace format" in reply.json()["error"]
    trace = models.Trace.objects.get(pk=trace_id)
    assert (trace.lines_total, trace.chunks.count(), trace.format) == (0, 0, "")


def test_blank_and_broken_lines_before_the_first_record_wait_for_the_format(client):
    lines = agent_lines(2)
    trace_id = create(client)
    assert send(client, trace_id, 0, b"\n{not json\n").json() == {"total": 2, "accepted": 2}
    assert models.Trace.objects.get(pk=trace_id).format == ""
    send(client, trace_id, 2, ndjson(lines))
    trace = models.Trace.objects.get(pk=trace_id)
    assert trace.format == "loop-inspector"
    assert trace.calls_count == 2
    assert list(trace.line_errors.values_list("line", flat=True)) == [2]
    assert trace.calls.get(index=1).line == 4  # line numbers count every line sent


def test_a_last_line_without_newline_is_a_line(client):
    lines = agent_lines(1)
    trace_id = create(client)
    body = b"\n".join(lines)  # no newline at the end
    assert send(client, trace_id, 0, body).json() == {"total": len(lines), "accepted": len(lines)}
    assert trace_source_bytes(trace=models.Trace.objects.get(pk=trace_id)) == ndjson(lines)


def test_close_finishes_like_an_upload(client):
    lines = agent_lines(3, finish=False)
    pending_request = orjson.dumps(
        {
            "type": "request",
            "call_id": "c-lost",
            "ts": 1_750_000_100.0,
            "body": {"model": "m", "messages": []},
        }
    )
    all_lines = [*lines, pending_request]
    trace_id = create(client, name="to-close")
    send(client, trace_id, 0, ndjson(all_lines))
    live_trace = models.Trace.objects.get(pk=trace_id)
    assert list(live_trace.tool_runs.values_list("status", flat=True)) == [
        "paired",
        "paired",
        "pending",
    ]
    reply = client.post(reverse("live:close", args=[trace_id]))
    assert reply.status_code == 200
    assert reply.json()["state"] == "closed"
    trace = models.Trace.objects.get(pk=trace_id)
    assert trace.state == "closed"
    # The tool call still waiting dangles; the request without a response failed.
    assert list(trace.tool_runs.values_list("status", flat=True)) == [
        "paired",
        "paired",
        "dangling",
    ]
    lost = trace.calls.get(index=4)
    assert (lost.status, lost.error) == ("error", "no response recorded")
    # Same rows and report as uploading the same bytes.
    upload = trace_upload(files=[("", ndjson(all_lines))], name="upload").trace
    assert trace.report == upload.report
    assert trace.source_sha256 == upload.source_sha256
    assert trace.calls_count == upload.calls_count == 4
    assert client.get(reverse("traces:download", args=[trace_id])).content == ndjson(all_lines)
    # Closed: more lines are refused, closing again is harmless.
    again = send(client, trace_id, len(all_lines), ndjson(lines[:1]))
    assert again.status_code == 409
    assert again.json()["state"] == "closed"
    assert client.post(reverse("live:close", args=[trace_id])).json()["state"] == "closed"


def stored_rows(trace: models.Trace) -> dict:
    return {
        "calls": list(trace.calls.values_list("index", "loop", "line", "status", "prefix_len", "base_call", "appended_digests", "response_digest")),
        "runs": list(trace.tool_runs.values_list("position", "tool_call_id", "status", "call", "result_call")),
        "errors": list(trace.line_errors.values_list("line", "message")),
    }  # fmt: skip


def test_random_batches_and_process_changes_store_what_an_upload_stores(client):
    """Whatever the batch sizes, and whether this process's session is fresh, behind
    (another process appended) or gone, the rows equal those of one upload."""
    lines = agent_lines(6, finish=False)
    lines.insert(7, b'{"type": "response", "call_id": oops}')  # a broken line mid-way
    rng = random.Random(4)
    trace_id = create(client)
    appends = store(live_sessions.AppendSessions)
    parked = live_sessions.SessionCache()  # the sessions of the process not appending now
    sent = 0
    step = 0
    while sent < len(lines):
        size = rng.randint(1, 4)
        # Alternate the process that appends: one cache or the other, sometimes none.
        if step > 0:
            appends.swap_entries(parked)
        if step % 3 == 2:
            appends.clear()
        reply = send(client, trace_id, sent, ndjson(lines[sent : sent + size]))
        assert reply.status_code == 200
        sent = reply.json()["total"]
        step += 1
    client.post(reverse("live:close", args=[trace_id]))
    trace = models.Trace.objects.get(pk=trace_id)
    upload = trace_upload(files=[("", ndjson(lines))], name="upload").trace
    assert stored_rows(trace) == stored_rows(upload)
    assert trace.report == upload.report
    assert trace.line_errors_count == 1


def test_events_are_numbered_without_gaps(client):
    lines = agent_lines(3)
    trace_id = create(client)
    for start in range(0, len(lines), 3):
        send(client, trace_id, start, ndjson(lines[start : start + 3]))
    client.post(reverse("live:close", args=[trace_id]))
    trace = models.Trace.objects.get(pk=trace_id)
    events = list(trace.live_events.values_list("seq", "type"))
    assert [seq for seq, _ in events] == list(range(1, trace.events_seq + 1))
    assert [t for _, t in events].count("call") == 3
    assert events[-1][1] == "state"
    assert trace.live_events.get(seq=trace.events_seq).payload["state"] == "closed"
    first_call = trace.live_events.filter(type="call").first().payload
    assert first_call["index"] == 1
    assert first_call["tool_names"] == ["search"]
    # Data, not markup: the page builds the row (tests/live/test_live_rows_browser.py).
    assert first_call["url"].endswith("/calls/1/") and "row_html" not in first_call
    assert not any("<" in value for value in first_call.values() if isinstance(value, str))


def test_a_live_call_event_counts_tokens_as_the_report_does(client):
    """One shape for a call: a live event's `input_tokens` is the uncached input, as in the
    report, and it carries both cache figures (the page adds them for the whole input)."""
    lines = [orjson.loads(line) for line in agent_lines(3)]
    for line in lines:
        if line["type"] == "response":
            line["body"]["usage"].update(cache_read_input_tokens=40, cache_creation_input_tokens=7)
    lines = [orjson.dumps(line) for line in lines]
    trace_id = create(client)
    send(client, trace_id, 0, ndjson(lines))
    client.post(reverse("live:close", args=[trace_id]))
    trace = models.Trace.objects.get(pk=trace_id)
    sent = [event.payload for event in trace.live_events.filter(type="call").order_by("seq")]
    keys = ("index", "input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens")
    assert [{key: call[key] for key in keys} for call in sent] == [
        {key: call[key] for key in keys} for call in trace.report["calls"]
    ]
    assert (sent[0]["input_tokens"], sent[0]["cache_read_tokens"]) == (100, 40)
    assert sent[0]["cache_write_tokens"] == 7


@pytest.fixture
def idle_after_a_minute():
    with override_settings(INSPECTOR={"LIVE_IDLE_SECONDS": 60}):
        inspector_settings.cache_clear()
        yield
    inspector_settings.cache_clear()


def make_idle(trace_id: str) -> None:
    models.Trace.objects.filter(pk=trace_id).update(
        live_activity_at=timezone.now() - timedelta(seconds=61)
    )


def test_an_idle_trace_closes_when_lines_arrive_late(client, idle_after_a_minute):
    lines = agent_lines(2, finish=False)
    trace_id = create(client)
    send(client, trace_id, 0, ndjson(lines[:5]))
    make_idle(trace_id)
    reply = send(client, trace_id, 5, ndjson(lines[5:]))
    assert reply.status_code == 409
    assert reply.json()["state"] == "closed"
    trace = models.Trace.objects.get(pk=trace_id)
    assert trace.state == "closed"
    assert trace.lines_total == 5
    assert list(trace.tool_runs.values_list("status", flat=True)) == ["dangling"]


def test_idle_traces_are_swept_by_the_command_and_on_creation(client, idle_after_a_minute):
    first, second, fresh = create(client), create(client), create(client)
    make_idle(first)
    call_command("close_idle_traces")
    assert models.Trace.objects.get(pk=first).state == "closed"
    assert models.Trace.objects.get(pk=second).state == "live"
    make_idle(second)
    create(client)  # creating a live trace sweeps too
    assert models.Trace.objects.get(pk=second).state == "closed"
    assert models.Trace.objects.get(pk=fresh).state == "live"


def test_the_trace_page_shows_the_live_badge_and_loads_the_script(client):
    trace_id = create(client, name="page")
    send(client, trace_id, 0, ndjson(agent_lines(2)))
    page = client.get(reverse("traces:detail", args=[trace_id])).content.decode()
    title = page.split("<title>", 1)[1].split("</title>", 1)[0]
    assert "<" not in title  # the include in the title block renders nothing
    assert 'id="live-tail"' in page
    assert 'data-state="live"' in page
    assert f'data-socket-path="/ws/traces/{trace_id}/"' in page
    assert "js/live.js" in page
    assert '<template id="live-calls-table">' in page
    client.post(reverse("live:close", args=[trace_id]))
    closed = client.get(reverse("traces:detail", args=[trace_id])).content.decode()
    assert 'data-state="closed"' in closed
    uploaded = trace_upload(files=[("", ndjson(agent_lines(1)))], name="up").trace
    plain = client.get(reverse("traces:detail", args=[uploaded.pk])).content.decode()
    assert "live-tail" not in plain and "live.js" not in plain
