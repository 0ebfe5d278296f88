"""Qwen Code sessions (`qwen-code`). No real session file exists in the corpus (SOURCES.md:
"Qwen Code chats: not found at all"): tests/golden/qwen-code/session.jsonl and the small
records below are hand-written following the record shape of Qwen Code's recorder
(QwenLM/qwen-code, packages/core/src/services/chatRecordingService.ts: `uuid`,
`parentUuid`, `sessionId`, `timestamp`, `type`, `cwd`, `version`, `message` as a Gemini
Content, `usageMetadata`, `toolCallResult`, `systemPayload`)."""

from __future__ import annotations

import orjson
import pytest

from tests.golden import assert_golden, golden_input
from traces.core.analysis.ingest import analyze_bytes
from traces.core.model import Trace
from traces.core.outputs.report import build_report
from traces.core.reading.formats.detect import detect
from traces.core.reading.formats.qwen_code import QwenCodeAdapter
from traces.core.reading.limits import InputRejected

SESSION = "s-1"


def _record(uuid: str, parent: str | None, kind: str, **more) -> dict:
    return {
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": SESSION,
        "timestamp": more.pop("at", "2026-01-01T00:00:01Z"),
        "type": kind,
        "cwd": "/work/app",
        "version": "0.6.0",
        **more,
    }


def _user(uuid: str, parent: str | None, text: str, **more) -> dict:
    return _record(
        uuid, parent, "user", message={"role": "user", "parts": [{"text": text}]}, **more
    )


def _assistant(uuid: str, parent: str | None, *parts: dict, **more) -> dict:
    usage = more.pop("usage", {"promptTokenCount": 100, "candidatesTokenCount": 10})
    record = _record(
        uuid, parent, "assistant", model="qwen3-coder-plus",
        message={"role": "model", "parts": list(parts) or [{"text": "ok"}]}, **more,
    )  # fmt: skip
    if usage is not None:
        record["usageMetadata"] = usage
    return record


def _result(uuid: str, parent: str, call: str, status: str = "success", **more) -> dict:
    response = {"output": "done"} if status == "success" else {"error": "failed"}
    answer = {"functionResponse": {"id": call, "name": "run_shell_command", "response": response}}
    return _record(
        uuid, parent, "tool_result", message={"role": "user", "parts": [answer]},
        toolCallResult={"callId": call, "status": status}, **more,
    )  # fmt: skip


def _call(call: str) -> dict:
    return {"functionCall": {"id": call, "name": "run_shell_command", "args": {"command": "ls"}}}


def _read(*records) -> Trace:
    data = b"".join((r if isinstance(r, bytes) else orjson.dumps(r)) + b"\n" for r in records)
    return analyze_bytes(data, filename="session.jsonl")


def test_qwen_records_are_not_read_as_claude_code():
    values = [_user("u1", None, "hi"), _assistant("a1", "u1")]
    assert detect(values).adapter.name == "qwen-code"


def test_claude_code_lines_are_not_claimed():
    claude = {"type": "user", "uuid": "u", "parentUuid": None, "sessionId": "s",
              "message": {"role": "user", "content": "hi"}}  # fmt: skip
    assert QwenCodeAdapter.sniff([claude]) is None
    assert detect([claude]).adapter.name == "claude-code"


def test_one_call_per_assistant_record_with_its_usage_and_the_session_on_the_first():
    trace = _read(
        _user("u1", None, "list"),
        _assistant(
            "a1",
            "u1",
            _call("c1"),
            usage={
                "promptTokenCount": 900,
                "cachedContentTokenCount": 600,
                "candidatesTokenCount": 9,
                "thoughtsTokenCount": 4,
            },
        ),
        _result("t1", "a1", "c1", at="2026-01-01T00:00:03Z"),
        _assistant("a2", "t1", at="2026-01-01T00:00:05Z"),
    )
    first, second = trace.calls
    assert first.usage is not None
    assert (first.usage.input_tokens, first.usage.cache_read_tokens) == (300, 600)
    assert first.usage.output_tokens == 13 and first.stop_reason == "tool_use"
    assert first.extra["agent_session"] == {
        "agent": "Qwen Code",
        "session_id": SESSION,
        "project": "/work/app",
    }
    assert "agent_session" not in second.extra and second.message_count == 3
    (run,) = trace.tool_runs
    assert (run.status, run.result_call, run.result_text) == ("paired", second.index, "done")


