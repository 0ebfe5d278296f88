"""Goose sessions (`goose`): the legacy JSONL store, golden report, odd input.

No real Goose session with a licence was found (../shared/agents/SOURCES.md, "searched
for, not taken"). tests/golden/goose/20250601_101500.jsonl is hand-written following
block/goose's own source: `crates/goose/src/session/storage.rs` (a metadata first line,
then one Message per line) and `crates/goose/src/message.rs` (content tagged `text`,
`toolRequest`, `toolResponse`, tool results as `{status, value|error}`).
"""

from __future__ import annotations

import orjson
import pytest

from tests.golden import assert_golden, golden_input
from traces.core.analysis.ingest import analyze_bytes, analyze_files
from traces.core.outputs.report import build_report
from traces.core.reading.formats.detect import detect
from traces.core.reading.limits import NotATrace

NAME = "20250601_101500.jsonl"


def _records() -> list:
    return [orjson.loads(line) for line in golden_input(f"goose/{NAME}").splitlines()]


def _read(records) -> object:
    return analyze_bytes(b"\n".join(orjson.dumps(r) for r in records) + b"\n", filename=NAME)


def test_detected_by_its_metadata_line_or_its_tool_content():
    records = _records()
    assert detect(records).adapter.name == "goose"
    assert detect(records[1:]).adapter.name == "goose"  # no metadata line


def test_golden_session():
    trace = analyze_bytes(golden_input(f"goose/{NAME}"), filename=NAME)
    assert_golden("goose/session.report.json", build_report(trace))


def test_assistant_messages_are_calls_with_estimated_tokens():
    trace = _read(_records())
    assert [c.tool_call_ids for c in trace.calls] == [("toolu_1", "toolu_2"), (), ()]
    assert [c.message_count for c in trace.calls] == [1, 3, 5]
    assert all(c.tokens_estimated and c.usage is None for c in trace.calls)
    first = trace.calls[0]
    assert first.duration_s == 3.0
    assert first.extra["agent_session"] == {"agent": "Goose", "project": "/home/dev/shop"}
    assert first.extra["session_tokens"]["accumulated_input_tokens"] == 4950
    runs = {r.id: r for r in trace.tool_runs}
    assert not runs["toolu_1"].is_error and runs["toolu_1"].result_text == "14"
    assert runs["toolu_2"].is_error and "No such file" in runs["toolu_2"].result_text
    assert build_report(trace)["outcome"]["kind"] == "finished"


def test_session_id_comes_from_the_file_name_when_uploaded_with_others():
    data = golden_input(f"goose/{NAME}")
    other = b"\n".join(orjson.dumps(r) for r in _records()[1:3]) + b"\n"
    trace = analyze_files([(NAME, data), ("20250602_090000.jsonl", other)])
    assert trace.calls[0].extra["agent_session"]["session_id"] == "20250601_101500"
    assert len(trace.loops) == 2


def test_streamed_pieces_of_one_reply_are_one_call():
    records = _records()
    piece = {**records[2], "content": [records[2]["content"][0]]}
    rest = {**records[2], "content": records[2]["content"][1:]}
    records[2:3] = [piece, rest]
    trace = _read(records)
    assert len(trace.calls) == 3
    assert trace.calls[0].tool_call_ids == ("toolu_1", "toolu_2")


def test_malformed_lines_are_reported_and_the_rest_read():
    records: list = _records()
    records[3] = {
        **records[3],
        "content": [
            {"type": "toolResponse", "toolResult": {"status": "success", "value": []}},
            {"type": "toolResponse", "id": "toolu_2", "toolResult": "oops"},
            "not an item",
        ],
    }
    records.insert(2, {"role": "robot", "content": "hi"})
    lines = [orjson.dumps(r) for r in records]
    lines[5] = lines[5][:30]  # a truncated line (the second answer)
    trace = analyze_bytes(b"\n".join(lines) + b"\n", filename=NAME)
    errors = [(e.line, e.message) for e in trace.line_errors]
    said = {line: " / ".join(m for n, m in errors if n == line) for line, _ in errors}
    assert "not a Goose message" in said[3]
    assert "toolResponse without an id" in said[5]
    assert "toolResponse toolu_2 without a toolResult" in said[5]
    assert "content item without a type" in said[5]
    assert 6 in said
    assert len(trace.calls) == 2  # the truncated reply is gone, the rest read
    assert {r.status for r in trace.tool_runs} == {"dangling"}


def test_invalid_tool_call_is_kept_with_its_error():
    records = _records()
    records[2]["content"][1]["toolCall"] = {"status": "error", "error": "bad JSON"}
    trace = _read(records)
    (use,) = [b for b in trace.calls[0].response.blocks if b.tool_id == "toolu_1"]
    assert use.input == {"error": "bad JSON"} and use.name is None


def test_metadata_only_is_not_a_trace():
    with pytest.raises(NotATrace, match="no assistant message"):
        _read(_records()[:2])
