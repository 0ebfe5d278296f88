"""Claude Agent SDK message streams (`claude-agent-sdk`): corpus facts, golden report, odd input.

The corpus facts come from SOURCES.md section 11 and were re-read by hand from each file:
one API call split over two `assistant` lines with the same `msg_…` id, a subagent under
the `Agent` call (`parent_tool_use_id`), hook `control_request`s between a tool_use and
its result, and a final `result` whose `modelUsage` counts the subagent while `usage`
does not.
"""

from __future__ import annotations

import orjson
import pytest

from tests.conftest import CORPUS
from tests.golden import assert_golden, golden_input
from traces.core.analysis.ingest import analyze_bytes
from traces.core.outputs.report import build_report
from traces.core.reading.formats.detect import detect
from traces.core.reading.limits import InputRejected

FOLDER = CORPUS / "claude_agent_sdk_stream"
SUBAGENT = "openinference_test_query_task_subagent_spans.yaml"
HOOKS = "openinference_test_client_tool_hooks_create_tool_spans.yaml"
TRANSPORT = "logfire_basic_conversation.json"


def _corpus(name: str):
    path = FOLDER / name
    if not path.is_file():
        pytest.skip(f"corpus file {name} is absent")
    return analyze_bytes(path.read_bytes(), filename=name)


@pytest.mark.corpus
def test_one_response_over_two_lines_is_one_call_and_the_subagent_is_its_own_loop():
    trace = _corpus(SUBAGENT)
    assert [c.extra["message_id"] for c in trace.calls] == [
        "msg_01WamgikjeDM67fzjxXaA4Qx",
        "msg_01LQEmjmRaNtMGW7xCb28KE1",
        "msg_01FQ2Qr9YNrfbX4TMJPp9jEG",
    ]
    first = trace.calls[0]
    assert [b.kind for b in first.response.blocks] == ["thinking", "tool_use"]
    assert first.stop_reason == "tool_use" and first.extra["stop_reason_inferred"]
    main, sub = trace.loops
    assert sub.parent_tool_id == "toolu_01CmP9G62riKUZRqXCjyfpGA"
    assert sub.label == "subagent a7da442314ff745d1 (Run wc -c command)"
    assert main.calls == (1, 3) and sub.calls == (2,)
    bash = next(run for run in trace.tool_runs if run.name == "Bash")
    assert bash.status == "paired" and bash.loop == sub.index


@pytest.mark.corpus
def test_the_result_keeps_both_usages_model_usage_counts_the_subagent():
    result = _corpus(SUBAGENT).calls[-1].extra["session_result"]
    assert result["usage"]["cache_read_input_tokens"] == 34198
    assert result["model_usage"]["claude-sonnet-4-6"]["cacheReadInputTokens"] == 59771
    assert result["num_turns"] == 2 and result["subtype"] == "success"


@pytest.mark.corpus
def test_hook_round_trips_are_hook_events_not_tool_calls():
    trace = _corpus(HOOKS)
    assert [run.name for run in trace.tool_runs] == ["Bash"]
    hooks = trace.calls[0].extra["hook_events"]
    assert [h["hook_event_name"] for h in hooks] == ["PreToolUse", "PostToolUse"]
    assert {h["tool_use_id"] for h in hooks} == {"toolu_01JviyV9SUhpLr6HyMM4fRsH"}
    assert trace.calls[-1].extra["session_result"]["total_cost_usd"] == 0.02298125


@pytest.mark.corpus
def test_a_transport_log_reads_both_directions_and_the_sent_prompt():
    trace = _corpus(TRANSPORT)
    (call,) = trace.calls
    assert call.appended[0].blocks[0].text == "What is 2+2?"
    assert call.response.blocks[0].text == "4"
    assert call.extra["session"]["claude_code_version"] == "2.1.84"


def test_golden_stream():
    trace = analyze_bytes(golden_input("claude-agent-sdk/stream.jsonl"), filename="stream.jsonl")
    report = build_report(trace)
    assert_golden("claude-agent-sdk/stream.report.json", report)
    hooks = trace.calls[0].extra["hook_events"]
    assert hooks[0]["decision"] == "approve" and hooks[0]["answer"] == "success"
    assert trace.calls[0].usage.output_tokens == 42  # the fuller line, not a sum


def test_a_json_list_and_a_yaml_list_read_like_the_lines():
    lines = [
        orjson.loads(line)
        for line in golden_input("claude-agent-sdk/stream.jsonl").split(b"\n")
        if line
    ]
    from_jsonl = build_report(analyze_bytes(golden_input("claude-agent-sdk/stream.jsonl")))
    from_json = build_report(analyze_bytes(orjson.dumps(lines), filename="s.json"))
    yaml_text = "messages:\n" + "".join(f"- {orjson.dumps(m).decode()}\n" for m in lines)
    from_yaml = build_report(analyze_bytes(yaml_text.encode(), filename="s.yaml"))
    for other in (from_json, from_yaml):
        assert other["tool_runs"] == from_jsonl["tool_runs"]
        assert [c["tool_call_ids"] for c in other["calls"]] == [
            c["tool_call_ids"] for c in from_jsonl["calls"]
        ]


def test_detection_claims_stream_lines_and_not_claude_code_sessions():
    choice = detect([{"type": "system", "subtype": "init", "session_id": "s"}])
    assert choice.adapter.name == "claude-agent-sdk"
    session_line = {"type": "user", "sessionId": "s", "uuid": "u", "message": {"role": "user"}}
    assert detect([session_line]).adapter.name == "claude-code"


