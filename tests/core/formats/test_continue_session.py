"""Continue sessions (continue).

tests/golden/continue/chat.json is hand-written after the real 2024 session in
../shared/agents/continue_sessions (SOURCES.md section 26); agent.json follows
continuedev/continue's core/index.d.ts (ChatHistoryItem, toolCallStates, role "tool"),
since no agent-mode session is shared.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.golden import assert_golden, golden_input
from traces.core.analysis.ingest import analyze_files
from traces.core.outputs.report import build_report
from traces.core.reading.formats.continue_session import parse_prompt
from traces.core.reading.formats.detect import detect
from traces.core.reading.limits import NotATrace

FOLDER = "continue_sessions/continue-debug"


def _read(name: str):
    return analyze_files([(name, golden_input(f"continue/{name}"))])


def test_chat_golden_report() -> None:
    assert_golden("continue/chat.report.json", build_report(_read("chat.json")))


def test_agent_golden_report() -> None:
    assert_golden("continue/agent.report.json", build_report(_read("agent.json")))


def test_the_prompt_log_is_the_request_and_shows_pruned_history() -> None:
    first, second = _read("chat.json").calls
    assert first.extra["request_from"] == "promptLogs"
    assert first.system == "Be brief."
    assert [m.role for m in first.appended] == ["system", "user"]
    # The second prompt dropped the earlier turns: the request says so.
    assert second.history_rewritten
    assert [m.role for m in second.appended] == ["user"]
    assert first.model == "gpt-4o" and first.extra["prompt_log"]["model_title"] == "GPT-4o"
    assert first.tokens_estimated and first.usage is None
    assert first.extra["agent_session"] == {
        "agent": "Continue",
        "session_id": "c2",
        "project": "/home/dev/kt",
    }


def test_parse_prompt_needs_role_sections() -> None:
    assert parse_prompt("<user>\nhi\n\n<assistant>\nyo\n\n") == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "yo"},
    ]
    assert parse_prompt("hello <user>\n") is None
    assert parse_prompt(None) is None


def test_agent_mode_tool_calls_pair_with_tool_messages_and_states() -> None:
    trace = _read("agent.json")
    first, second = trace.calls
    assert first.extra["request_from"] == "promptLogs"
    assert second.extra["request_from"] == "history"  # tool ids are lost in the rendering
    assert first.usage is not None and first.usage.input_tokens == 300
    assert first.usage.cache_read_tokens == 600 and not first.tokens_estimated
    assert second.tokens_estimated
    assert [b.kind for b in second.response.blocks] == ["thinking", "text", "tool_use"]
    runs = {run.id: run for run in trace.tool_runs}
    assert runs["call_1"].status == "paired" and not runs["call_1"].is_error
    assert runs["call_2"].status == "paired" and runs["call_2"].is_error


def test_sessions_index_is_recognised() -> None:
    index = orjson.dumps(
        [
            {"sessionId": "a", "title": "t", "dateCreated": "1", "workspaceDirectory": "/w"},
            {"sessionId": "b", "title": "u", "dateCreated": "2", "workspaceDirectory": "/w"},
        ]
    )
    with pytest.raises(NotATrace, match=r"index.*2 sessions.*a\.json, b\.json"):
        analyze_files([("sessions.json", index)])
    trace = analyze_files(
        [("sessions.json", index), ("chat.json", golden_input("continue/chat.json"))]
    )
    assert len(trace.calls) == 2 and not trace.line_errors


def test_malformed_items_are_reported_and_the_rest_read() -> None:
    document = orjson.loads(golden_input("continue/agent.json"))
    document["history"].insert(0, {"contextItems": []})
    document["history"].insert(1, {"message": {"role": "robot", "content": "x"}})
    document["history"].insert(2, {"message": {"role": "user", "content": 5}})
    document["history"].append({"message": {"role": "tool", "content": "lost"}})
    trace = analyze_files([("agent.json", orjson.dumps(document))])
    assert len(trace.calls) == 2
    reasons = [e.message for e in trace.line_errors]
    assert any("item #1 has no 'message'" in r for r in reasons)
    assert any("unknown role 'robot'" in r for r in reasons)
    assert any("neither text nor parts" in r for r in reasons)
    assert any("without a toolCallId" in r for r in reasons)


def test_corpus_files_are_detected_as_continue(agents: Path) -> None:
    for path in sorted((agents / FOLDER).iterdir()):
        value = orjson.loads(path.read_bytes())
        values = value if isinstance(value, list) else [value]
        assert detect(values).adapter.name == "continue", path.name


def test_real_session_requests_come_from_prompt_logs(agents: Path) -> None:
    path = agents / FOLDER / "89004c9d-6d6f-4786-83e0-a9f61c80bf44.json"
    trace = analyze_files([(path.name, path.read_bytes())])
    assert {c.extra["request_from"] for c in trace.calls} == {"promptLogs"}
    assert trace.calls[4].history_rewritten  # Continue pruned the two oldest messages
    assert trace.calls[0].extra["agent_session"]["project"].endswith("manual-testing-sandbox")
