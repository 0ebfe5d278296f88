"""VS Code Copilot Chat sessions (`vscode-copilot-sessions`, chatSessions/<id>.json).

No real session file was shared. The golden input
`tests/golden/vscode-copilot-sessions/session.json` is hand-written following the source:
microsoft/vscode chatModel.ts `ISerializableChatData` (version 3, sessionId,
requesterUsername, requests[{requestId, message, response[], result, isCanceled,
timestamp, modelId}]) and microsoft/vscode-copilot-chat `IToolCallRound` in
`result.metadata.toolCallRounds`, with `toolCallResults` as a serialised
`LanguageModelToolResult` (a prompt-tsx tree and a plain text part).
"""

from __future__ import annotations

import orjson
import pytest

from tests.golden import assert_golden, golden_input
from traces.core.analysis.ingest import analyze_bytes
from traces.core.outputs.report import build_report
from traces.core.reading.formats.detect import detect
from traces.core.reading.limits import NotATrace

GOLDEN = "vscode-copilot-sessions/session.json"


def _golden() -> dict:
    return orjson.loads(golden_input(GOLDEN))


def _read(document: dict):
    return analyze_bytes(orjson.dumps(document), filename="s.json")


def test_golden_session():
    trace = analyze_bytes(golden_input(GOLDEN), filename="session.json")
    assert_golden("vscode-copilot-sessions/session.report.json", build_report(trace))
    assert trace.format == "vscode-copilot-sessions"
    # one call per tool-call round: two rounds in turn 1, one in turn 2
    assert [c.extra["round_id"] for c in trace.calls] == ["round-1", "round-2", "round-3"]
    assert {c.model for c in trace.calls} == {"claude-sonnet-4"}  # "copilot/" prefix dropped
    edit, search = trace.tool_runs
    assert (edit.id, edit.result_call) == ("toolu_vrtx_01A", 2)  # suffix removed, paired
    assert edit.result_text == "The following files were successfully edited:\n/w/index.ts"
    # the canceled turn's result is in the file though no later call carried it
    assert (search.status, search.result_text) == ("paired", "index.ts:1: console.log('Bonjour');")
    assert trace.calls[-1].extra["canceled"] is True
    assert trace.calls[0].extra["turn_usage"] == {"prompt_tokens": 18000, "output_tokens": 120}
    assert trace.calls[0].response is not None
    assert trace.calls[0].response.blocks[0].kind == "thinking"


def test_the_user_message_is_the_rendered_prompt_when_stored():
    trace = _read(_golden())
    first = trace.calls[0].appended[0]
    assert "<userRequest>" in first.blocks[0].text
    second_turn = trace.calls[2].appended[-1]
    assert second_turn.blocks[0].text == "Search for Bonjour"  # no renderedUserMessage


def test_a_turn_without_rounds_is_one_call_with_the_markdown_response():
    document = _golden()
    del document["requests"][1]["result"]["metadata"]["toolCallRounds"]
    call = _read(document).calls[-1]
    assert call.response is not None and call.response.blocks[0].text == "Searching. "
    assert call.duration_s == 4.0  # request timestamp + timings.totalElapsed


def test_error_details_make_the_last_round_a_failed_call():
    document = _golden()
    document["requests"][1]["result"]["errorDetails"] = {"message": "Sorry, rate limited."}
    call = _read(document).calls[-1]
    assert (call.status, call.error) == ("error", "Sorry, rate limited.")


def test_malformed_requests_are_reported_and_the_rest_is_read():
    document = _golden()
    document["requests"].insert(0, "not a request")
    document["requests"][2]["message"] = {"parts": []}  # request 3: no text
    document["requests"][1]["result"]["metadata"]["toolCallRounds"][1] = 7  # ignored round
    trace = _read(document)
    errors = {e.line: e.message for e in trace.line_errors}
    assert "request 1 is not an object" in errors[1]
    assert "request 3 has no message text" in errors[3]
    assert len(trace.calls) == 1


def test_a_session_without_requests_says_what_it_is():
    document = _golden()
    document["requests"] = []
    with pytest.raises(NotATrace, match="no answered request"):
        _read(document)


def test_detection():
    assert detect([_golden()]).adapter.name == "vscode-copilot-sessions"
