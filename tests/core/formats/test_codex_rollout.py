"""The Codex rollout adapter on the two real rollouts, a hand-written session and bad input.

Corpus counts were checked without the adapter: a plain `json` script counted item and
event types per file, split the item stream into responses (a new response starts at
the first model-output item after a function_call_output, a user message or a
user_message event: 66 and 20 responses, 20 and 9 of them with more than one tool call),
and summed `last_token_usage` over the 66 token_count events of the first file (the sums
equal the final cumulative `total_token_usage`: 6,055,836 input, 4,929,536 cached,
9,118 output). Non-zero exit codes were found with grep on `exec_command_end` events and
on "Process exited with code" lines in outputs.
"""

from __future__ import annotations

from collections import Counter

import pytest

from tests.golden import assert_golden, golden_input
from traces.core.analysis.ingest import analyze_bytes
from traces.core.outputs.report import build_report
from traces.core.reading.transcript import TranscriptView

TUI = "codex_rollout_jsonl/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
DESKTOP = (
    "codex_rollout_jsonl/rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80.jsonl"
)


@pytest.fixture(scope="module")
def tui(corpus):
    return analyze_bytes((corpus / TUI).read_bytes(), filename=TUI)


@pytest.fixture(scope="module")
def desktop(corpus):
    return analyze_bytes((corpus / DESKTOP).read_bytes(), filename=DESKTOP)


def test_tui_rollout_rebuilds_one_call_per_response(tui):
    assert tui.format == "codex-rollout"
    assert not tui.line_errors
    assert len(tui.calls) == 66
    assert len(tui.loops) == 1
    assert tui.loops[0].key == "019e1625-789d-76c0-80ab-3724b5ddb799"
    assert {c.model for c in tui.calls} == {"gpt-5.5"}
    # Two turns, each ends with a plain answer; every other response asks for tools.
    assert Counter(c.stop_reason for c in tui.calls) == {"tool_use": 64, "end_turn": 2}
    # Every request extends the previous one: the same items, viewed as a prefix.
    assert all(c.extends_previous for c in tui.calls[1:])
    assert not any(c.history_rewritten for c in tui.calls)
    assert tui.calls[0].message_count == 3  # developer, AGENTS.md, "show tools"
    assert tui.calls[0].system.startswith("You are Codex")
    assert len(tui.batches) == 20


def test_tui_rollout_pairs_every_tool_call_by_call_id(tui):
    runs = tui.tool_runs
    assert Counter(run.name for run in runs) == {
        "write_stdin": 54,
        "exec_command": 43,
        "apply_patch": 3,
        "update_plan": 2,
    }
    assert {run.status for run in runs} == {"paired"}  # 0 dangling, 0 orphans
    assert not tui.id_collisions
    patch = next(run for run in runs if run.name == "apply_patch")
    assert isinstance(patch.input, str) and patch.input.startswith("*** Begin Patch")


def test_tui_rollout_web_searches_are_neither_tool_calls_nor_orphans(tui):
    searches = [c for c in tui.calls if c.extra.get("web_search_calls")]
    assert sum(c.extra["web_search_calls"] for c in searches) == 3
    blocks = [b for c in searches for b in c.response.blocks if b.kind == "other"]
    assert len(blocks) == 3 and all(b.text.startswith("web_search_call: ") for b in blocks)
    assert all("no call_id" in c.extra["web_search_note"] for c in searches)
    assert not any(run.id.startswith("ws_") for run in tui.tool_runs)


def test_tui_rollout_usage_subtracts_cached_input(tui):
    totals = build_report(tui)["totals"]
    assert totals["cache_read_tokens"] == 4_929_536
    assert totals["input_tokens"] == 6_055_836 - 4_929_536
    assert totals["output_tokens"] == 9_118
    first = tui.calls[0]
    assert (first.usage.input_tokens, first.usage.cache_read_tokens) == (18_703, 0)
    second = tui.calls[1]
    assert (second.usage.input_tokens, second.usage.cache_read_tokens) == (18_911 - 18_304, 18_304)
    assert second.extra["last_token_usage"]["reasoning_output_tokens"] == 0


