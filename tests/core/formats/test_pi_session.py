"""pi coding agent sessions (`pi-session`): corpus facts, golden reports, odd input.

Facts from ../shared/agents SOURCES.md section 19 and counts.json, re-read by hand. The
golden inputs are small hand-written files: `session.jsonl` follows the shape of the real
(un-versioned) files; `v3_branch.jsonl` follows pi's session manager source
(badlogic/pi-mono packages/coding-agent/src/core/session-manager.ts: a `version` 3 header,
`id`/`parentId` entries, a `branch_summary` after going back with /tree), since no real v3
file is in the corpus.
"""

from __future__ import annotations

import orjson
import pytest

from tests.conftest import AGENTS
from tests.golden import assert_golden, golden_input
from traces.core.analysis.ingest import analyze_bytes
from traces.core.outputs.report import build_report
from traces.core.reading.formats.detect import detect
from traces.core.reading.limits import NotATrace

FOLDER = AGENTS / "pi_sessions"


def _corpus(name: str):
    path = FOLDER / name
    if not path.is_file():
        pytest.skip(f"agent corpus file {name} is absent")
    return analyze_bytes(path.read_bytes(), filename=name)


@pytest.mark.corpus
@pytest.mark.parametrize(
    "name",
    [
        "pi-mono_before-compaction.jsonl",
        "pi-mono_large-session.jsonl",
        "pi-mono_session-2025-12-17.jsonl",
    ],
)
def test_every_pi_corpus_file_is_detected_as_pi(name: str):
    trace = _corpus(name)
    assert trace.format == "pi-session"
    assert not trace.line_errors


@pytest.mark.corpus
def test_the_line_holding_two_records_gives_both_messages():
    trace = _corpus("pi-mono_session-2025-12-17.jsonl")
    assert len(trace.calls) == 220  # 219 would mean line 440's second record was lost
    assert [c.line for c in trace.calls].count(440) == 1


@pytest.mark.corpus
def test_compaction_restarts_the_request_from_the_summary_and_kept_messages():
    trace = _corpus("pi-mono_before-compaction.jsonl")
    compacted = [c for c in trace.calls if "compaction" in c.extra]
    assert [c.extra["compaction"]["line"] for c in compacted] == [360, 629]
    first = compacted[0]
    assert first.history_rewritten and not first.extends_previous
    assert first.extra["compaction"]["first_kept_found"] is True
    # the summary, then the 66 messages from record 293 (a user prompt) to the compaction
    assert first.extra["compaction"]["kept_messages"] == 66
    assert first.message_count == 68
    assert first.appended[0].blocks[0].text.startswith("The conversation history before")


@pytest.mark.corpus
def test_aborted_responses_are_failed_calls_and_their_tool_calls_dangle():
    trace = _corpus("pi-mono_large-session.jsonl")
    failed = [c for c in trace.calls if c.status == "error"]
    assert len(failed) == 22
    assert trace.calls[0].model == "gpt-5.1-codex" and trace.calls[0].status == "error"
    assert trace.calls[0].extra["api"] == "openai-responses"
    assert any(c.usage is None for c in failed)  # all-zero usage is unknown, not zero
    dangling = {r.call for r in trace.tool_runs if r.status == "dangling"}
    assert dangling <= {c.index for c in failed}


@pytest.mark.corpus
def test_first_call_names_the_agent_session_and_the_fork():
    trace = _corpus("pi-mono_before-compaction.jsonl")
    extra = trace.calls[0].extra
    assert extra["agent_session"] == {
        "agent": "pi",
        "session_id": "ffae836b-9420-4060-ac13-7745215f90ff",
        "project": "/Users/badlogic/workspaces/pi-mono",
    }
    assert extra["branched_from"].endswith("d97339c6-6c10-4827-846b-9ff1d9c3dc37.jsonl")


def test_golden_session():
    trace = analyze_bytes(golden_input("pi-session/session.jsonl"), filename="session.jsonl")
    assert_golden("pi-session/session.report.json", build_report(trace))
    first, second, aborted, last = trace.calls
    assert (first.usage.input_tokens, first.usage.output_tokens) == (1200, 80)
    assert first.stop_reason == "tool_use" and second.stop_reason == "end_turn"
    assert first.extra["cost_usd"] == 0.008
    assert aborted.status == "error" and aborted.error == "Request was aborted."
    assert aborted.usage is None  # pi writes zeros for an aborted request
    assert aborted.extra["thinking_level"] == "high"
    # the user's `!git status` is user text in the request, not a tool run
    bash = next(m for m in aborted.appended if m.role == "user")
    assert bash.blocks[0].text.startswith("Ran `git status`")
    assert {r.id: r.status for r in trace.tool_runs} == {
        "toolu_01": "paired",
        "toolu_02": "paired",
        "toolu_03": "dangling",
    }
    assert [r.is_error for r in trace.tool_runs[:2]] == [False, True]
    # after the compaction: summary, the kept prompt and aborted response, the new prompt
    assert last.message_count == 4 and last.model == "claude-sonnet-4-5"
    assert last.extra["model_changes"][0]["modelId"] == "claude-sonnet-4-5"
    assert last.extra["compaction"]["kept_messages"] == 2