def test_results_of_the_last_response_count_from_the_tool_result_record():
    trace = _read(
        _user("u1", None, "x"), _assistant("a1", "u1", _call("c1")), _result("t1", "a1", "c1")
    )
    (run,) = trace.tool_runs
    assert run.status == "paired" and run.result_call is None


def test_error_status_is_an_error_and_cancelled_is_not():
    trace = _read(
        _user("u1", None, "x"),
        _assistant("a1", "u1", _call("bad"), _call("no")),
        _result("t1", "a1", "bad", "error"),
        _result("t2", "t1", "no", "cancelled"),
        _assistant("a2", "t2"),
    )
    runs = {r.id: r.is_error for r in trace.tool_runs}
    assert runs == {"bad": True, "no": False}


def test_a_record_going_back_to_an_earlier_parent_cuts_the_conversation_there():
    trace = _read(
        _user("u1", None, "first"),
        _assistant("a1", "u1"),
        _user("u2", "a1", "second"),
        _assistant("a2", "u2"),
        _record("rw", "a1", "system", subtype="rewind", systemPayload={"truncatedCount": 2}),
        _user("u3", "rw", "instead"),
        _assistant("a3", "u3"),
    )
    third = trace.calls[2]
    assert third.message_count == 3  # first, its answer, instead
    assert third.extra["rewound"] == {"to": "a1", "messages_removed": 2}


def test_a_compression_replaces_the_history():
    compressed = [{"role": "user", "parts": [{"text": "summary"}]}]
    trace = _read(
        _user("u1", None, "first"),
        _assistant("a1", "u1"),
        _record("c", "a1", "system", subtype="chat_compression",
                systemPayload={"info": {"newTokenCount": 5}, "compressedHistory": compressed}),
        _user("u2", "c", "next"),
        _assistant("a2", "u2"),
    )  # fmt: skip
    second = trace.calls[1]
    assert second.message_count == 2 and second.history_rewritten
    assert second.extra["compaction"] == {"newTokenCount": 5}


def test_subagent_records_are_their_own_loop():
    side = {"isSidechain": True, "agentId": "explore-7f3c", "agentName": "Explore"}
    trace = _read(
        _user("u1", None, "x"),
        _user("s1", None, "explore the repo", **side),
        _assistant("s2", "s1", **side),
        _assistant("a1", "u1"),
    )
    assert len(trace.loops) == 2
    labels = sorted(loop.label or "" for loop in trace.loops)
    assert labels[1] == "subagent Explore"


def test_a_response_without_usage_is_estimated():
    trace = _read(_user("u1", None, "x"), _assistant("a1", "u1", usage=None))
    assert trace.calls[0].usage is None and trace.calls[0].tokens_estimated


def test_malformed_records_are_reported_with_their_line_and_the_rest_is_read():
    trace = _read(
        _user("u1", None, "x"),
        b'{"uuid": "u2", "parentUuid": "u1", "sessionId"',
        {"uuid": "z", "type": "user", "message": {"role": "user", "parts": []}},
        {**_assistant("a0", "u1"), "message": {"role": "model", "content": "not parts"}},
        ["a", "list"],
        _assistant("a1", "u1"),
    )
    assert [e.line for e in trace.line_errors] == [2, 3, 4, 5]
    assert "whose message has no parts" in trace.line_errors[2].message
    assert len(trace.calls) == 1


def test_a_file_of_other_records_is_refused():
    with pytest.raises(InputRejected):
        analyze_bytes(
            orjson.dumps({"uuid": "x", "type": "assistant", "message": {"parts": []}}) + b"\n",
            format_name="qwen-code",
        )


def test_session_report_matches_golden():
    """Four calls: a folder listing, two parallel calls (a failed read, a cancelled
    shell command), the answer, then a compression and one more turn. Figures checked by
    hand: input 2000 + (2100-1800) + (2300-2000) + 420 = 3020, output (30+12) + 50 + 25 +
    5 = 122, cache read 1800 + 2000 = 3800."""
    trace = analyze_bytes(golden_input("qwen-code/session.jsonl"), filename="session.jsonl")
    report = build_report(trace)
    totals = report["totals"]
    assert (totals["calls"], totals["input_tokens"], totals["output_tokens"]) == (4, 3020, 122)
    assert totals["cache_read_tokens"] == 3800
    assert [r["is_error"] for r in report["tool_runs"]] == [False, True, False]
    assert_golden("qwen-code/session.report.json", report)
