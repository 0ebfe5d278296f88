"""OpenCode's storage tree (`opencode`): a session's session, message and part files read
together into one trace, in the store's order whatever the order of the files.

No real tree could be shared (SOURCES.md); tests/core/formats/data/opencode_storage is a
small tree written by hand following OpenCode's `session/message-v2.ts` (the shapes of
Session, UserMessage, AssistantMessage and the text, reasoning, file, tool, step-start,
step-finish and patch parts). It is not under tests/golden, whose every input must be a
trace on its own (tests/core/test_stored_message.py); its report is
tests/golden/opencode/storage.report.json.
"""

from __future__ import annotations

import random
from pathlib import Path

import orjson
import pytest

from tests.golden import assert_golden
from traces.core.analysis.ingest import analyze_files
from traces.core.outputs.report import build_report
from traces.core.reading.limits import NotATrace

TREE = Path(__file__).resolve().parent / "data" / "opencode_storage"
SESSION = "ses_6a1f3c2e9ffeAb12Cd34Ef56Gh"


def _files(order: int | None = None) -> list[tuple[str, bytes]]:
    files = [(str(p.relative_to(TREE)), p.read_bytes()) for p in sorted(TREE.rglob("*.json"))]
    if order is not None:
        random.Random(order).shuffle(files)
    return files


def test_storage_tree_report_matches_golden():
    """Three steps of one assistant message (reasoning, two parallel tools of which one
    fails, an edit, a final answer), then an aborted message with a running tool."""
    trace = analyze_files(_files())
    assert trace.format == "opencode"
    assert [c.status for c in trace.calls] == ["ok", "ok", "ok", "error"]
    assert trace.calls[3].error == "MessageAbortedError: The operation was aborted."
    first = trace.calls[0]
    assert first.usage.output_tokens == 60 + 14  # reasoning is billed as output
    assert (first.usage.cache_read_tokens, first.usage.cache_write_tokens) == (3000, 1200)
    assert first.extra["cost_usd"] == 0.006534  # as OpenCode priced the step
    assert first.extra["agent_session"] == {
        "agent": "OpenCode",
        "session_id": SESSION,
        "project": "/home/dev/greeter",
    }
    assert [c.message_count for c in trace.calls] == [1, 3, 5, 7]
    runs = {run.id: run for run in trace.tool_runs}
    assert runs["toolu_01RunTests"].is_error
    assert runs["toolu_01RunTests"].result_text == "Error: pytest: command not found"
    assert runs["toolu_01RunAgain"].status == "dangling"
    assert runs["toolu_01ReadGreet"].started_at == 1764590402.2
    assert_golden("opencode/storage.report.json", build_report(trace))


@pytest.mark.parametrize("order", [1, 2, 3])
def test_file_order_does_not_change_the_trace(order: int):
    expected = build_report(analyze_files(_files()))
    actual = build_report(analyze_files(_files(order)))
    # detection names the kind of the first file read; everything else is the same
    assert actual.pop("detection").startswith("an OpenCode ")
    expected.pop("detection")
    assert actual == expected


def test_a_session_file_alone_says_what_to_upload():
    (session,) = [f for f in _files() if f[0].startswith("session/")]
    with pytest.raises(NotATrace) as notice:
        analyze_files([session])
    assert "Read as OpenCode storage" in str(notice.value)
    assert "part/<msg id>" in str(notice.value)


def test_unreadable_files_are_reported_and_the_rest_read():
    files = _files()
    files.insert(3, ("part/msg_x/prt_bad.json", b'{"id": "prt_bad", "sessionID": "s"'))
    files.insert(
        5,
        ("message/x/msg_bad.json", orjson.dumps({"id": "msg_bad", "role": "user", "sessionID": 7})),
    )
    files.insert(
        7,
        ("part/msg_y/prt_y.json", orjson.dumps({"id": "prt_y", "type": "text", "messageID": None})),
    )
    trace = analyze_files(files)
    messages = [e.message for e in trace.line_errors]
    # a file cut mid-record holds no readable record: analyze_files skips it (its own rule)
    assert messages == [
        "message/x/msg_bad.json: message has no 'sessionID' text",
        "part/msg_y/prt_y.json: part has no 'messageID' or 'type' text",
    ]
    assert len(trace.calls) == 4


def test_steps_without_step_parts_are_one_call_with_the_message_tokens():
    session = "ses_1"
    user = {"id": "msg_1", "sessionID": session, "role": "user", "time": {"created": 1000}}
    reply = {
        "id": "msg_2",
        "sessionID": session,
        "role": "assistant",
        "modelID": "gpt-5",
        "time": {"created": 2000, "completed": 3000},
        "tokens": {"input": 10, "output": 5, "reasoning": 0, "cache": {"read": 0, "write": 0}},
        "cost": 0.01,
    }
    parts = [
        {"id": "prt_1", "sessionID": session, "messageID": "msg_1", "type": "text", "text": "hi"},
        {"id": "prt_2", "sessionID": session, "messageID": "msg_2", "type": "text", "text": "yo"},
    ]
    files = [(f"{i}.json", orjson.dumps(v)) for i, v in enumerate([reply, *parts, user])]
    (call,) = analyze_files(files).calls
    assert (call.usage.input_tokens, call.usage.output_tokens) == (10, 5)
    assert call.message_count == 1 and call.response.blocks[0].text == "yo"
    assert (call.started_at, call.ended_at) == (2.0, 3.0)


def test_golden_tree_paths_are_relative():
    assert all(not Path(name).is_absolute() for name, _ in _files())
