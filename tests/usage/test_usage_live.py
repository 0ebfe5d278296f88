"""A live trace's usage rows: written when it closes, the same as an upload of its lines."""

from __future__ import annotations

import pytest

from tests.live.events import agent_lines, ndjson
from traces import models
from traces.live.writes import append_lines, close_live_trace, create_live_trace
from traces.services.deletion import trace_delete
from traces.services.upload import trace_upload

pytestmark = pytest.mark.django_db


def _slots(trace):
    return sorted(
        models.UsageSlot.objects.filter(trace=trace).values_list(
            "hour", "model", "calls", "input_tokens", "output_tokens", "cost_usd"
        )
    )


def test_a_closed_live_trace_has_the_rows_of_an_upload():
    lines = agent_lines(4)
    live = create_live_trace(name="live run")
    append_lines(trace_id=live.pk, offset=0, lines=lines)
    closed = close_live_trace(trace_id=live.pk)
    uploaded = trace_upload(files=[("run.jsonl", ndjson(lines))], name="uploaded").trace
    assert _slots(closed) and _slots(closed) == _slots(uploaded)
    assert sum(row[2] for row in _slots(closed)) == closed.calls_count == 4


def test_deleting_a_trace_removes_its_rows():
    trace = trace_upload(files=[("run.jsonl", ndjson(agent_lines(3)))], name="gone").trace
    assert models.UsageSlot.objects.filter(trace=trace).exists()
    trace_delete(trace=trace, who="test")
    assert not models.UsageSlot.objects.exists()
