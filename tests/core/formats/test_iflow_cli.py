"""iFlow CLI sessions (`iflow-cli`): corpus facts, golden report, odd input.

Facts from ../shared/agents SOURCES.md section 21 and counts.json, re-read by hand: 9
assistant lines with 9 ids form 4 runs (4 calls), 6 distinct tool_use ids, 6 results. The
golden input `session.jsonl` is a small hand-written file following the real file's shape
(per-line `response-<ms>` ids, each line repeating the previous tool_use, zero usage, every
assistant line's parentUuid on the first prompt).
"""

from __future__ import annotations

import orjson
import pytest

from tests.conftest import AGENTS, CORPUS
from tests.golden import assert_golden, golden_input
from traces.core.analysis.ingest import analyze_bytes
from traces.core.outputs.report import build_report

NAME = "agentsview_session-5de701fc-7454-4858-a249-95cac4fd3b51.jsonl"


@pytest.mark.corpus
def test_the_corpus_session_is_iflow_and_each_run_of_assistant_lines_is_one_call():
    path = AGENTS / "iflow_cli" / NAME
    if not path.is_file():
        pytest.skip("the iFlow corpus file is absent")
    trace = analyze_bytes(path.read_bytes(), filename=NAME)
    assert trace.format == "iflow-cli"
    assert [c.line for c in trace.calls] == [2, 9, 13, 16]
    assert [len(c.tool_call_ids) for c in trace.calls] == [3, 2, 1, 0]
    assert all(c.tokens_estimated and c.usage is None for c in trace.calls)
    # each request carries the whole conversation so far (no false rewind to the prompt)
    assert [c.message_count for c in trace.calls] == [1, 3, 5, 7]
    assert all(c.extends_previous for c in trace.calls[1:])
    assert [r.result_call for r in trace.tool_runs] == [2, 2, 2, 3, 3, 4]
    assert trace.calls[0].extra["agent_session"]["project"] == "C:\\exp\\docker-image-retagger"


@pytest.mark.corpus
def test_claude_code_corpus_files_stay_claude_code():
    folder = CORPUS / "claude_code_jsonl"
    files = sorted(folder.glob("*.jsonl")) if folder.is_dir() else []
    if not files:
        pytest.skip("the Claude Code corpus is absent")
    for path in files:
        assert analyze_bytes(path.read_bytes(), filename=path.name).format == "claude-code"


def test_golden_session():
    trace = analyze_bytes(golden_input("iflow-cli/session.jsonl"), filename="session.jsonl")
    assert_golden("iflow-cli/session.report.json", build_report(trace))
    first, second = trace.calls
    assert first.tool_call_ids == ("call_aaa", "call_bbb")  # 3 lines, repeats dropped
    assert second.tool_call_ids == ()  # line 7 repeats call_bbb, already answered
    assert first.extra["agent_session"] == {
        "agent": "iFlow CLI",
        "session_id": "session-0a1b2c3d-0000-4000-8000-000000000001",
        "project": "C:\\work\\demo",
    }
    assert [(r.id, r.status, r.is_error) for r in trace.tool_runs] == [
        ("call_aaa", "paired", False),
        ("call_bbb", "paired", True),
    ]


def test_a_claude_code_line_with_an_anthropic_id_is_not_iflow():
    line = {
        "uuid": "u",
        "parentUuid": None,
        "sessionId": "8f0c6a2e-1111-2222-3333-444455556666",
        "type": "assistant",
        "timestamp": "2025-06-01T00:00:00Z",
        "version": "1.0.0",
        "message": {
            "id": "msg_01",
            "role": "assistant",
            "model": "claude-sonnet-4",
            "content": [{"type": "text", "text": "hi"}],
            "usage": {"input_tokens": 3, "output_tokens": 1},
        },
    }
    assert analyze_bytes(orjson.dumps(line), filename="s.jsonl").format == "claude-code"


def test_malformed_lines_are_reported_with_their_line_and_the_rest_read():
    lines = golden_input("iflow-cli/session.jsonl").splitlines()
    bad = [
        lines[0],
        lines[1][: len(lines[1]) // 2],  # cut off
        orjson.dumps(
            {
                "uuid": "x",
                "sessionId": "session-0a1b2c3d-0000-4000-8000-0000000000ff",
                "type": "assistant",
                "message": "not an object",
            }
        ),
        orjson.dumps(
            {
                "uuid": "y",
                "sessionId": "session-0a1b2c3d-0000-4000-8000-0000000000ff",
                "type": "assistant",
                "message": {"id": 5, "content": [3, {"type": 1}]},
            }
        ),
        orjson.dumps({"no": "type"}),
        *lines[2:],
    ]
    trace = analyze_bytes(b"\n".join(bad), filename="s.jsonl")
    assert trace.format == "iflow-cli"
    errors = {e.line: e.message for e in trace.line_errors}
    assert set(errors) == {2, 3, 5}
    assert "cut off" in errors[2] and "'message' object" in errors[3] and "type" in errors[5]
    session = [c for c in trace.calls if str(c.extra.get("session_id")).endswith("0001")]
    assert len(session) == 2  # the golden session is read whole; the odd-typed line leniently
