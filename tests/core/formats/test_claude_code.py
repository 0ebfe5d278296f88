"""Claude Code session transcripts (`claude-code`): corpus counts, quirks, golden reports.

Counts come from SOURCES.md section 1 (API calls = distinct `message.id` among assistant
lines; tool calls = tool_use blocks; `is_error` results) and were re-counted by hand with a
short script over each file (json.loads per line, Counter over `type`, distinct message ids,
tool_use / tool_result blocks). "Unsent" results were traced line by line: results that no
later request carried (the session ended right after, or a compaction came first); they are
paired from the log itself (status paired, no result_call), never dangling.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from tests.conftest import CORPUS, corpus_id
from tests.golden import assert_golden, golden_input
from traces.core.analysis.ingest import analyze_bytes, analyze_files
from traces.core.model import Trace
from traces.core.outputs.report import build_report
from traces.core.reading.formats.claude_code import ClaudeCodeAdapter
from traces.core.reading.formats.detect import detect

FOLDER = "claude_code_jsonl"
SPOTTER_SESSION = "spotter/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl"
SPOTTER_SUBAGENT = "spotter/8463c716-a2ea-4c14-9efa-87158ebd9f20/subagents/agent-a7be2f0.jsonl"
SPOTTER_COMPACTION = (
    "spotter/8463c716-a2ea-4c14-9efa-87158ebd9f20/subagents/agent-acompact-f46190.jsonl"
)
CODEMIE_SESSION = "codemie_incremental-subagents/turn-2.jsonl"
CODEMIE_SUBAGENT = "codemie_incremental-subagents/turn-2/subagents/agent-a485154.jsonl"

# file: (API calls, tool runs, is_error results, results no later request carried)
EXPECTED = {
    "codemie_tmp-private/4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl": (7, 6, 0, 0),
    "codemie_tmp-private/agent-36541525.jsonl": (1, 0, 0, 0),
    "codemie_tmp-private/agent-50243ee8.jsonl": (1, 0, 0, 0),
    CODEMIE_SESSION: (11, 14, 0, 0),
    CODEMIE_SUBAGENT: (6, 20, 1, 0),
    "codemie_incremental-simple/turn-2.jsonl": (6, 2, 0, 0),
    "codemie_session-9eda1058.jsonl": (5, 3, 1, 0),
    "codemie_session-196820da.jsonl": (47, 65, 2, 0),
    "codemie_session-3fe1b6bc.jsonl": (67, 76, 5, 0),
    # the Read result on line 157 was pending when the conversation was compacted
    "codemie_session-624a4a58.jsonl": (55, 48, 0, 1),
    # the Edit result on line 713 was pending when the conversation was compacted
    SPOTTER_SESSION: (143, 177, 13, 1),
    SPOTTER_SUBAGENT: (13, 19, 2, 0),
    SPOTTER_COMPACTION: (1, 0, 0, 0),
    # both tool uses rejected by the user, then the session ended
    "spotter/short.jsonl": (1, 2, 2, 2),
    # the last two results (lines 36, 38) were followed by an interruption and nothing else
    "spotter/tool_heavy.jsonl": (4, 6, 0, 2),
    "spotter/subagent.jsonl": (12, 16, 0, 0),
}


def _read(relative: str) -> bytes:
    return (CORPUS / FOLDER / relative).read_bytes()


def _analyze(*relatives: str) -> Trace:
    return analyze_files([(Path(r).name, _read(r)) for r in relatives])


def _lines(relative: str) -> list[dict]:
    return [json.loads(line) for line in _read(relative).splitlines() if line.strip()]


def _corpus_files() -> list[Path]:
    base = CORPUS / FOLDER
    return sorted(base.rglob("*.jsonl")) if base.is_dir() else []


# -- every corpus file -------------------------------------------------------------------
@pytest.mark.corpus
@pytest.mark.parametrize("path", _corpus_files(), ids=corpus_id)
def test_corpus_file_counts(path: Path, corpus) -> None:
    relative = str(path.relative_to(corpus / FOLDER))
    calls, runs, errors, unsent = EXPECTED[relative]
    trace = analyze_bytes(path.read_bytes(), filename=path.name)
    assert trace.format == "claude-code"
    assert len(trace.calls) == calls
    assert len(trace.tool_runs) == runs
    assert sum(run.is_error for run in trace.tool_runs) == errors
    assert all(run.status == "paired" for run in trace.tool_runs)
    assert sum(run.result_call is None for run in trace.tool_runs) == unsent
    assert all(run.started_at and run.ended_at for run in trace.tool_runs)
    assert trace.line_errors == ()  # progress, summary, snapshot, queue lines are not errors
    assert len(trace.loops) == 1
    assert trace.records_ingested == trace.lines_total
    assert not trace.id_collisions
    # one call per distinct message.id, each request a strict extension of the previous
    # (outside the compaction, where the history restarts)
    ids = {line["message"]["id"] for line in _lines(relative) if line.get("type") == "assistant"}
    assert {call.extra["message_id"] for call in trace.calls} == ids


@pytest.mark.corpus
def test_split_responses_take_the_largest_usage_snapshot_never_the_sum(corpus) -> None:
    """278 assistant lines make 143 calls; usage is per message.id, not per line."""
    lines = [line for line in _lines(SPOTTER_SESSION) if line.get("type") == "assistant"]
    assert len(lines) == 278
    best: dict[str, dict] = {}
    for line in lines:
        usage = line["message"]["usage"]
        previous = best.get(line["message"]["id"])
        if previous is None or usage["output_tokens"] >= previous["output_tokens"]:
            best[line["message"]["id"]] = usage
    trace = _analyze(SPOTTER_SESSION)
    for call in trace.calls:
        expected = best[call.extra["message_id"]]
        assert call.usage is not None
        assert call.usage.output_tokens == expected["output_tokens"]
        assert call.usage.cache_read_tokens == expected["cache_read_input_tokens"]
        assert call.usage.cache_write_tokens == expected["cache_creation_input_tokens"]
    per_line_sum = sum(
        u["input_tokens"] + u["cache_read_input_tokens"] + u["cache_creation_input_tokens"]
        for u in (line["message"]["usage"] for line in lines)
    )
    counted = sum(call.usage.total_input_tokens for call in trace.calls if call.usage)
    assert per_line_sum / counted > 1.5  # what summing the lines would have over-counted


@pytest.mark.corpus
def test_null_stop_reasons_are_inferred_and_marked(corpus) -> None:
    trace = _analyze(SPOTTER_SESSION)  # CC 2.1.39: stop_reason is null on every line
    assert all(call.extra.get("stop_reason_inferred") for call in trace.calls)
    for call in trace.calls:
        asks_tool = bool(call.tool_call_ids)
        assert call.stop_reason == ("tool_use" if asks_tool else "end_turn")
    assert sum(call.stop_reason == "tool_use" for call in trace.calls) == 141
    older = _analyze("codemie_session-196820da.jsonl")  # 2.0.76: set on the last line only
    assert sum(bool(call.extra.get("stop_reason_inferred")) for call in older.calls) == 19
    assert {c.stop_reason for c in older.calls if not c.extra.get("stop_reason_inferred")} == {
        "tool_use",
        "end_turn",
    }


@pytest.mark.corpus
def test_results_written_between_blocks_of_one_response_form_one_user_message(corpus) -> None:
    """Lines 59-69: three Read blocks of one message.id with each result written in between
    (streaming tool execution). The API saw one assistant turn, then one user turn."""
    trace = _analyze(SPOTTER_SESSION)
    index = next(i for i, c in enumerate(trace.calls) if c.extra["message_id"].endswith("XJHBkX"))
    call, following = trace.calls[index], trace.calls[index + 1]
    ids = (
        "toolu_01XNwwueA7zMRBX2kTFWy5HV",
        "toolu_01EaXG6Ejh3ZHazonqJs1DMo",
        "toolu_01QKgHsyMTCzfusHirKBAZNC",
    )
    assert call.tool_call_ids == ids
    assert call.line == 59
    assistant, user = following.appended
    assert [b.tool_id for b in assistant.tool_uses] == list(ids)
    assert user.role == "user"
    assert [b.tool_id for b in user.tool_results] == list(ids)
    assert following.extends_previous


@pytest.mark.corpus
def test_parallel_results_on_separate_lines_are_one_request_message(corpus) -> None:
    trace = _analyze(CODEMIE_SUBAGENT)
    # 4 tool_use lines (2-6) answered by 4 user lines (7-10): one user message of 4 results
    second = trace.calls[1]
    assert second.message_count == 3
    assert [m.role for m in second.appended] == ["assistant", "user"]
    assert len(second.appended[1].tool_results) == 4
    assert [len(c.tool_call_ids) for c in trace.calls] == [4, 5, 4, 4, 3, 0]
    assert [c.message_count for c in trace.calls] == [1, 3, 5, 7, 9, 11]


@pytest.mark.corpus
def test_call_times_come_from_line_timestamps(corpus) -> None:
    trace = _analyze(CODEMIE_SUBAGENT)
    first, second = trace.calls[0], trace.calls[1]
    assert first.started_at == pytest.approx(1768418413.501)  # line 1, the Task prompt
    assert first.ended_at == pytest.approx(1768418419.511)  # line 6, the response's last block
    assert second.started_at == pytest.approx(1768418420.304)  # line 10, the last result
    runs = {run.id: run for run in trace.tool_runs}
    glob = runs["toolu_bdrk_01UoWJ1KSnr6MDLpHjDT9bcG"]  # tool_use line 3, result line 9
    assert glob.started_at == pytest.approx(1768418417.535)
    assert glob.ended_at == pytest.approx(1768418420.303)


@pytest.mark.corpus
def test_compaction_restarts_the_history(corpus) -> None:
    trace = _analyze(SPOTTER_SESSION)
    after = [call for call in trace.calls if "compaction" in call.extra]
    assert len(after) == 1
    call = after[0]
    assert call.extra["compaction"]["trigger"] == "auto"
    assert call.extra["compaction"]["preTokens"] == 167731
    assert call.extra["compaction"]["logical_parent_uuid"].startswith("baf018bd")
    assert call.history_rewritten and call.prefix_len == 0 and call.message_count == 1
    assert call.appended[0].blocks[0].text.startswith("This session is being continued")
    assert trace.calls[call.index - 2].message_count > 100  # the call before held the history
    codemie = _analyze("codemie_session-624a4a58.jsonl")
    restarted = [c for c in codemie.calls if c.history_rewritten]
    assert len(restarted) == 1 and restarted[0].extra["compaction"]["preTokens"] == 155979


@pytest.mark.corpus
def test_summary_lines_are_kept_as_notes(corpus) -> None:
    for relative, expected in (
        ("codemie_incremental-simple/turn-2.jsonl", 15),
        ("codemie_session-9eda1058.jsonl", 16),
    ):
        trace = _analyze(relative)
        notes = [s for call in trace.calls for s in call.extra.get("summaries", [])]
        assert len(notes) == expected
        assert all(note["summary"] and note["leaf_uuid"] for note in notes)


@pytest.mark.corpus
def test_rejections_and_interruptions_are_marked_as_user_actions(corpus) -> None:
    short = _analyze("spotter/short.jsonl")
    (call,) = short.calls
    assert call.extra["rejected_tool_use_ids"] == [
        "toolu_0116Hyi5v8ut7Ffb7d8qV1Sc",
        "toolu_01FdQ8qTyVyZjE3Kw4dguQGx",
    ]
    assert call.extra["interrupted"] is True
    assert call.extra["interruption"] == "during_tool_use"
    assert all(run.is_error for run in short.tool_runs)

    rejected = _analyze("codemie_session-9eda1058.jsonl")
    marked = [c for c in rejected.calls if c.extra.get("rejected_tool_use_ids")]
    assert len(marked) == 1 and marked[0].extra["interruption"] == "during_tool_use"
    (run,) = [r for r in rejected.tool_runs if r.id in marked[0].extra["rejected_tool_use_ids"]]
    assert run.is_error and run.status == "paired"
    assert run.result_text.startswith("The user doesn't want to proceed with this tool use")

    codemie = _analyze("codemie_session-624a4a58.jsonl")
    kinds = [c.extra["interruption"] for c in codemie.calls if c.extra.get("interrupted")]
    # lines 67 and 111 follow a tool result; line 148 follows a response cut mid-thinking
    assert kinds == ["before_next_response", "before_next_response", "during_response"]
    for relative, count in (("spotter/tool_heavy.jsonl", 2), ("spotter/subagent.jsonl", 1)):
        trace = _analyze(relative)
        assert sum(bool(c.extra.get("interrupted")) for c in trace.calls) == count
    # "interruptions" inside tool output (a file that quotes the marker) are not user actions
    assert not any(c.extra.get("interrupted") for c in _analyze(SPOTTER_SESSION).calls)


@pytest.mark.corpus
def test_models_and_old_layout_sidechains(corpus) -> None:
    bedrock = _analyze("codemie_tmp-private/agent-50243ee8.jsonl")
    assert bedrock.calls[0].model == "converse/jp.anthropic.claude-haiku-4-5-20251001-v1:0"
    warmup = _analyze("codemie_tmp-private/agent-36541525.jsonl")
    (loop,) = warmup.loops
    assert loop.key == "4c2ddfdc-b619-4525-8d03-1950fb1b0257:agent-36541525"
    assert loop.label == "subagent 36541525"
    assert loop.parent_tool_id is None
    assert warmup.calls[0].stop_reason == "end_turn"
    assert warmup.calls[0].extra["agent_id"] == "36541525"


# -- session uploaded with its subagents ----------------------------------------------------
@pytest.mark.corpus
def test_subagent_file_is_attached_to_its_task_call(corpus) -> None:
    trace = _analyze(CODEMIE_SESSION, CODEMIE_SUBAGENT)
    main, subagent = trace.loops
    (task,) = [run for run in trace.tool_runs if run.name == "Task"]
    assert task.loop == main.index and task.status == "paired"
    assert subagent.parent_tool_id == task.id == "toolu_bdrk_019PUUtqzQg8U5ogfuyQ7yLV"
    assert subagent.key == "e9fb405b-169f-40eb-9396-7e75076f045d:agent-a485154"
    assert subagent.label == "subagent a485154 (solution-architect)"
    assert main.parent_tool_id is None and main.label == "session e9fb405b"
    assert len(main.calls) == 11 and len(subagent.calls) == 6
    assert len(trace.tool_runs) == 34 and all(r.status == "paired" for r in trace.tool_runs)
    # the subagent's first request is the Task prompt, word for word
    first = trace.calls[subagent.calls[0] - 1]
    task_call = trace.calls[task.call - 1]
    prompt = next(b.input["prompt"] for b in task_call.response.tool_uses if b.name == "Task")
    assert first.appended[0].blocks[0].text == prompt


@pytest.mark.corpus
def test_spotter_subagent_and_compaction_agent(corpus) -> None:
    trace = _analyze(SPOTTER_SESSION, SPOTTER_SUBAGENT, SPOTTER_COMPACTION)
    main, subagent, compaction = trace.loops
    (task,) = [run for run in trace.tool_runs if run.name == "Task"]
    assert subagent.parent_tool_id == task.id == "toolu_017SvvKc8KLbhGMG3tXkf21Z"
    assert subagent.model == "claude-haiku-4-5-20251001"
    assert compaction.label == "compaction agent acompact-f46190"
    assert compaction.parent_tool_id is None
    (summarise,) = [trace.calls[i - 1] for i in compaction.calls]
    # its parentUuids point into the main session: the request is that conversation
    # (up to the boundary) followed by the summary prompt
    main_first = trace.calls[main.calls[0] - 1]
    assert summarise.appended[0] == main_first.appended[0]
    assert summarise.message_count > 100
    last = summarise.appended[-1]
    assert last.role == "user"
    assert last.blocks[-1].text.startswith("Your task is to create a detailed summary")
    # the Edit result dropped by the compaction is carried by the compaction agent's request
    assert all(run.status == "paired" for run in trace.tool_runs)
    assert len(trace.calls) == 143 + 13 + 1


@pytest.mark.corpus
def test_subagent_alone_still_ingests_and_inherits_nothing(corpus) -> None:
    _analyze(CODEMIE_SESSION, CODEMIE_SUBAGENT)  # an earlier upload on the same thread
    alone = _analyze(CODEMIE_SUBAGENT)
    (loop,) = alone.loops
    assert loop.parent_tool_id is None
    assert loop.label == "subagent a485154"
    assert len(alone.calls) == 6
    compaction = _analyze(SPOTTER_COMPACTION)
    (call,) = compaction.calls
    assert call.message_count == 1  # its six user lines, merged
    assert len(call.appended[0].blocks) == 6


# -- hand-written cases -------------------------------------------------------------------
def test_golden_session() -> None:
    trace = analyze_bytes(golden_input("claude-code/session.jsonl"), filename="session.jsonl")
    assert_golden("claude-code/session.report.json", build_report(trace))
    calls = trace.calls
    assert [c.status for c in calls] == ["ok", "error", "ok", "ok", "ok", "error"]
    first = calls[0]
    assert first.usage is not None and first.usage.output_tokens == 42  # 5, 5, 42: not 52
    assert first.extra["stop_reason_inferred"] is True
    assert first.extra["summaries"] == [
        {"summary": "Fix the failing build", "leaf_uuid": "0000aaaa-leaf-outside-this-file"}
    ]
    assert first.started_at == pytest.approx(1767261601.0)  # the prompt's line
    assert first.ended_at == pytest.approx(1767261605.0)  # the response's last line
    retry = calls[1]
    assert retry.error == "HTTP 529 overloaded_error: Overloaded"
    assert retry.extra["retry"] == {"retryAttempt": 1, "maxRetries": 10, "retryInMs": 500}
    assert calls[2].started_at == pytest.approx(1767261606.0)  # after the failed try
    assert "stop_reason_inferred" not in calls[2].extra  # set on its last line
    edit = calls[3]
    assert edit.extra["rejected_tool_use_ids"] == ["toolu_E"]
    assert edit.extra["interruption"] == "during_tool_use"
    assert [m.role for m in calls[4].appended] == ["assistant", "user"]
    assert len(calls[4].appended[1].blocks) == 3  # rejection, interruption, new prompt
    failed = calls[5]
    assert failed.history_rewritten and failed.message_count == 1
    assert failed.extra["compaction"]["trigger"] == "manual"
    assert failed.http_status == 429 and failed.extra["synthetic_message"] is True
    (loop,) = trace.loops
    assert loop.key == "s-golden-0001" and loop.label == "session s-golden"
    timings = {run.id: (run.started_at, run.ended_at) for run in trace.tool_runs}
    assert timings["toolu_T"] == (pytest.approx(1767261610.0), pytest.approx(1767261620.0))


def test_golden_session_with_subagent() -> None:
    trace = analyze_files(
        [
            ("session.jsonl", golden_input("claude-code/session.jsonl")),
            ("agent-sub1.jsonl", golden_input("claude-code/agent-sub1.jsonl")),
        ]
    )
    assert_golden("claude-code/session-with-subagent.report.json", build_report(trace))
    main, subagent = trace.loops
    assert main.parent_tool_id is None and len(main.calls) == 6
    assert subagent.parent_tool_id == "toolu_T"
    assert subagent.key == "s-golden-0001:agent-sub1"
    assert subagent.label == "subagent sub1 (Explore)"
    assert [trace.calls[i - 1].line for i in subagent.calls] == [2, 4]
    assert trace.lines_total == 28


def _session(*lines: dict) -> bytes:
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


def _user(uuid: str, parent: str | None, content, ts: str, **fields) -> dict:
    return {
        "type": "user",
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": "s1",
        "isSidechain": False,
        "timestamp": f"2026-02-01T10:00:{ts}Z",
        "message": {"role": "user", "content": content},
        **fields,
    }


def _assistant(uuid: str, parent: str, message_id: str, block: dict, ts: str, **usage) -> dict:
    return {
        "type": "assistant",
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": "s1",
        "isSidechain": False,
        "timestamp": f"2026-02-01T10:00:{ts}Z",
        "message": {
            "id": message_id,
            "model": "claude-sonnet-4-5",
            "role": "assistant",
            "content": [block],
            "stop_reason": None,
            "usage": {"input_tokens": 1, "output_tokens": 1, **usage},
        },
    }


def _text(text: str) -> dict:
    return {"type": "text", "text": text}


def test_malformed_lines_become_line_errors_and_the_rest_ingests() -> None:
    good = _session(
        {"type": "file-history-snapshot", "messageId": "u1", "snapshot": {}},
        _user("u1", None, "hello", "01"),
        _assistant("a1", "u1", "m1", _text("hi"), "02"),
    )
    data = (
        good
        + b'{"type": "user", "uuid": "u2", "message": {"role": "us\n'  # line 4: cut off
        + b"[1, 2]\n"  # line 5: not an object
        + b'{"uuid": "x", "message": {}}\n'  # line 6: no type
        + b'{"type": "user", "uuid": "u3", "message": "text"}\n'  # line 7: message not an object
        + b'{"type": "assistant", "uuid": "a9", "message": {"id": "m9", "content": 7}}\n'
        + b'{"type": "queue-operation", "operation": "enqueue", "sessionId": "s1"}\n'
        + b'{"type": "some-future-line", "uuid": "f1", "parentUuid": "a1"}\n'
        + _session(
            _user("u4", "f1", "again", "10"),
            _assistant("a4", "u4", "m4", _text("sure"), "11"),
        )
    )
    trace = analyze_bytes(data, filename="broken.jsonl")
    assert trace.format == "claude-code"
    assert [(e.line, e.message) for e in trace.line_errors] == [
        (4, "cut off mid-record (the JSON ends before it is complete)"),
        (5, "expected a JSON object (one Claude Code session line)"),
        (6, "no 'type' field: not a Claude Code session line"),
        (7, "a 'user' line without a 'message' object"),
        (8, "message.content is neither text nor a list of blocks"),
    ]
    assert [call.line for call in trace.calls] == [3, 12]
    assert trace.calls[1].message_count == 3  # hello, hi, again
    assert trace.calls[1].extends_previous


def test_a_rewind_cuts_the_history_back_to_the_parent() -> None:
    data = _session(
        _user("u1", None, "first", "01"),
        _assistant("a1", "u1", "m1", _text("one"), "02"),
        _user("u2", "a1", "second", "03"),
        _assistant("a2", "u2", "m2", _text("two"), "04"),
        _user("u3", "a1", "second, said differently", "05"),  # continues a1, not a2
        _assistant("a3", "u3", "m3", _text("two, again"), "06"),
    )
    trace = analyze_bytes(data)
    third = trace.calls[2]
    assert third.message_count == 3  # first, one, second said differently
    assert third.prefix_len == 2 and third.history_rewritten
    assert third.extra["rewound_to"] == "a1"
    assert third.appended[0].blocks[0].text == "second, said differently"


def test_repeated_lines_and_cumulative_lines_do_not_duplicate_blocks() -> None:
    repeated = _assistant("a1", "u1", "m1", _text("one"), "02")
    cumulative = _assistant("a2", "a1", "m1", _text("one"), "03", output_tokens=9)
    cumulative["message"]["content"].append(
        {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}
    )
    data = _session(_user("u1", None, "go", "01"), repeated, repeated, cumulative)
    (call,) = analyze_bytes(data).calls
    assert [b.kind for b in call.response.blocks] == ["text", "tool_use"]
    assert call.usage is not None and call.usage.output_tokens == 9
    assert call.stop_reason == "tool_use"


def test_tool_ids_are_kept_exactly_as_written() -> None:
    data = _session(
        _user("u1", None, "go", "01"),
        _assistant("a1", "u1", "m1", {"type": "tool_use", "id": "toolu_1", "name": "Bash"}, "02"),
        _user(
            "r1", "a1", [{"type": "tool_result", "tool_use_id": "toolu_1 ", "content": "x"}], "03"
        ),
        _assistant("a2", "r1", "m2", _text("done"), "04"),
    )
    trace = analyze_bytes(data)
    statuses = {(run.id, run.status) for run in trace.tool_runs}
    assert statuses == {("toolu_1", "dangling"), ("toolu_1 ", "orphan")}


def test_sniffing_claims_session_lines_and_leaves_api_pairs_alone() -> None:
    values = [json.loads(line) for line in golden_input("claude-code/session.jsonl").splitlines()]
    assert detect(values).adapter is ClaudeCodeAdapter
    assert detect(values[3:]).adapter is ClaudeCodeAdapter
    pair = {"request": {"messages": []}, "response": {"type": "message", "content": []}}
    assert ClaudeCodeAdapter.sniff([pair]) is None
    assert ClaudeCodeAdapter.sniff([{"role": "user", "content": "hi"}]) is None


def test_an_api_error_before_any_response_is_a_failed_call() -> None:
    error = {
        "type": "system",
        "subtype": "api_error",
        "uuid": "e1",
        "parentUuid": "u1",
        "sessionId": "s1",
        "timestamp": "2026-02-01T10:00:05Z",
        "error": {"status": 500, "message": "Internal server error"},
        "retryAttempt": 3,
    }
    data = _session(_user("u1", None, "go", "01"), error)
    (call,) = analyze_bytes(data).calls
    assert call.status == "error" and call.http_status == 500
    assert call.error == "HTTP 500 Internal server error"
    assert call.message_count == 1 and call.response is None
    assert call.duration_s == pytest.approx(4.0)


def test_old_sidechains_inside_the_session_file_are_their_own_loops() -> None:
    """Old Claude Code wrote sidechains into the session file: they are separate loops."""
    sidechain = {"isSidechain": True}
    lines = [
        _user("u1", None, "main prompt", "01"),
        {**_user("s1", None, "Warmup", "02"), **sidechain},
        {**_assistant("s2", "s1", "ms", _text("ready"), "03"), **sidechain},
        _assistant("a1", "u1", "m1", _text("main answer"), "04"),
    ]
    trace = analyze_bytes(_session(*lines))
    by_key = defaultdict(list)
    for loop in trace.loops:
        by_key[loop.key].extend(loop.calls)
    assert set(by_key) == {"s1", "s1:sidechain-s1"}
    assert [trace.calls[i - 1].message_count for i in by_key["s1"]] == [1]