def test_golden_v3_branch_cuts_the_request_back_to_the_branch_point():
    data = golden_input("pi-session/v3_branch.jsonl")
    trace = analyze_bytes(data, filename="v3_branch.jsonl")
    assert_golden("pi-session/v3_branch.report.json", build_report(trace))
    hi, bye, hello = trace.calls
    assert (hi.message_count, bye.message_count) == (1, 3)
    # e5 goes back to e2: the request is "say hi", "hi", the branch summary, the new prompt
    assert hello.message_count == 4 and hello.history_rewritten
    assert hello.extra["branched_from_entry"] == "e2"
    texts = [m.blocks[0].text for m in hello.appended]
    assert any(t.startswith("The following is a summary of a branch") for t in texts)
    assert "now say bye" not in texts
    assert hi.extra["pi_session_version"] == 3


def _line(record: dict) -> bytes:
    return orjson.dumps(record)


HEADER = {
    "type": "session",
    "id": "s1",
    "timestamp": "2025-12-08T10:00:00Z",
    "cwd": "/d",
    "provider": "anthropic",
    "modelId": "m",
    "thinkingLevel": "off",
}
ANSWER = {
    "type": "message",
    "timestamp": "2025-12-08T10:00:02Z",
    "message": {
        "role": "assistant",
        "content": [{"type": "text", "text": "ok"}],
        "api": "anthropic-messages",
        "model": "m",
        "usage": {"input": 1, "output": 1},
        "stopReason": "stop",
        "timestamp": 1,
    },
}


def test_malformed_records_are_reported_with_their_line_and_the_rest_read():
    lines = [
        _line(HEADER),
        b'{"type": "message", "timestamp": "2025-12-08T10:00:01Z", "message": {"role": "us',
        _line({"type": "message", "timestamp": "x", "message": "not an object"}),
        _line(
            {"type": "message", "timestamp": "x", "message": {"role": "toolResult", "content": []}}
        ),
        _line({"type": "message", "timestamp": "x", "message": {"role": "robot"}}),
        _line(
            {
                "type": "message",
                "timestamp": "x",
                "message": {"role": "assistant", "content": "text"},
            }
        ),
        _line({"type": "mystery"}),
        _line([1, 2]),
        _line(ANSWER),
    ]
    trace = analyze_bytes(b"\n".join(lines), filename="s.jsonl")
    assert trace.format == "pi-session"
    errors = {e.line: e.message for e in trace.line_errors}
    assert set(errors) == {2, 3, 4, 5, 6, 7, 8}
    assert "cut off" in errors[2]
    assert "without a 'message' object" in errors[3]
    assert "toolCallId" in errors[4]
    assert "unknown role" in errors[5]
    assert "content is not a list" in errors[6]
    assert "not a pi session record" in errors[7]
    assert "JSON object" in errors[8]
    assert [c.line for c in trace.calls] == [9]


def test_wrong_types_in_fields_do_not_raise():
    odd = {
        "type": "message",
        "timestamp": 5,
        "message": {
            "role": "assistant",
            "content": [
                {"type": "toolCall", "id": 7, "name": None},
                "loose text",
                {"type": "image"},
            ],
            "api": "anthropic-messages",
            "usage": "lots",
            "stopReason": 3,
            "timestamp": "later",
        },
    }
    trace = analyze_bytes(b"\n".join([_line(HEADER), _line(odd)]), filename="s.jsonl")
    (call,) = trace.calls
    assert call.usage is None and call.status == "ok"


def test_a_session_never_answered_says_what_it_is():
    prompt = {
        "type": "message",
        "timestamp": "2025-12-08T10:00:01Z",
        "message": {"role": "user", "content": "hello", "timestamp": 1},
    }
    with pytest.raises(NotATrace, match=r"pi session .* no model response"):
        analyze_bytes(b"\n".join([_line(HEADER), _line(prompt)]), filename="s.jsonl")


def test_pi_records_are_sniffed_from_the_header_or_a_message():
    assert detect([HEADER]).adapter.name == "pi-session"
    assert detect([ANSWER]).adapter.name == "pi-session"