def test_tui_rollout_exec_events_time_and_fail_tool_runs(tui):
    timed = [run for run in tui.tool_runs if run.duration_s is not None]
    assert len(timed) == 43  # one exec_command_end per exec_command
    assert {run.name for run in timed} == {"exec_command"}
    # `git status --short` ran 9.96 s (exec_command_end on line 60).
    git_status = next(run for run in timed if run.id == "call_jQYxA5wvjWJ4ZtptybmzrkNm")
    assert git_status.duration_s == pytest.approx(9.963642292, abs=1e-3)
    # 4 exec_command_end events with a non-zero exit code flag their commands; the 4
    # write_stdin outputs saying "Process exited with code 1|2" (the same commands,
    # polled) are inferred errors, not flagged ones.
    failed = Counter(run.name for run in tui.tool_runs if run.is_error)
    assert failed == {"exec_command": 4}
    inferred = [run for run in tui.tool_runs if run.error_inferred]
    assert Counter(run.name for run in inferred) == {"write_stdin": 4}
    assert {run.error_inferred for run in inferred} == {
        "exit code 1 in the output",
        "exit code 2 in the output",
    }
    assert next(r for r in tui.tool_runs if r.id == "call_wAmN401U7zKVZ9wF0d5rGwMP").is_error


def test_desktop_rollout_has_no_model_or_usage(desktop):
    assert desktop.format == "codex-rollout"
    assert not desktop.line_errors
    assert len(desktop.calls) == 20
    assert len(desktop.batches) == 9
    assert all(c.usage is None and c.tokens_estimated for c in desktop.calls)
    assert all(c.model is None for c in desktop.calls)
    report = build_report(desktop)
    assert report["calls"][0]["input_tokens"] is None  # unknown, not zero
    assert Counter(run.name for run in desktop.tool_runs) == {"exec_command": 35, "js": 3}
    assert {run.status for run in desktop.tool_runs} == {"paired"}
    # No exec_command_end events, so no flag: the one "Process exited with code 1" output
    # is an inferred error.
    assert not [run.id for run in desktop.tool_runs if run.is_error]
    assert [(run.id, run.error_inferred) for run in desktop.tool_runs if run.error_inferred] == [
        ("call_3f7AXDMZ9PHz7zedrTO4twut", "exit code 1 in the output")
    ]


def test_desktop_rollout_keeps_user_words_recorded_only_as_events(desktop):
    # The three user messages exist only as event_msg user_message lines.
    first = desktop.calls[0]
    assert first.message_count == 1
    assert first.appended[0].role == "user"
    assert "analyze trascript" in first.appended[0].blocks[0].text
    assert first.appended_raw[0]["recorded_as"] == "event_msg user_message"
    # The second turn's answer (line 32) is its own call, after the second user message.
    answer = next(c for c in desktop.calls if c.line == 32)
    assert answer.appended[-1].role == "user"
    assert answer.stop_reason == "end_turn"
    assert Counter(c.stop_reason for c in desktop.calls) == {"tool_use": 17, "end_turn": 3}


def test_hand_written_session_report_is_golden():
    trace = analyze_bytes(golden_input("codex-rollout/session.jsonl"), filename="session.jsonl")
    report = build_report(trace)
    assert_golden("codex-rollout/session.report.json", report)
    runs = {run.id: run for run in trace.tool_runs}
    # Malformed arguments are kept as the raw string; the call is still paired.
    assert runs["call_b"].input == '{"cmd": '
    assert runs["call_a"].is_error and runs["call_a"].duration_s == pytest.approx(2.5)
    assert runs["call_zz"].status == "orphan"  # an exec event for a call never made
    assert runs["call_d"].status == "dangling"
    assert trace.calls[3].status == "error" and trace.calls[3].usage is None
    compacted = trace.calls[4]
    assert compacted.history_rewritten
    assert compacted.extra["compaction"] == {"source": "Codex compacted line", "line": 27}
    assert [m.blocks[0].text for m in compacted.appended][-1].startswith("Summary:")
    assert compacted.usage is None and compacted.tokens_estimated


def _rollout(*lines: str) -> bytes:
    return ("\n".join(lines) + "\n").encode()


META = '{"timestamp":"2025-01-01T00:00:00Z","type":"session_meta","payload":{"id":"s1"}}'
CALL = (
    '{"timestamp":"2025-01-01T00:00:01Z","type":"response_item","payload":'
    '{"type":"function_call","name":"shell","arguments":"{}","call_id":"c1"}}'
)
OUTPUT = (
    '{"timestamp":"2025-01-01T00:00:02Z","type":"response_item","payload":'
    '{"type":"function_call_output","call_id":"c1","output":"ok"}}'
)
ANSWER = (
    '{"timestamp":"2025-01-01T00:00:03Z","type":"response_item","payload":'
    '{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}}'
)


