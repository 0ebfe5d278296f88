"""Hostile lines through the live HTTP endpoint: every batch is answered (never a 500),
an unreadable line becomes a line error, and the tail goes on with the next batch."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.hostile import inputs
from traces import models

pytestmark = pytest.mark.django_db


def usage_line(**usage: int) -> bytes:
    return inputs.usage_trace(**usage).rstrip(b"\n")


LINES = {
    "nul-in-strings": (inputs.with_text(inputs.NUL).splitlines()[0], None),
    "raw-nul-byte": (b'{"request": {"model": "a\x00b"}}', "NUL"),
    "usage-2^63": (usage_line(input_tokens=2**63), "out of range"),
    "usage-negative": (usage_line(output_tokens=-1), "out of range"),
    "http-status-negative": (inputs.http_status_trace(-1).rstrip(b"\n"), "not a status code"),
    "http-status-2^31": (inputs.http_status_trace(2**31).rstrip(b"\n"), "not a status code"),
    "lone-surrogate-escape": (b'{"request": {"model": "\\ud800"}}', "surrogate"),
    "deep": (b"[" * 5000 + b"]" * 5000, "nested"),
    "six-million-values": (b"[" + b"0," * 6_000_000 + b"0]", "JSON values"),
    "not-utf8": (b'{"request": "\xff\xfe"}', "UTF-8"),
}


@pytest.mark.parametrize(("line", "says"), list(LINES.values()), ids=list(LINES))
def test_a_hostile_live_line_is_answered_and_the_tail_goes_on(client, line, says):
    created = client.post(reverse("traces:api-traces") + "?live=1&format=anthropic-messages")
    assert created.status_code == 201
    trace_id = created.json()["id"]
    url = reverse("live:lines", args=[trace_id])
    first = inputs.usage_trace().rstrip(b"\n")
    reply = client.post(
        f"{url}?offset=0", data=first + b"\n" + line, content_type="application/x-ndjson"
    )
    assert reply.status_code == 200, reply.content
    assert reply.json() == {"total": 2, "accepted": 2}
    again = client.post(
        f"{url}?offset=0", data=first + b"\n" + line, content_type="application/x-ndjson"
    )
    assert again.json() == {"total": 2, "accepted": 0}  # a retry is acknowledged, not a 500
    after = client.post(f"{url}?offset=2", data=first, content_type="application/x-ndjson")
    assert after.json() == {"total": 3, "accepted": 1}
    closed = client.post(reverse("live:close", args=[trace_id])).json()
    assert closed["state"] == "closed" and closed["calls"] >= 2
    trace = models.Trace.objects.get(pk=trace_id)
    stored = client.get(reverse("traces:download", args=[trace_id])).content
    assert stored == first + b"\n" + line + b"\n" + first + b"\n"
    assert client.get(reverse("traces:detail", args=[trace_id])).status_code == 200
    errors = [(e.line, e.message) for e in trace.line_errors.all()]
    if says is None:
        assert errors == []
    else:
        assert [line for line, message in errors if says in message] == [2], errors
