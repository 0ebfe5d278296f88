"""A Claude Agent SDK stream tailed live (`claude -p --output-format stream-json` into a
file): detected from the first batch, each response shown once the next one starts, the
last one when the `result` line (or the close) comes; the stored trace equals an upload of the same lines."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.golden import golden_input
from tests.live.test_live_api import create, send
from traces import models

pytestmark = pytest.mark.django_db


def test_a_stream_tailed_in_batches_equals_its_upload(client):
    lines = golden_input("claude-agent-sdk/stream.jsonl").splitlines(keepends=True)
    trace_id = create(client, name="sdk")
    body = lines[:-1]  # everything but the final `result` line
    for offset in range(0, len(body), 4):
        reply = send(client, trace_id, offset, b"".join(body[offset : offset + 4]))
        assert reply.status_code == 200, reply.content
    live = models.Trace.objects.get(pk=trace_id)
    assert live.format == "claude-agent-sdk"
    assert live.calls.count() == 3  # the last response waits for what follows it
    assert send(client, trace_id, len(body), lines[-1]).status_code == 200
    assert live.calls.count() == 4  # the result line closes it
    assert client.post(reverse("live:close", args=[trace_id])).status_code == 200
    live.refresh_from_db()
    uploaded = client.post(
        reverse("traces:api-traces") + "?filename=stream.jsonl",
        data=b"".join(lines),
        content_type="application/x-ndjson",
    ).json()
    stored = models.Trace.objects.get(pk=uploaded["id"])
    assert live.calls.count() == stored.calls.count() == 4
    assert live.report["tool_runs"] == stored.report["tool_runs"]