def test_bad_lines_become_line_errors_and_the_rest_is_ingested():
    data = _rollout(
        META,
        CALL,
        '{"timestamp":"2025-01-01T00:00:01Z","type":"response_item","payload":{"type":"func',
        "[1, 2, 3]",
        '{"timestamp":"2025-01-01T00:00:01Z","type":"event_msg","payload":"token_count"}',
        '{"hello": "world"}',
        OUTPUT,
        ANSWER,
    )
    trace = analyze_bytes(data, filename="rollout.jsonl")
    assert trace.format == "codex-rollout"
    errors = {e.line: e.message for e in trace.line_errors}
    assert sorted(errors) == [3, 4, 5, 6]
    assert "cut off" in errors[3]
    assert "JSON object" in errors[4]
    assert "payload is not a JSON object" in errors[5]
    assert "not a Codex rollout line" in errors[6]
    assert len(trace.calls) == 2
    assert [run.status for run in trace.tool_runs] == ["paired"]


def test_token_count_without_info_and_unknown_records_are_ignored():
    data = _rollout(
        META,
        '{"timestamp":"2025-01-01T00:00:00Z","type":"event_msg","payload":{"type":"token_count","info":null}}',
        '{"timestamp":"2025-01-01T00:00:00Z","type":"future_kind","payload":{"x":1}}',
        CALL,
        OUTPUT,
        ANSWER,
    )
    trace = analyze_bytes(data)
    assert not trace.line_errors
    assert [c.usage for c in trace.calls] == [None, None]


def test_early_rollouts_without_the_payload_wrapper_are_read():
    data = _rollout(
        '{"id":"old-session","timestamp":"2025-04-01T10:00:00Z","instructions":null}',
        '{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}',
        '{"record_type":"state"}',
        '{"type":"function_call","name":"shell","arguments":"{\\"command\\":[\\"ls\\"]}","call_id":"call_1"}',
        '{"type":"function_call_output","call_id":"call_1","output":"{\\"output\\":\\"a\\\\n\\",\\"metadata\\":{\\"exit_code\\":2}}"}',
        '{"type":"message","role":"assistant","content":[{"type":"output_text","text":"listed"}]}',
    )
    trace = analyze_bytes(data)
    assert trace.format == "codex-rollout"
    assert len(trace.calls) == 2 and trace.loops[0].key == "old-session"
    assert trace.tool_runs[0].input == {"command": ["ls"]}
    # exit_code 2 in the output's metadata: an exit code, not a flag
    assert not trace.tool_runs[0].is_error
    assert trace.tool_runs[0].error_inferred == "exit code 2 in the output"


def test_transcript_prefix_behaves_like_a_fixed_list():
    items = ["a", "b", "c"]
    view = TranscriptView(items, 2)
    items.append("d")
    assert len(view) == 2 and list(view) == ["a", "b"]
    assert view[-1] == "b" and view[1:] == ["b"] and view[5:] == []
    with pytest.raises(IndexError):
        view[2]


def test_transcript_prefixes_of_one_list_know_their_shared_length():
    items = ["a", "b", "c"]
    shorter, longer = TranscriptView(items, 1), TranscriptView(items, 3)
    assert shorter.shared_prefix_length(longer) == longer.shared_prefix_length(shorter) == 1
    assert shorter.shared_prefix_length(TranscriptView(["a"], 1)) is None
    assert shorter.shared_prefix_length(["a"]) is None


def test_doubled_token_count_events_are_counted_once():
    # Codex writes each token_count event twice (the same cumulative totals): one
    # response, one usage, whatever the number of copies.
    def tokens(total: int, last: int) -> str:
        info = (
            f'{{"total_token_usage":{{"input_tokens":{total},"output_tokens":5}},'
            f'"last_token_usage":{{"input_tokens":{last},"cached_input_tokens":0,'
            f'"output_tokens":5}}}}'
        )
        line = (
            '{"timestamp":"2025-01-01T00:00:0%dZ","type":"event_msg",'
            '"payload":{"type":"token_count","info":%s}}'
        )
        return "\n".join(line % (second, info) for second in (3, 4))

    data = _rollout(
        '{"timestamp":"2025-01-01T00:00:00Z","type":"session_meta","payload":{"id":"s"}}',
        '{"timestamp":"2025-01-01T00:00:01Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"ls"}]}}',
        '{"timestamp":"2025-01-01T00:00:02Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{}","call_id":"c1"}}',
        tokens(100, 100),
        '{"timestamp":"2025-01-01T00:00:05Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"a"}}',
        '{"timestamp":"2025-01-01T00:00:06Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"a"}]}}',
        tokens(250, 150),
    )
    trace = analyze_bytes(data)
    assert [c.usage.input_tokens for c in trace.calls] == [100, 150]
    report = build_report(trace)
    assert report["totals"]["calls"] == 2
    assert report["totals"]["input_tokens"] == 250  # the final cumulative total, not 500
