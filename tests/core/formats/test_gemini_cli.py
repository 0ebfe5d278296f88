"""Gemini CLI chat recordings (`gemini-cli`): corpus files, the record quirks, golden report.

The corpus files (../shared/agents/gemini_cli_chats, SOURCES.md section 28) are counted in
counts.json and checked by tests/core/test_corpus_counts.py; here they are detected, and
their quirks (each tool-using message written twice, a model switch, the one MCP error,
the cancelled prompt at the end) are asserted. The golden inputs in
tests/golden/gemini-cli/ are hand-written following the real files' shape (header line,
messages, `$set` lines, a gemini message written again with its toolCalls; the old
one-object layout for old-session.json); the small cases below are written the same way.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.golden import assert_golden, golden_input
from traces.core.analysis.ingest import TraceSession, analyze_bytes, analyze_files, choose_format
from traces.core.model import Trace
from traces.core.outputs.report import build_report
from traces.core.reading.formats.gemini_cli import GeminiCliAdapter
from traces.core.reading.limits import NotATrace
from traces.core.reading.records import Record
from traces.core.reading.sources import read_source

FOLDER = "gemini_cli_chats/ticketing-vc"
SMALL = "chats/session-2026-04-25T08-41-3494a697.jsonl"
LARGE = "chats/session-2026-04-25T08-46-c737eb36.jsonl"

HEADER = {"sessionId": "s-1", "projectHash": "abc", "startTime": "2026-01-01T00:00:00Z"}


def _user(identifier: str, text: str, at: str = "2026-01-01T00:00:01Z") -> dict:
    return {"id": identifier, "timestamp": at, "type": "user", "content": [{"text": text}]}


def _gemini(identifier: str, text: str, calls: list | None = None, **more) -> dict:
    record = {
        "id": identifier,
        "timestamp": more.pop("at", "2026-01-01T00:00:02Z"),
        "type": "gemini",
        "content": text,
        "thoughts": [],
        "tokens": {"input": 100, "output": 10, "cached": 0, "thoughts": 0, "tool": 0},
        "model": more.pop("model", "gemini-3-flash-preview"),
        **more,
    }
    if calls is not None:
        record["toolCalls"] = calls
    return record


def _call(identifier: str, status: str = "success", output: str = "ok") -> dict:
    response = {"error": output} if status != "success" else {"output": output}
    return {
        "id": identifier,
        "name": "run_shell_command",
        "args": {"command": "ls"},
        "result": [
            {
                "functionResponse": {
                    "id": identifier,
                    "name": "run_shell_command",
                    "response": response,
                }
            }
        ],
        "status": status,
        "timestamp": "2026-01-01T00:00:03Z",
    }


def _jsonl(*records) -> bytes:
    return b"".join((r if isinstance(r, bytes) else orjson.dumps(r)) + b"\n" for r in records)


def _read(*records) -> Trace:
    return analyze_bytes(_jsonl(*records), filename="session.jsonl")


# -- corpus -----------------------------------------------------------------------------
@pytest.mark.corpus
@pytest.mark.parametrize("relative", [SMALL, LARGE, "logs.json"])
def test_every_corpus_file_is_detected_as_gemini_cli(relative: str, agents: Path):
    path = agents / FOLDER / relative
    data = path.read_bytes()
    values = [i.value for i in read_source(data, path.name).items if isinstance(i, Record)]
    assert choose_format(values).name == "gemini-cli"


@pytest.mark.corpus
def test_the_large_session_keeps_its_model_switches_and_the_mcp_error(agents: Path):
    trace = analyze_files([(LARGE, (agents / FOLDER / LARGE).read_bytes())])
    assert trace.format == "gemini-cli" and not trace.line_errors
    models = {c.model for c in trace.calls}
    assert models == {"gemini-3-flash-preview", "gemini-3.1-pro-preview"}
    switches = [
        c.extra["model_switched_from"] for c in trace.calls if "model_switched_from" in c.extra
    ]
    assert len(switches) == 7  # counted by hand: model changes between distinct messages
    errors = [r for r in trace.tool_runs if r.is_error]
    assert [r.name for r in errors] == ["mcp_postgresql_execute_sql"]
    assert "reported tool error" in errors[0].result_text
    first = trace.calls[0].extra
    assert first["agent_session"] == {
        "agent": "Gemini CLI",
        "session_id": "c737eb36-0f7f-466b-8044-9cb1f572378f",
    }
    assert first["notices_before"][0]["text"].startswith("Current workspace directories:")


@pytest.mark.corpus
def test_the_small_session_ends_with_its_cancelled_prompt_on_the_last_call(agents: Path):
    trace = analyze_files([(SMALL, (agents / FOLDER / SMALL).read_bytes())])
    last = trace.calls[-1]
    assert last.extra["unanswered_prompts"] == ["asd"]
    assert [n["text"] for n in last.extra["notices_after"]] == ["Request cancelled."]
    # usage: input 18004, output 65 + 229 thoughts, nothing cached
    first = trace.calls[0].usage
    assert first is not None
    assert (first.input_tokens, first.output_tokens, first.cache_read_tokens) == (18004, 294, 0)
    assert trace.calls[1].usage is not None and trace.calls[1].usage.cache_read_tokens == 16207


@pytest.mark.corpus
def test_logs_json_with_its_sessions_adds_nothing(agents: Path):
    root = agents / FOLDER
    alone = analyze_files([(LARGE, (root / LARGE).read_bytes())])
    together = analyze_files(
        [("logs.json", (root / "logs.json").read_bytes()), (LARGE, (root / LARGE).read_bytes())]
    )
    assert len(together.calls) == len(alone.calls) == 68
    assert len(together.tool_runs) == len(alone.tool_runs)
    assert not together.line_errors


@pytest.mark.corpus
def test_logs_json_alone_says_it_is_a_prompt_index(agents: Path):
    with pytest.raises(NotATrace) as caught:
        analyze_files([("logs.json", (agents / FOLDER / "logs.json").read_bytes())])
    message = str(caught.value)
    assert "logs.json" in message and "41 prompt(s)" in message and "7 session(s)" in message
    assert "session-*.jsonl" in message


# -- the record quirks ------------------------------------------------------------------
def test_a_message_written_again_is_one_call_with_the_later_tool_calls():
    trace = _read(
        HEADER,
        _user("u1", "list"),
        _gemini("g1", "listing"),
        {"$set": {"lastUpdated": "2026-01-01T00:00:02Z"}},
        _gemini("g1", "listing", [_call("c1")]),
        _gemini("g2", "done", at="2026-01-01T00:00:05Z"),
    )
    assert len(trace.calls) == 2
    assert [b.tool_id for b in trace.calls[0].response.tool_uses] == ["c1"]
    assert trace.calls[0].line == 5  # the record kept is the later one
    (run,) = trace.tool_runs
    assert (run.status, run.result_text) == ("paired", "ok")
    assert run.result_call == trace.calls[1].index


def test_results_of_the_last_response_come_from_its_call_record():
    trace = _read(HEADER, _user("u1", "x"), _gemini("g1", "", [_call("c1")]))
    (run,) = trace.tool_runs
    assert run.status == "paired" and run.result_text == "ok" and run.result_call is None


def test_status_error_is_an_error_and_cancelled_is_not():
    trace = _read(
        HEADER,
        _user("u1", "x"),
        _gemini("g1", "", [_call("bad", "error", "boom"), _call("no", "cancelled", "declined")]),
        _gemini("g2", "ok", at="2026-01-01T00:00:09Z"),
    )
    runs = {r.id: r for r in trace.tool_runs}
    assert runs["bad"].is_error and not runs["no"].is_error
    assert trace.calls[0].extra["cancelled_tool_ids"] == ["no"]
    request = trace.calls[1].appended
    results = [b for m in request for b in m.blocks if b.kind == "tool_result"]
    assert [(b.tool_id, b.is_error) for b in results] == [("bad", True), ("no", False)]


def test_a_call_without_a_result_is_dangling():
    call = {"id": "c1", "name": "read_file", "args": {}, "status": "executing"}
    trace = _read(HEADER, _user("u1", "x"), _gemini("g1", "", [call]))
    assert [r.status for r in trace.tool_runs] == ["dangling"]


def test_usage_takes_cached_out_of_input_and_bills_thoughts_as_output():
    record = _gemini("g1", "hi")
    record["tokens"] = {"input": 500, "output": 7, "cached": 300, "thoughts": 20, "tool": 5}
    trace = _read(HEADER, _user("u1", "x"), record)
    usage = trace.calls[0].usage
    assert usage is not None
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens) == (205, 27, 300)
    assert not trace.calls[0].tokens_estimated


def test_a_message_without_tokens_is_estimated():
    record = _gemini("g1", "hi")
    del record["tokens"]
    trace = _read(HEADER, _user("u1", "x"), record)
    assert trace.calls[0].usage is None and trace.calls[0].tokens_estimated


def test_thoughts_are_thinking_blocks_of_the_response():
    record = _gemini("g1", "answer", thoughts=[{"subject": "Plan", "description": "Think."}])
    trace = _read(HEADER, _user("u1", "x"), record)
    kinds = [(b.kind, b.text) for b in trace.calls[0].response.blocks]
    assert kinds == [("thinking", "Plan\nThink."), ("text", "answer")]


def test_rewind_drops_the_target_and_later_messages_from_the_next_request():
    trace = _read(
        HEADER,
        _user("u1", "first"),
        _gemini("g1", "reply one"),
        _user("u2", "second"),
        {"$rewindTo": "u2"},
        _user("u3", "instead"),
        _gemini("g2", "reply two", at="2026-01-01T00:00:09Z"),
    )
    assert len(trace.calls) == 2
    second = trace.calls[1]
    texts = [b.text for m in second.appended for b in m.blocks]
    assert "second" not in texts and "instead" in texts
    assert second.extra["rewound"] == {"to": "u2", "messages_removed": 1}


def test_set_messages_replaces_the_list_without_repeating_calls():
    g1 = _gemini("g1", "reply one")
    trace = _read(
        HEADER,
        _user("u1", "first"),
        g1,
        {"$set": {"messages": [_user("u1", "first"), g1, _user("u2", "next")]}},
        _gemini("g2", "reply two", at="2026-01-01T00:00:09Z"),
    )
    assert [c.extra["message_id"] for c in trace.calls] == ["g1", "g2"]
    assert trace.calls[1].message_count == 3


def test_the_old_one_object_layout_is_read():
    trace = analyze_bytes(golden_input("gemini-cli/old-session.json"), filename="s.json")
    assert trace.format == "gemini-cli" and len(trace.calls) == 2
    assert [r.status for r in trace.tool_runs] == ["paired"]


def test_a_session_with_prompts_but_no_response_says_so():
    with pytest.raises(NotATrace) as caught:
        _read(
            HEADER,
            _user("u1", "hello"),
            {"id": "i1", "timestamp": "t", "type": "info", "content": "Request cancelled."},
        )
    assert "Read as a Gemini CLI session (s-1)" in str(caught.value)
    assert "1 prompt(s)" in str(caught.value)


def test_a_live_tail_holds_the_latest_response_until_it_is_written_again():
    session = TraceSession(choose_format([HEADER]), "session.jsonl")
    session.feed([Record(1, HEADER), Record(2, _user("u1", "x")), Record(3, _gemini("g1", "a"))])
    (preview,) = session.held()
    assert preview["text"] == "a" and preview["complete"] is False
    assert session.snapshot().calls == ()
    session.feed([Record(4, _gemini("g1", "a", [_call("c1")]))])
    (preview,) = session.held()
    assert preview["tool_uses"] == ["run_shell_command"]
    session.feed([Record(5, _user("u2", "more", at="2026-01-01T00:00:04Z"))])
    assert session.held()[0]["complete"] is True
    trace = session.finish()
    assert len(trace.calls) == 1 and [r.status for r in trace.tool_runs] == ["paired"]


# -- malformed input --------------------------------------------------------------------
def test_malformed_records_are_reported_with_their_line_and_the_rest_is_read():
    no_id_call = {"name": "read_file", "args": {}, "status": "success"}
    trace = _read(
        HEADER,
        b'{"id": "u1", "type": "user", "content": [{"text": "x"}',  # truncated line
        _user("u1", "x"),
        {"timestamp": "t", "type": "user", "content": "no id"},
        _gemini("g1", "a", [_call("c1"), no_id_call]),
        {**_gemini("g2", "b", at="2026-01-01T00:00:05Z"), "tokens": "lots", "toolCalls": 3},
        {"$set": "lastUpdated"},
        {"$rewindTo": 7},
        ["not", "an", "object"],
        {"hello": "world"},
        {**_gemini("g3", "c", at="2026-01-01T00:00:06Z"), "content": 42},
    )
    errors = {e.line: e.message for e in trace.line_errors}
    assert set(errors) == {2, 4, 5, 6, 7, 8, 9, 10, 11}
    assert "without an 'id'" in errors[4]
    assert "tool call without an 'id'" in errors[5]
    assert "tokens" in errors[6] or "toolCalls" in errors[6]
    assert "'$set' is not an object" in errors[7]
    assert "'$rewindTo' is not a message id" in errors[8]
    assert "content" in errors[11]
    assert len(trace.calls) == 3
    assert trace.calls[1].usage is None and trace.calls[1].tokens_estimated
    assert [r.id for r in trace.tool_runs] == ["c1"]


def test_a_message_rewritten_after_a_later_response_is_reported():
    trace = _read(
        HEADER,
        _user("u1", "x"),
        _gemini("g1", "a"),
        _gemini("g2", "b", at="2026-01-01T00:00:05Z"),
        _gemini("g1", "a", [_call("c1")]),
    )
    assert [e.line for e in trace.line_errors] == [5]
    assert len(trace.calls) == 2


def test_wrong_types_inside_the_old_layout_never_raise():
    document = {
        **HEADER,
        "messages": [
            1,
            {"id": "m1", "type": "user", "content": "x", "timestamp": "t"},
            _gemini("m2", "y"),
        ],
    }
    trace = analyze_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2), filename="s.json")
    assert len(trace.calls) == 1 and [e.line for e in trace.line_errors] == [1]
    bad = {**HEADER, "messages": "none"}
    with pytest.raises(NotATrace):
        analyze_bytes(orjson.dumps(bad, option=orjson.OPT_INDENT_2), filename="s.json")


def test_sniff_claims_headers_messages_and_log_entries_only():
    assert GeminiCliAdapter.sniff([HEADER]).score == 0.9
    assert GeminiCliAdapter.sniff([_gemini("g", "x")]).score == 0.85
    log = {"sessionId": "s", "messageId": 0, "type": "user", "message": "hi", "timestamp": "t"}
    assert GeminiCliAdapter.sniff([log]) is not None
    claude_line = {
        "type": "user",
        "uuid": "u",
        "sessionId": "s",
        "timestamp": "t",
        "message": {"role": "user", "content": "hi"},
    }
    assert GeminiCliAdapter.sniff([claude_line]) is None


# -- golden -----------------------------------------------------------------------------
def test_session_report_matches_golden():
    """Three calls: a tool-using message written twice (an MCP error and a folder
    listing), a model switch with a cancelled shell call, the final answer; then a
    cancelled prompt. Figures checked by hand: input 1200 + (1400-1000) + (1500-1200) =
    1900, output (40+60) + (30+10) + 20 = 160, cache read 2200."""
    trace = analyze_bytes(golden_input("gemini-cli/session.jsonl"), filename="session.jsonl")
    report = build_report(trace)
    assert report["totals"]["calls"] == 3
    assert (report["totals"]["input_tokens"], report["totals"]["output_tokens"]) == (1900, 160)
    assert report["totals"]["cache_read_tokens"] == 2200
    assert_golden("gemini-cli/session.report.json", report)
