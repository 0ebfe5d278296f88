"""Kimi Code CLI wire logs (`kimi-wire`): corpus facts, subagent link, golden report, odd input.

The golden input tests/golden/kimi-wire/wire.jsonl is hand-written following the shape of
the real files of ../shared/agents/kimi_code_wire (SOURCES.md section 22): the same event
types and fields, made-up content.
"""

from __future__ import annotations

import orjson
import pytest

from tests.core.test_corpus_counts import corpus_counts
from tests.golden import assert_golden, golden_input
from traces.core.analysis.ingest import analyze_bytes, analyze_files
from traces.core.outputs.report import build_report
from traces.core.reading.formats.detect import detect
from traces.core.reading.limits import InputRejected, NotATrace

FOLDER = "kimi_code_wire"
MAIN = "agent-sessions_assistant_tools.jsonl"
SMALL = "agent-sessions_small.jsonl"
SUB = "agent-sessions_subagent_agent-0.jsonl"


def _read(agents, *names: str):
    return analyze_files([(name, (agents / FOLDER / name).read_bytes()) for name in names])


def _lines(*records) -> bytes:
    return b"\n".join(orjson.dumps(r) for r in records) + b"\n"


def _golden_records() -> list:
    return [orjson.loads(line) for line in golden_input("kimi-wire/wire.jsonl").splitlines()]


# -- corpus -----------------------------------------------------------------------------
@pytest.mark.corpus
@pytest.mark.parametrize("name", [MAIN, SMALL, SUB])
def test_every_corpus_file_is_detected_as_kimi_wire(agents, name):
    values = [orjson.loads(line) for line in (agents / FOLDER / name).read_bytes().splitlines()]
    assert detect(values).adapter.name == "kimi-wire"


@pytest.mark.corpus
def test_requests_rebuild_the_message_count_kimi_recorded(agents):
    """Every loop request's transcript has the length its llm.request recorded (the
    unanswered "hi" turns left out); the compaction request is one more (its instruction)."""
    trace = _read(agents, MAIN)
    expected = [
        orjson.loads(line)
        for line in (agents / FOLDER / MAIN).read_bytes().splitlines()
        if b'"llm.request"' in line
    ]
    answered = [r["messageCount"] for r in expected[2:]]  # the first two got no answer
    counts = [call.message_count for call in trace.calls]
    assert counts[:-1] == answered[:-1]
    assert counts[-1] == answered[-1] - 1
    assert trace.calls[-1].extra["request_kind"] == "compaction"
    assert trace.calls[-1].extra["compaction"]["tokensBefore"] == 15912
    assert trace.calls[-1].response.blocks[0].text.startswith("I am writing this handoff")


@pytest.mark.corpus
def test_usage_and_timing_come_from_the_wire(agents):
    first = _read(agents, MAIN).calls[0]
    usage = first.usage
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens) == (9431, 42, 14848)
    assert first.model == "kimi-k2.7-code" and first.stop_reason == "end_turn"
    assert first.extra["message_id"].startswith("chatcmpl-")
    assert first.started_at == pytest.approx(1785613796.910, abs=0.01)
    assert first.ended_at == pytest.approx(1785613801.102)
    assert first.extra["agent_session"] == {"agent": "Kimi Code"}
    assert not first.tokens_estimated


@pytest.mark.corpus
def test_subagent_log_sits_under_its_agent_call(agents):
    trace = _read(agents, MAIN, SUB)
    main, sub = trace.loops
    assert (len(main.calls), len(sub.calls)) == (23, 3)
    assert sub.parent_tool_id == "Agent_3"
    assert sub.label == "subagent agent-0 (explore)"
    first_sub = next(c for c in trace.calls if c.index == sub.calls[0])
    assert first_sub.extra["agent_session"]["project"] == "/private/tmp/as-agent-lab/kimi/project"
    assert corpus_counts(build_report(trace))["tool_calls"] == 19 + 2


@pytest.mark.corpus
def test_subagent_alone_has_no_parent(agents):
    trace = _read(agents, SUB)
    assert trace.loops[0].parent_tool_id is None and len(trace.calls) == 3


@pytest.mark.corpus
def test_unanswered_session_says_what_it_is(agents):
    with pytest.raises(NotATrace, match="13 requests were sent and none was answered"):
        _read(agents, SMALL)


# -- golden -----------------------------------------------------------------------------
def test_golden_wire_log():
    trace = analyze_bytes(golden_input("kimi-wire/wire.jsonl"), filename="wire.jsonl")
    assert_golden("kimi-wire/wire.report.json", build_report(trace))


