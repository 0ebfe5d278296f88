"""Cline SDK / CLI v2 sessions (cline-sdk).

The golden input (tests/golden/cline-sdk/) is hand-written after the shape of the real
session in ../shared/agents/cline_sdk_sessions (SOURCES.md section 23), which the corpus
tests read in place.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.golden import assert_golden, golden_input
from traces.core.analysis.ingest import analyze_files
from traces.core.outputs.report import build_report
from traces.core.reading.formats.cline_sdk import usage_from
from traces.core.reading.formats.detect import detect
from traces.core.reading.limits import InputRejected, NotATrace

FOLDER = "cline_sdk_sessions/1784094124598_rruoq"

# session.json lives here, not in tests/golden (every golden input must hold calls).
SESSION_JSON = orjson.dumps(
    {
        "version": 1,
        "session_id": "s1",
        "status": "completed",
        "provider": "cline",
        "model": "anthropic/claude-opus",
        "cwd": "/home/dev/app",
        "metadata": {"fork": {"forkedFromSessionId": "s0"}},
        "messages_path": "/home/dev/.cline/data/sessions/s1/s1.messages.json",
    }
)


def _messages() -> bytes:
    return golden_input("cline-sdk/s1.messages.json")


def test_golden_report() -> None:
    trace = analyze_files([("s1.messages.json", _messages())])
    assert_golden("cline-sdk/s1.report.json", build_report(trace))


def test_each_assistant_message_is_a_call_with_the_system_prompt_and_its_own_model() -> None:
    trace = analyze_files([("s1.messages.json", _messages())])
    assert len(trace.calls) == 3
    first, second, third = trace.calls
    assert first.system == "You are Cline, a coding agent."
    assert [b.kind for b in first.appended[0].blocks] == ["text", "text"]
    assert first.appended[0].blocks[1].text.startswith("[file /home/dev/app/icon.tsx]")
    assert second.appended[-1].blocks[0].text == (
        "edit:/home/dev/app/icon.tsx\nEdited /home/dev/app/icon.tsx"
    )
    assert third.model == "mistralai/voxtral"
    assert first.extra["cost_usd"] == 0.02
    assert first.started_at == 1783376868.0 and first.ended_at == 1783376870.0
    assert third.tokens_estimated and not first.tokens_estimated
    assert first.extra["agent_session"] == {"agent": "Cline", "session_id": "s1"}
    assert "agent_session" not in second.extra


def test_input_tokens_include_cache_reads() -> None:
    usage = usage_from({"inputTokens": 35912, "outputTokens": 164, "cacheReadTokens": 34332})
    assert usage is not None
    assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens) == (1580, 34332, 164)
    odd = usage_from({"inputTokens": 10, "cacheReadTokens": 50, "cacheWriteTokens": 5})
    assert odd is not None and odd.input_tokens == 0 and odd.cache_read_tokens == 10


def test_session_json_alone_is_recognised_and_says_what_to_upload() -> None:
    with pytest.raises(NotATrace, match=r"s1\.messages\.json"):
        analyze_files([("session.json", SESSION_JSON)])


@pytest.mark.parametrize("metadata_first", [True, False])
def test_session_json_with_the_messages_supplies_the_project_in_either_order(
    metadata_first: bool,
) -> None:
    files = [
        ("s1/session.json", SESSION_JSON),
        ("s1/s1.messages.json", _messages()),
    ]
    trace = analyze_files(files if metadata_first else files[::-1])
    assert len(trace.calls) == 3
    first = trace.calls[0]
    assert first.extra["agent_session"]["project"] == "/home/dev/app"
    assert first.extra["forked_from_session"] == "s0"
    assert len(trace.tool_runs) == 1 and trace.tool_runs[0].status == "paired"


def test_malformed_messages_are_reported_and_the_rest_read() -> None:
    document = orjson.loads(_messages())
    document["messages"].insert(1, "not a message")
    document["messages"].insert(2, {"id": "x", "role": "robot", "content": []})
    document["messages"].insert(3, {"id": "y", "role": "user", "content": 7})
    document["messages"][5]["content"].append({"type": "tool_result", "content": "?"})
    trace = analyze_files([("s1.messages.json", orjson.dumps(document))])
    assert len(trace.calls) == 3
    reasons = [e.message for e in trace.line_errors]
    assert any("message #2 is not an object" in r for r in reasons)
    assert any("role 'robot'" in r for r in reasons)
    assert any("content is neither text nor a list" in r for r in reasons)
    assert any("tool_result without a tool_use_id" in r for r in reasons)
    assert all(e.line == 1 for e in trace.line_errors)


def test_truncated_document_is_refused_with_a_reason() -> None:
    with pytest.raises(InputRejected):
        analyze_files([("s1.messages.json", _messages()[:200])])


def test_corpus_files_are_detected_as_cline_sdk(agents: Path) -> None:
    for path in sorted((agents / FOLDER).iterdir()):
        assert detect([orjson.loads(path.read_bytes())]).adapter.name == "cline-sdk", path.name


def test_real_session_keeps_cost_and_switches_model(agents: Path) -> None:
    path = agents / FOLDER / "session.messages.json"
    trace = analyze_files([(path.name, path.read_bytes())])
    assert trace.calls[0].model == "anthropic/claude-opus-4.8-fast"
    assert trace.calls[-1].model == "mistralai/voxtral-small-24b-2507"
    assert trace.calls[0].extra["cost_usd"] == pytest.approx(0.489531)
    assert trace.calls[1].usage is not None and trace.calls[1].usage.input_tokens == 35912 - 34332
