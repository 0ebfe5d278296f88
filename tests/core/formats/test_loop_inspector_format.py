"""Loop Inspector's own event format: schema, pairing, tool timings and the documented recorder.

The golden log (tests/golden/loop-inspector/anthropic_loop.jsonl) was written by hand; its
expected numbers below were worked out from the lines themselves (timestamps subtracted,
usage copied from the bodies).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from tests.golden import assert_golden, golden_input
from traces.core.analysis.ingest import analyze_bytes
from traces.core.outputs.report import build_report
from traces.core.reading.formats import loop_inspector
from traces.core.reading.formats.loop_inspector import LoopInspectorAdapter, event_validator
from traces.core.reading.formats.registry import adapters, get_adapter

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "event-format.md"
SCHEMA = ROOT / "traces" / "core" / "reading" / "schemas" / "loop-inspector-events.schema.json"


def _log(*events: object) -> bytes:
    return b"\n".join(orjson.dumps(e) for e in events) + b"\n"


def _anthropic_reply(text: str = "ok", tool_id: str | None = None) -> dict:
    content: list[dict] = [{"type": "text", "text": text}]
    if tool_id:
        content.append({"type": "tool_use", "id": tool_id, "name": "t", "input": {}})
    return {
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
        "content": content,
        "stop_reason": "tool_use" if tool_id else "end_turn",
        "usage": {"input_tokens": 10, "output_tokens": 2},
    }


USER = {"role": "user", "content": "hi"}


# -- the golden log --------------------------------------------------------------------
@pytest.fixture(scope="module")
def golden_trace():
    return analyze_bytes(golden_input("loop-inspector/anthropic_loop.jsonl"))


def test_golden_report(golden_trace):
    assert_golden("loop-inspector/anthropic_loop.report.json", build_report(golden_trace))


def test_golden_calls_pair_requests_with_responses(golden_trace):
    trace = golden_trace
    assert trace.format == "loop-inspector"
    assert [(c.line, c.status) for c in trace.calls] == [
        (2, "ok"),
        (8, "error"),
        (10, "ok"),
        (15, "error"),
    ]
    first, overloaded, retry, unanswered = trace.calls
    assert (first.started_at, first.duration_s) == (1748772000.0, 3.0)
    assert first.usage.cache_write_tokens == 1000
    assert first.extra["meta"]["agent"] == "fixer 0.1"
    assert (overloaded.http_status, overloaded.error) == (
        529,
        "HTTP 529 overloaded_error: Overloaded",
    )
    # The retry re-sends the same transcript; its streamed reply is rebuilt from SSE text.
    assert retry.extends_previous and retry.prefix_len == 3 and retry.extra["streamed"]
    assert retry.response.blocks[0].text == "The test expects 2."
    assert retry.extra["request_event"] == {"attempt": 2}
    assert unanswered.error == "no response recorded" and unanswered.response is None
    loop = trace.loops[0]
    assert (loop.key, loop.label, len(trace.loops)) == ("main", "main agent", 1)


def test_golden_tool_timings_and_errors(golden_trace):
    runs = {r.id: r for r in golden_trace.tool_runs}
    assert runs["toolu_a"].duration_s == pytest.approx(0.2)
    assert runs["toolu_b"].duration_s == pytest.approx(4.5)
    # The tool_result block carries no is_error; tool_end's verdict survives the pairing.
    assert runs["toolu_b"].is_error and not runs["toolu_a"].is_error
    assert {r.status for r in runs.values()} == {"paired"}
    assert golden_trace.batches[0].tool_call_ids == ("toolu_a", "toolu_b")


def test_golden_bad_lines_are_reported_with_their_line_and_field(golden_trace):
    errors = [(e.line, e.message) for e in golden_trace.line_errors]
    assert errors == [
        (12, "not a valid loop-inspector/events/v1 event: 'call_id' is a required property"),
        (13, "cut off mid-record (the JSON ends before it is complete)"),
        (
            14,
            "not a valid loop-inspector/events/v1 event: $.ts: "
            "'yesterday' is not an ISO 8601 time or epoch seconds",
        ),
    ]


# -- pairing edge cases ----------------------------------------------------------------
def test_response_without_request_and_reused_call_id():
    data = _log(
        {"type": "request", "call_id": "a", "ts": 1, "body": {"messages": [USER]}},
        {"type": "request", "call_id": "a", "ts": 2, "body": {"messages": [USER]}},
        {"type": "response", "call_id": "a", "ts": 3, "body": _anthropic_reply()},
        {"type": "response", "call_id": "ghost", "ts": 4, "error": "connection reset"},
    )
    trace = analyze_bytes(data)
    calls = [(c.line, c.status, c.error, c.request_recorded) for c in trace.calls]
    assert calls == [
        (1, "error", "no response recorded", True),  # superseded by the second "a"
        (2, "ok", None, True),
        (4, "error", "connection reset", False),
    ]
    assert trace.calls[1].duration_s == 1.0


def test_tool_events_for_unknown_ids_stay_visible_as_orphans():
    data = _log(
        {"type": "tool_start", "tool_call_id": "nobody", "name": "grep", "ts": 10},
        {"type": "tool_end", "tool_call_id": "nobody", "ts": 12.5, "is_error": True},
        {"type": "request", "call_id": "a", "ts": 13, "body": {"messages": [USER]}},
        {"type": "response", "call_id": "a", "ts": 14, "body": _anthropic_reply()},
    )
    trace = analyze_bytes(data)
    orphan = trace.tool_runs[0]
    assert (orphan.status, orphan.name, orphan.duration_s, orphan.is_error) == (
        "orphan",
        "grep",
        2.5,
        True,
    )


def test_mixed_good_and_bad_lines():
    good = {"type": "request", "call_id": "a", "ts": "2025-01-01T00:00:00", "body": {}}
    data = b"\n".join(
        [
            orjson.dumps(good),
            b'{"type": "request", "call_id": 7, "ts": 1, "body": {}}',
            b"[1, 2]",
            b'{"type": "tool_end", "tool_call_id": "x", "ts": 1, "is_error": "yes"}',
            orjson.dumps({"type": "response", "call_id": "a", "ts": 1735689601, "body": None}),
        ]
    )
    trace = analyze_bytes(data)
    assert [e.line for e in trace.line_errors] == [2, 3, 4]
    assert "$.call_id: 7 is not of type 'string'" in trace.line_errors[0].message
    assert "$.is_error: 'yes' is not of type 'boolean'" in trace.line_errors[2].message
    (call,) = trace.calls
    assert call.status == "error" and call.duration_s == 1.0


# -- providers -------------------------------------------------------------------------
def _require(name: str) -> None:
    """The provider adapter these bodies go through is registered (a removed one fails)."""
    assert name in {a.name for a in adapters()}, f"no {name} adapter is registered"


def test_openai_chat_bodies():
    _require("openai-chat")
    tool_call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "lookup", "arguments": '{"q": "x"}'},
    }
    first = {"model": "gpt-4o-mini", "messages": [{"role": "system", "content": "s"}, USER]}
    second = {
        "model": "gpt-4o-mini",
        "messages": [
            *first["messages"],
            {"role": "assistant", "content": None, "tool_calls": [tool_call]},
            {"role": "tool", "tool_call_id": "call_1", "content": "boom"},
        ],
    }
    completion = {
        "object": "chat.completion",
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "message": second["messages"][2], "finish_reason": "tool_calls"}],
        "usage": {
            "prompt_tokens": 100,
            "completion_tokens": 7,
            "prompt_tokens_details": {"cached_tokens": 64},
        },
    }
    data = _log(
        {"type": "meta", "format": "loop-inspector/events/v1", "provider": "openai-chat"},
        {"type": "request", "call_id": "1", "ts": 1, "body": first},
        {"type": "response", "call_id": "1", "ts": 2, "body": completion},
        {"type": "tool_start", "tool_call_id": "call_1", "ts": 2.1},
        {"type": "tool_end", "tool_call_id": "call_1", "ts": 2.4, "is_error": True},
        {"type": "request", "call_id": "2", "ts": 3, "body": second},
    )
    trace = analyze_bytes(data)
    assert not trace.line_errors
    assert trace.calls[0].stop_reason == "tool_use"
    assert (trace.calls[0].usage.input_tokens, trace.calls[0].usage.cache_read_tokens) == (36, 64)
    (run,) = trace.tool_runs
    assert (run.status, run.result_call, run.is_error) == ("paired", 2, True)
    assert run.duration_s == pytest.approx(0.3)
    assert trace.calls[1].error == "no response recorded"


def test_openai_responses_bodies_are_recognised_without_a_provider():
    _require("openai-responses")
    response = {
        "object": "response",
        "model": "gpt-4.1",
        "status": "completed",
        "output": [
            {"type": "function_call", "id": "fc_1", "call_id": "call_9", "name": "f", "arguments": "{}"}
        ],
        "usage": {"input_tokens": 20, "output_tokens": 5, "input_tokens_details": {"cached_tokens": 0}},
    }  # fmt: skip
    data = _log(
        {"type": "request", "call_id": "r", "ts": 1, "body": {"model": "gpt-4.1", "input": "hi"}},
        {"type": "response", "call_id": "r", "ts": 2, "body": response},
    )
    trace = analyze_bytes(data)
    (call,) = trace.calls
    assert call.extra["provider"] == "openai-responses"
    assert call.tool_call_ids == ("call_9",)


def test_a_provider_without_its_adapter_is_a_clear_line_error(monkeypatch):
    def only_anthropic(name: str):
        if name != "anthropic-messages":
            raise KeyError(name)
        return get_adapter(name)

    monkeypatch.setattr(loop_inspector, "get_adapter", only_anthropic)
    data = _log(
        {"type": "request", "call_id": "a", "ts": 1, "provider": "openai-chat", "body": {}},
        {"type": "response", "call_id": "a", "ts": 2, "body": {"choices": []}},
        {"type": "request", "call_id": "b", "ts": 3, "body": {"messages": [USER]}},
        {"type": "response", "call_id": "b", "ts": 4, "body": _anthropic_reply()},
    )
    trace = analyze_bytes(data)
    assert len(trace.calls) == 1 and trace.calls[0].line == 3
    (error,) = trace.line_errors
    assert error.line == 1
    assert "openai-chat bodies cannot be read" in error.message


# -- sniffing and the schema -----------------------------------------------------------
def test_sniff():
    assert LoopInspectorAdapter.sniff([{"type": "request", "call_id": "a"}]).score == 0.95
    meta = {"type": "meta", "format": "loop-inspector/events/v1"}
    assert LoopInspectorAdapter.sniff([meta]).score == 0.95
    assert LoopInspectorAdapter.sniff([{"type": "meta", "format": "other"}]) is None
    assert LoopInspectorAdapter.sniff([{"type": "message", "role": "assistant"}]) is None
    assert LoopInspectorAdapter.sniff([{"type": "user", "message": {}}]) is None


def test_schema_is_valid_2020_12_and_loaded_once():
    schema = json.loads(SCHEMA.read_text())
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)
    assert event_validator() is event_validator()
    assert event_validator().schema == schema


def _doc_blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC.read_text(), flags=re.S)


def test_documented_example_log_is_valid_and_rebuilds():
    (example,) = [b for b in _doc_blocks("json") if b.count("\n") > 3]
    for line in example.strip().splitlines():
        assert event_validator().is_valid(json.loads(line)), line
    trace = analyze_bytes(example.encode())
    assert len(trace.calls) == 2 and not trace.line_errors
    (run,) = trace.tool_runs
    assert run.status == "paired" and run.duration_s == pytest.approx(0.5)


def test_documented_recorder_writes_a_log_that_rebuilds(tmp_path):
    """Runs the recorder from docs/event-format.md as written, with a scripted 'model'."""
    (source,) = [b for b in _doc_blocks("python") if b.startswith("# loop_inspector_recorder")]
    namespace: dict = {}
    exec(compile(source, "loop_inspector_recorder.py", "exec"), namespace)
    path = tmp_path / "events.jsonl"
    recorder = namespace["EventRecorder"](path, provider="anthropic", agent="test")
    messages: list = [USER]
    call = recorder.request({"model": "claude-x", "messages": messages})
    reply = _anthropic_reply("checking", tool_id="toolu_1")
    recorder.response(call, body=reply)
    messages = [*messages, {"role": "assistant", "content": reply["content"]}]
    recorder.tool_start("toolu_1", "t")
    recorder.tool_end("toolu_1", "t", is_error=True)
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "no"}
    messages = [*messages, {"role": "user", "content": [result]}]
    call = recorder.request({"model": "claude-x", "messages": messages})
    recorder.response(call, error="TimeoutError()")
    recorder.close()
    trace = analyze_bytes(path.read_bytes())
    assert trace.format == "loop-inspector" and not trace.line_errors
    assert [(c.status, c.error) for c in trace.calls] == [("ok", None), ("error", "TimeoutError()")]
    (run,) = trace.tool_runs
    assert run.status == "paired" and run.is_error and run.duration_s is not None
    assert trace.calls[0].extra["meta"]["agent"] == "test"


# -- the quick check never accepts more than the schema --------------------------------
FIELD_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-5, max_value=700),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["", "x", "anthropic", "openai-chat", "loop-inspector/events/v1"]),
    st.sampled_from(["2025-06-01T10:00:00Z", "2025-06-01 10:00", "2025-6-1T10:00", "yesterday"]),
    st.just({}),
    st.just([]),
)
FIELD_NAMES = st.sampled_from(
    [
        "type",
        "call_id",
        "tool_call_id",
        "ts",
        "body",
        "provider",
        "status",
        "error",
        "format",
        "name",
        "is_error",
        "loop_id",
        "loop_label",
        "parent_tool_call_id",
        "agent",
        "extra",
    ]
)
VALID_BASES = [
    {"type": "meta", "format": "loop-inspector/events/v1"},
    {"type": "request", "call_id": "a", "ts": 1, "body": {}},
    {"type": "response", "call_id": "a", "ts": "2025-06-01T10:00:00Z", "body": {}},
    {"type": "response", "call_id": "a", "ts": 2.5, "error": "x"},
    {"type": "tool_start", "tool_call_id": "t", "ts": 1},
    {"type": "tool_end", "tool_call_id": "t", "ts": 1, "is_error": False},
]
EVENTS = st.builds(
    lambda base, changes, dropped: {
        k: v for k, v in {**base, **changes}.items() if k not in dropped or k == "type"
    },
    st.sampled_from(VALID_BASES),
    st.dictionaries(FIELD_NAMES, FIELD_VALUES, max_size=3),
    st.sets(FIELD_NAMES, max_size=1),
)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(EVENTS)
def test_quick_check_accepts_only_what_the_schema_accepts(event):
    """Valid events with up to three fields changed and one dropped, on the boundary."""
    if loop_inspector.plainly_valid(event):
        assert event_validator().is_valid(event)


def test_quick_check_takes_the_common_lines():
    lines = golden_input("loop-inspector/anthropic_loop.jsonl").splitlines()
    events = [json.loads(line) for i, line in enumerate(lines, start=1) if i not in (12, 13, 14)]
    assert all(loop_inspector.plainly_valid(e) for e in events)
    assert all(event_validator().is_valid(e) for e in events)