def test_cancelled_turn_leaves_the_context_and_is_noted():
    trace = analyze_bytes(golden_input("kimi-wire/wire.jsonl"), filename="wire.jsonl")
    assert [c.message_count for c in trace.calls] == [1, 3, 5]
    last = trace.calls[-1]
    assert last.extra["cancelled_turns"] == 1
    texts = [b.text for m in last.appended for b in m.blocks]
    assert "list files" not in texts and "thanks" in texts
    assert not trace.calls[2].history_rewritten


def test_error_result_and_tool_timing():
    trace = analyze_bytes(golden_input("kimi-wire/wire.jsonl"), filename="wire.jsonl")
    (run,) = trace.tool_runs
    assert run.is_error and run.status == "paired" and run.duration_s == pytest.approx(0.5)
    assert trace.calls[0].tools[0]["name"] == "Bash"
    assert trace.calls[0].system == "You are Kimi Code CLI."


# -- odd input --------------------------------------------------------------------------
def test_malformed_lines_are_reported_and_the_rest_read():
    records = _golden_records()
    broken = list(records)
    broken[9] = {"type": "context.append_loop_event", "event": {"type": "tool.call", "name": "x"}}
    broken[5] = {"type": "context.append_message", "message": "hi"}
    broken.insert(3, ["not", "an", "event"])
    broken.insert(4, {"type": "context.append_loop_event", "event": 3})
    lines = [orjson.dumps(r) for r in broken]
    lines[24] = lines[24][:15]  # the turn.cancel line, cut short
    trace = analyze_bytes(b"\n".join(lines) + b"\n", filename="wire.jsonl")
    errors = {e.line: e.message for e in trace.line_errors}
    assert "no type" in errors[4]
    assert "without an event type" in errors[5]
    assert "without a message role" in errors[8]
    assert "without a toolCallId" in errors[12]
    assert 25 in errors  # the truncated line
    assert len(trace.calls) == 3
    # the result whose call was lost is an orphan, still read
    assert [r.status for r in trace.tool_runs] == ["orphan"]


def test_wrong_types_never_raise():
    records = _golden_records()
    records[12] = {"type": "usage.record", "usage": "lots", "time": "soon"}
    records[10] = {
        "type": "context.append_loop_event",
        "event": {"type": "tool.result", "toolCallId": "Bash_0", "result": [1]},
    }
    trace = analyze_bytes(_lines(*records), filename="wire.jsonl")
    errors = {e.line: e.message for e in trace.line_errors}
    assert "without a result object" in errors[11]
    assert "without a usage object" in errors[13]
    assert len(trace.calls) == 3
    assert trace.calls[0].usage.input_tokens == 900  # the step's own usage stands in


def test_usage_record_without_request_is_still_a_call():
    records = [r for r in _golden_records() if r["type"] != "llm.request"]
    trace = analyze_bytes(_lines(*records), filename="wire.jsonl")
    assert len(trace.calls) == 3
    assert any("no llm.request" in e.message for e in trace.line_errors)


def test_only_setup_events_is_not_a_trace():
    records = _golden_records()[:4]
    with pytest.raises(InputRejected, match="only session set-up events"):
        analyze_bytes(_lines(*records), filename="wire.jsonl")


@pytest.mark.corpus
def test_active_tools_the_snapshot_lacks_are_offered_by_name(agents):
    """The subagent's snapshot describes Bash only, but it ran Glob, which is active."""
    trace = _read(agents, SUB)
    names = [t["name"] for t in trace.calls[0].tools]
    assert names[0] == "Bash" and "Glob" in names
    report = build_report(trace)
    assert not [f for f in report["findings"] if f["rule"] == "unknown-tool"]


def test_results_of_a_parallel_batch_are_one_run_of_tool_messages():
    records = _golden_records()
    second = dict(records[9])
    second["event"] = {**records[9]["event"], "toolCallId": "Bash_1", "uuid": "Bash_1"}
    result = dict(records[10])
    result["event"] = {**records[10]["event"], "toolCallId": "Bash_1"}
    records[10:10] = [second]
    records[12:12] = [result]
    trace = analyze_bytes(_lines(*records), filename="wire.jsonl")
    assert trace.calls[0].tool_call_ids == ("Bash_0", "Bash_1")
    assert [m.role for m in trace.calls[1].appended] == ["assistant", "tool", "tool"]
    findings = build_report(trace)["findings"]
    assert not [f for f in findings if f["rule"] == "split-parallel-results"]
