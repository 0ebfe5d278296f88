"""GitHub Copilot CLI sessions (`copilot-cli`): corpus facts, golden report, odd input.

Facts from SOURCES.md section 27, re-read by hand in the two real sessions: calls are
distinct `assistant.message` messageIds; results are `tool.execution_complete` by
toolCallId; per message only `outputTokens` (their sum, 2,314, equals the shutdown total
of session b87feda8); the user's abort after a denied `bash` leaves one call dangling.
The golden input `tests/golden/copilot-cli/events.jsonl` is hand-written, following the
real files' event shapes (session.start, hooks, permissions, abort, shutdown).
"""

from __future__ import annotations

import orjson
import pytest

from tests.conftest import AGENTS
from tests.golden import assert_golden, golden_input
from traces.core.analysis.ingest import analyze_bytes, analyze_files
from traces.core.outputs.report import build_report
from traces.core.reading.formats.detect import detect
from traces.core.reading.limits import InputRejected, NotATrace

FOLDER = AGENTS / "copilot_cli_events"
SMALL = "9a493a94-a307-489e-8bc7-d16f4afcd992/events.jsonl"
LONG = "b87feda8-379e-4f8c-aa42-b4f7d12f253a/events.jsonl"


def _corpus(relative: str):
    path = FOLDER / relative
    if not path.is_file():
        pytest.skip(f"agent corpus file {relative} is absent")
    return analyze_files([(relative, path.read_bytes())])


def _golden_lines() -> list[dict]:
    return [orjson.loads(line) for line in golden_input("copilot-cli/events.jsonl").splitlines()]


def _jsonl(lines: list) -> bytes:
    return b"\n".join(line if isinstance(line, bytes) else orjson.dumps(line) for line in lines)


@pytest.mark.corpus
@pytest.mark.parametrize("relative", [SMALL, LONG])
def test_corpus_sessions_are_detected_as_copilot_cli(relative):
    assert _corpus(relative).format == "copilot-cli"


@pytest.mark.corpus
def test_long_session_output_tokens_add_up_to_the_shutdown_total():
    trace = _corpus(LONG)
    outputs = [call.extra["output_tokens"] for call in trace.calls]
    assert len(outputs) == 11 and sum(outputs) == 2314
    last = trace.calls[-1]
    totals = last.extra["session_totals"]["modelMetrics"]["claude-sonnet-4.6"]
    assert totals["requests"]["count"] == 11 and totals["usage"]["outputTokens"] == 2314
    assert all(call.usage is None for call in trace.calls)  # input tokens are estimates


@pytest.mark.corpus
def test_long_session_abort_after_denied_bash_leaves_it_dangling():
    trace = _corpus(LONG)
    last = trace.calls[-1]
    assert last.extra["aborted"] == "user_initiated"
    (denied,) = [p for p in last.extra["permissions"] if p.get("denied")]
    (dangling,) = [run for run in trace.tool_runs if run.status == "dangling"]
    assert dangling.id == denied["tool_id"] == "toolu_bdrk_01Qigeajy3efJKX4rTFT6Phz"
    assert dangling.name == "bash"
    first = trace.calls[0].extra["agent_session"]
    assert first == {
        "agent": "GitHub Copilot CLI",
        "session_id": "b87feda8-379e-4f8c-aa42-b4f7d12f253a",
        "project": "/Users/thatpong/.dotfiles/.copilot",
    }


@pytest.mark.corpus
def test_session_errors_are_notes_not_failed_calls():
    trace = _corpus(SMALL)
    (call,) = trace.calls
    assert call.status == "ok"
    assert [e["type"] for e in call.extra["session_errors"]] == ["mcp", "mcp", "model", "mcp"]
    assert call.extra["copilot_version"] == "1.0.59"


def test_golden_session():
    trace = analyze_bytes(golden_input("copilot-cli/events.jsonl"), filename="events.jsonl")
    assert_golden("copilot-cli/events.report.json", build_report(trace))
    view, git_status, git_init = trace.tool_runs
    assert (view.status, view.is_error, view.duration_s) == ("paired", False, 0.5)
    assert (git_status.status, git_status.is_error) == ("paired", True)  # success: false
    assert git_status.duration_s == 4.0  # 3 s of it waiting for the permission prompt
    assert git_init.status == "dangling"
    first, second = trace.calls
    assert first.duration_s == 3.0  # turn_start -> assistant.message
    assert first.response is not None and first.response.blocks[0].kind == "thinking"
    assert first.extra["user_typed"] == ["list the files"]
    assert second.extra["aborted"] == "user_initiated"
    assert second.extra["permissions"][0]["denied"] is True


def test_detection_does_not_need_session_start():
    lines = _golden_lines()[4:]
    assert detect(lines).adapter.name == "copilot-cli"


def test_malformed_events_are_reported_and_the_rest_is_read():
    lines: list = _golden_lines()
    lines[6] = b'{"type":"assistant.message","data":{"messageId":"m1"'  # truncated line 7
    lines[11]["data"].pop("toolCallId")  # line 12: a result without its id
    lines[14]["data"]["success"] = "no"  # line 15: wrong type
    lines[16] = {"type": "assistant.turn_start", "data": "oops", "id": "x", "parentId": None}
    lines[17]["data"]["toolRequests"] = "bash"  # line 18: toolRequests not a list
    trace = analyze_bytes(_jsonl(lines), filename="events.jsonl")
    errors = {e.line: e.message for e in trace.line_errors}
    assert set(errors) == {7, 12, 15, 17, 18}
    assert "toolCallId" in errors[12]
    assert "success" in errors[15]
    assert "not a Copilot CLI event" in errors[17]
    assert "toolRequests" in errors[18]
    (call,) = trace.calls  # m2 is still read
    assert call.extra["message_id"] == "m2"


def test_a_session_the_model_never_answered_says_what_it_is():
    lines = _golden_lines()[:5]
    with pytest.raises(NotATrace, match="never replied"):
        analyze_bytes(_jsonl(lines), filename="events.jsonl")


def test_garbage_is_rejected_not_crashed():
    with pytest.raises(InputRejected):
        analyze_bytes(b'{"type": 3, "data": []}\n', filename="events.jsonl")
