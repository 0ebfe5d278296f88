"""The core's snapshot: a live trace's state so far, without finishing the session."""

from __future__ import annotations

from tests.live.events import agent_lines, ndjson
from traces.core.analysis.ingest import TraceSession, analyze_bytes, choose_format
from traces.core.reading.records import Record
from traces.core.reading.sources import read_source


def session_over(lines: list[bytes]) -> TraceSession:
    source = read_source(ndjson(lines))
    records = [item for item in source.items if isinstance(item, Record)]
    session = TraceSession(choose_format([r.value for r in records]))
    session.feed(source.items)
    return session


def test_snapshot_keeps_waiting_tool_calls_pending_and_feeding_goes_on():
    lines = agent_lines(3)
    session = session_over(lines[:5])  # meta, call 1 and its tool's start and end
    first = session.snapshot()
    assert [c.index for c in first.calls] == [1]
    assert [r.status for r in first.tool_runs] == ["pending"]
    assert first.tool_runs[0].started_at is not None  # the timing was applied

    source = read_source(ndjson(lines))
    session.feed(source.items[5:])
    # The first snapshot did not change under it; the session moved on.
    assert [r.status for r in first.tool_runs] == ["pending"]
    assert [r.status for r in session.snapshot().tool_runs] == ["paired", "paired"]
    finished = session.finish(len(lines))
    whole = analyze_bytes(ndjson(lines))
    assert [c.index for c in finished.calls] == [c.index for c in whole.calls]
    assert finished.tool_runs == whole.tool_runs


def test_finish_still_turns_pending_into_dangling_after_a_snapshot():
    lines = agent_lines(2, finish=False)  # the last call asks for a tool, nothing follows
    session = session_over(lines)
    assert [r.status for r in session.snapshot().tool_runs] == ["paired", "pending"]
    assert [r.status for r in session.finish().tool_runs] == ["paired", "dangling"]
