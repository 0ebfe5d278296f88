"""The Anthropic pair-log adapter on the real corpus files, with counts checked by hand.

claude-trace counts were verified independently of the adapter: a plain script read
each line with json, took `usage` from the body or from the `message_start` event in
`body_raw`, and the stop reason from the body or the last `"stop_reason"` in the stream.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from tests.conftest import corpus_files, corpus_id
from traces.core.analysis.ingest import analyze_bytes
from traces.core.outputs.report import build_report

CLAUDE_TRACE = "claude_trace_jsonl/claude-trace-dev_test-traffic.jsonl"


@pytest.fixture(scope="module")
def claude_trace(corpus):
    return analyze_bytes((corpus / CLAUDE_TRACE).read_bytes(), filename=CLAUDE_TRACE)


def test_claude_trace_calls_and_stop_reasons(claude_trace):
    assert claude_trace.format == "anthropic-messages"
    assert len(claude_trace.calls) == 64
    assert not claude_trace.line_errors
    assert Counter(c.stop_reason for c in claude_trace.calls) == {
        "end_turn": 34,
        "max_tokens": 18,
        "tool_use": 12,
    }
    models = Counter(c.model for c in claude_trace.calls)
    assert models == {"claude-3-5-haiku-20241022": 47, "claude-sonnet-4-20250514": 17}
    streamed = sum(1 for c in claude_trace.calls if c.extra.get("streamed"))
    assert streamed == 46


def test_claude_trace_groups_interleaved_side_calls_into_loops(claude_trace):
    sonnet_loops = [
        [claude_trace.calls[i - 1].line for i in loop.calls]
        for loop in claude_trace.loops
        if loop.model == "claude-sonnet-4-20250514"
    ]
    # Main conversation (messages 1, 3 … 25 on lines 6-33), the compaction request
    # (27 messages, line 35), and the second conversation (lines 58, 61, 64).
    assert sonnet_loops == [
        [6, 8, 10, 13, 15, 17, 19, 23, 25, 27, 29, 31, 33],
        [35],
        [58, 61, 64],
    ]
    main = claude_trace.calls[5:]
    assert all(c.extends_previous for c in claude_trace.calls if c.line in (8, 10, 33))
    assert main[0].message_count == 1
    # Every haiku side call is a one-call loop of its own.
    haiku = [loop for loop in claude_trace.loops if loop.model.startswith("claude-3-5-haiku")]
    assert len(haiku) == 47 and all(len(loop.calls) == 1 for loop in haiku)


def test_claude_trace_tool_runs_are_all_paired_by_id(claude_trace):
    runs = claude_trace.tool_runs
    assert Counter(run.name for run in runs) == {
        "TodoWrite": 5,
        "Edit": 3,
        "Bash": 2,
        "LS": 1,
        "Write": 1,
    }
    assert {run.status for run in runs} == {"paired"}
    by_line = {c.index: c.line for c in claude_trace.calls}
    # Each tool call's result arrives in the loop's next request.
    ls = next(run for run in runs if run.name == "LS")
    assert (by_line[ls.call], by_line[ls.result_call]) == (8, 10)


def test_claude_trace_usage_totals(claude_trace):
    totals = build_report(claude_trace)["totals"]
    assert totals["input_tokens"] == 5_853  # 5,709 streamed + 18 x 8 non-streamed
    assert totals["cache_read_tokens"] == 279_790
    assert totals["cache_write_tokens"] == 45_598
    assert build_report(claude_trace)["outcome"]["kind"] == "finished"


def test_claude_trace_timings_are_epoch_seconds(claude_trace):
    first = claude_trace.calls[0]
    assert 1.7e9 < first.started_at < 1.8e9
    assert 0 < first.duration_s < 60


def test_claude_trace_masks_credentials_in_kept_headers(claude_trace):
    headers = claude_trace.calls[0].extra["http_request"]["headers"]
    assert headers["authorization"] == "[masked]"
    assert headers["anthropic-version"] == "2023-06-01"


EXPECTED = {
    # file: (calls, tool runs, stop reason, input tokens, output tokens)
    "openinference_js_reasoning-tool-use-non-streaming.json": (1, 1, "tool_use", 596, 99),
    "openinference_js_reasoning-tool-use-streaming.json": (1, 1, "tool_use", 596, 99),
    "openinference_js_redacted-thinking-non-streaming.json": (1, 0, "end_turn", 49, 5),
    "openinference_js_redacted-thinking-streaming.json": (1, 0, "end_turn", 49, 5),
    "openinference_js_thinking-multi-turn-0.json": (1, 0, "end_turn", 52, 211),
    "openinference_js_thinking-multi-turn-1.json": (1, 0, "end_turn", 286, 539),
    "openinference_js_thinking-non-streaming.json": (1, 0, "end_turn", 52, 221),
    "openinference_js_thinking-streaming.json": (1, 0, "end_turn", 52, 204),
    "test_anthropic_instrumentation_multiple_tool_calling.yaml": (1, 2, "tool_use", 721, 112),
    "test_anthropic_instrumentation_multiple_tool_calling_streaming.yaml": (
        1, 2, "tool_use", 721, 113,
    ),
}  # fmt: skip


@pytest.mark.parametrize("path", corpus_files("anthropic_messages_api"), ids=corpus_id)
def test_anthropic_messages_api_recordings(path):
    trace = analyze_bytes(path.read_bytes(), filename=path.name)
    calls, tool_runs, stop, input_tokens, output_tokens = EXPECTED[path.name]
    assert trace.format == "anthropic-messages"
    assert (len(trace.calls), len(trace.tool_runs)) == (calls, tool_runs)
    call = trace.calls[0]
    assert call.stop_reason == stop and call.status == "ok"
    assert (call.usage.input_tokens, call.usage.output_tokens) == (input_tokens, output_tokens)
    kinds = [b.kind for b in call.response.blocks]
    if "thinking" in path.name and "redacted" not in path.name:
        assert kinds[0] == "thinking"
    if "redacted" in path.name:
        assert "redacted_thinking" in kinds
    if tool_runs == 2:
        # Parallel tool use in one response, never answered: the recording ends there.
        assert len(trace.batches) == 1
        assert {run.status for run in trace.tool_runs} == {"dangling"}
        assert build_report(trace)["outcome"]["kind"] == "halted_on_tool_use"


def test_streamed_and_plain_recordings_rebuild_the_same_message(corpus):
    folder = corpus / "anthropic_messages_api"
    plain = analyze_bytes(
        (folder / "openinference_js_reasoning-tool-use-non-streaming.json").read_bytes()
    )
    streamed = analyze_bytes(
        (folder / "openinference_js_reasoning-tool-use-streaming.json").read_bytes()
    )
    assert [b.kind for b in plain.calls[0].response.blocks] == ["thinking", "text", "tool_use"]
    assert [b.kind for b in streamed.calls[0].response.blocks] == ["thinking", "text", "tool_use"]
    assert plain.tool_runs[0].name == streamed.tool_runs[0].name == "get_weather"


def _thread_line(messages: list, reply: dict, thread: dict, **fields) -> bytes:
    request = {"model": "claude-sonnet-4-6", "max_tokens": 64, "messages": messages, **fields}
    record = {
        "request": {
            "url": "https://api.anthropic.com/v1/messages",
            "body": request | {"thread": thread},
        },
        "response": {"status_code": 200, "body": reply},
    }
    return json.dumps(record).encode()


def _reply(message_id: str, content: list, stop: str) -> dict:
    usage = {"input_tokens": 10, "output_tokens": 5}
    return {"id": message_id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
            "content": content, "stop_reason": stop, "usage": usage}  # fmt: skip


def test_a_message_thread_continued_in_the_file_is_rebuilt_and_one_missing_is_said():
    """`thread: continue` requests carry only the new turn: with the reply they continue
    in the file, their transcript, system and tools are the thread's; with it missing,
    the call says so and is not taken for a loop that dropped its tool_use echo."""
    ask = [{"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"q": "x"}}]
    result = [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                            "content": "found"}]}]  # fmt: skip
    tools = [{"name": "lookup", "input_schema": {"type": "object"}}]
    lines = [
        _thread_line([{"role": "user", "content": "find x"}], _reply("msg_1", ask, "tool_use"),
                     {"type": "create"}, system="Be brief.", tools=tools),
        _thread_line(result, _reply("msg_2", [{"type": "text", "text": "x is found"}], "end_turn"),
                     {"type": "continue", "previous_message_id": "msg_1"}),
        _thread_line(result, _reply("msg_3", [{"type": "text", "text": "again"}], "end_turn"),
                     {"type": "continue", "previous_message_id": "msg_gone"}),
    ]  # fmt: skip
    trace = analyze_bytes(b"\n".join(lines), filename="threads.jsonl")
    first, second, third = trace.calls
    assert second.loop == first.loop and second.message_count == 3
    assert second.extra["inherited_messages"] == 2
    assert second.system == "Be brief." and list(second.tools) == tools
    assert third.extra["previous_message_missing"] is True
    report = build_report(trace)
    assert "missing-tool-use-echo" not in {f["rule"] for f in report["findings"]}