def test_malformed_messages_become_line_errors_and_the_rest_is_read():
    good = golden_input("claude-agent-sdk/stream.jsonl").split(b"\n")
    bad = [
        b'{"type": "assistant", "message": "not an object", "session_id": "s"}',
        b'{"type": "user", "message": {"role": "user", "content": 7}, "session_id": "s"}',
        b'{"type": "mystery", "session_id": "s"}',
        b"[1, 2",
    ]
    data = b"\n".join(good[:3] + bad + good[3:])
    trace = analyze_bytes(data, filename="s.jsonl")
    assert len(trace.calls) == 4
    lines = {e.line: e.message for e in trace.line_errors}
    assert set(lines) == {4, 5, 6, 7}
    assert "without a 'message' object" in lines[4]
    assert "neither text nor a list" in lines[5]
    assert "not a Claude Agent SDK stream message" in lines[6]


def test_a_stream_with_no_assistant_message_is_refused_with_the_reason():
    data = b'{"type": "system", "subtype": "init", "session_id": "s", "model": "m"}\n'
    with pytest.raises(InputRejected, match="no model call could be rebuilt"):
        analyze_bytes(data)


def _line(**fields) -> bytes:
    return orjson.dumps(fields)


def _assistant(message_id: str, blocks: list, parent=None) -> bytes:
    message = {"id": message_id, "role": "assistant", "model": "claude-sonnet-4-6"}
    message |= {"content": blocks, "usage": {"input_tokens": 5, "output_tokens": 7}}
    return _line(type="assistant", message=message, parent_tool_use_id=parent, session_id="s")


def _result_line(tool_id: str, text: str, is_error: bool = False) -> bytes:
    block = {"type": "tool_result", "tool_use_id": tool_id, "content": text, "is_error": is_error}
    message = {"role": "user", "content": [block]}
    return _line(type="user", message=message, parent_tool_use_id=None, session_id="s")


def test_permission_prompts_compaction_partial_events_and_an_error_result():
    write = {"type": "tool_use", "id": "toolu_w", "name": "Write", "input": {"path": "x"}}
    data = b"\n".join(
        [
            _line(type="system", subtype="init", session_id="s", model="claude-sonnet-4-6"),
            _line(type="stream_event", event={"type": "message_start"}, session_id="s"),
            _assistant("msg_1", [write]),
            _line(
                type="control_request",
                request_id="perm-1",
                request={"subtype": "can_use_tool", "tool_name": "Write", "input": {"path": "x"}},
            ),
            _line(
                type="control_response",
                response={
                    "subtype": "success",
                    "request_id": "perm-1",
                    "response": {"behavior": "deny", "message": "not here"},
                },
            ),
            _line(type="tool_progress", tool_use_id="toolu_w", elapsed_time_seconds=1),
            _line(
                type="system",
                subtype="hook_response",
                session_id="s",
                hook_event="PostToolUse",
                exit_code=0,
            ),
            _result_line("toolu_w", "Permission denied: not here", is_error=True),
            _assistant("msg_2", [{"type": "text", "text": "I may not write there."}]),
            _line(
                type="system",
                subtype="compact_boundary",
                session_id="s",
                compact_metadata={"trigger": "auto", "pre_tokens": 150000},
            ),
            _assistant("msg_3", [{"type": "text", "text": "Continuing after the summary."}]),
            _line(
                type="result",
                subtype="error_max_turns",
                is_error=True,
                num_turns=3,
                total_cost_usd="a lot",
                session_id="s",
            ),
        ]
    )
    trace = analyze_bytes(data, filename="s.jsonl")
    assert trace.line_errors == ()
    first, _, third = trace.calls
    hook, shell = first.extra["hook_events"]
    assert (hook["kind"], hook["tool_name"], hook["decision"]) == ("permission", "Write", "deny")
    assert (shell["kind"], shell["hook_event_name"]) == ("hook response", "PostToolUse")
    (run,) = trace.tool_runs
    assert run.status == "paired" and run.is_error
    assert third.extra["compaction"]["trigger"] == "auto" and third.message_count == 0
    assert third.extra["session_result"]["subtype"] == "error_max_turns"
    assert "total_cost_usd" not in third.extra["session_result"]  # not a number: not kept


def test_two_sessions_in_one_file_are_two_loops():
    def session(session_id: str, prompt: str, message_id: str) -> list[bytes]:
        return [
            _line(type="user", message={"role": "user", "content": prompt}, session_id="default"),
            _line(type="system", subtype="init", session_id=session_id, model="m"),
            _assistant(message_id, [{"type": "text", "text": "ok"}]),
            _line(type="result", subtype="success", num_turns=1, session_id=session_id),
        ]

    data = b"\n".join(session("s-1", "first", "msg_a") + session("s-2", "second", "msg_b"))
    trace = analyze_bytes(data, filename="two.jsonl")
    assert [loop.label for loop in trace.loops] == ["session s-1", "session s-2"]
    assert [c.appended[0].blocks[0].text for c in trace.calls] == ["first", "second"]


def test_a_type_that_is_not_text_is_a_line_error_not_a_crash():
    good = golden_input("claude-agent-sdk/stream.jsonl")
    data = good + b'{"type": ["assistant"], "session_id": "s"}\n{"type": {"a": 1}}\n'
    trace = analyze_bytes(data, filename="s.jsonl")
    assert len(trace.calls) == 4 and len(trace.line_errors) == 2
