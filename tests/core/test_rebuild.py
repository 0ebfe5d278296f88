"""Loop rebuilding on hand-written Anthropic logs: pairing by id, batches, rewrites, errors."""

from __future__ import annotations

import orjson

from tests.core.builders import log, pair, response, tool_result, tool_use, user
from traces.core.analysis.ingest import analyze_bytes
from traces.core.outputs.report import build_report


def test_parallel_calls_pair_by_id_not_position():
    q = [user("compare a and b")]
    r1 = response([tool_use("t_a", path="a"), tool_use("t_b", path="b")], "tool_use")
    echo = {"role": "assistant", "content": r1["content"]}
    # Results come back in the opposite order: pairing must follow the ids.
    results = {"role": "user", "content": [tool_result("t_b", "B"), tool_result("t_a", "A")]}
    r2 = response([{"type": "text", "text": "done"}], "end_turn")
    trace = analyze_bytes(log(pair(q, r1), pair([*q, echo, results], r2)))
    assert [c.loop for c in trace.calls] == [1, 1]
    runs = {run.id: run for run in trace.tool_runs}
    assert runs["t_a"].result_text == "A" and runs["t_b"].result_text == "B"
    assert {run.status for run in runs.values()} == {"paired"}
    assert all(
        run.call == 1 and run.result_call == 2 and run.batch_size == 2 for run in runs.values()
    )
    assert [b.tool_call_ids for b in trace.batches] == [("t_a", "t_b")]
    second = trace.calls[1]
    assert second.extends_previous and second.prefix_len == 1 and len(second.appended) == 2
    assert second.appended[0].role == "assistant"


def test_error_result_is_kept_as_error():
    q = [user("read x")]
    r1 = response([tool_use("t1", path="x")], "tool_use")
    results = {"role": "user", "content": [tool_result("t1", "error: no such file", True)]}
    r2 = response([{"type": "text", "text": "x is missing"}], "end_turn")
    echo = {"role": "assistant", "content": r1["content"]}
    trace = analyze_bytes(log(pair(q, r1), pair([*q, echo, results], r2)))
    (run,) = trace.tool_runs
    assert run.is_error and run.status == "paired"
    assert build_report(trace)["outcome"]["kind"] == "finished"


def test_failed_api_call_is_kept_and_named():
    q = [user("hi")]
    r1 = response([tool_use("t1", path="x")], "tool_use")
    echo = {"role": "assistant", "content": r1["content"]}
    # The tool_result is missing: the API rejects the request.
    rejected = {
        "timestamp": 1.0,
        "status_code": 400,
        "body": {
            "type": "error",
            "error": {"type": "invalid_request_error", "message": "tool_use ids without results"},
        },
    }
    line2 = orjson.dumps(
        {
            "request": {
                "url": "https://api.anthropic.com/v1/messages",
                "body": {"model": "m", "messages": [*q, echo, user("go on")]},
            },
            "response": rejected,
        }
    )
    trace = analyze_bytes(log(pair(q, r1), line2))
    failed = trace.calls[1]
    assert failed.status == "error" and failed.http_status == 400
    assert "tool_use ids without results" in failed.error
    report = build_report(trace)
    assert report["totals"]["failed_calls"] == 1
    assert report["outcome"]["kind"] == "api_error"
    assert trace.tool_runs[0].status == "dangling"


def test_history_rewrite_stays_in_the_loop_but_is_marked():
    q = [user("plan a trip")]
    r1 = response([tool_use("t1", path="a")], "tool_use")
    echo = {"role": "assistant", "content": r1["content"]}
    results = {"role": "user", "content": [tool_result("t1", "A" * 50)]}
    r2 = response([{"type": "text", "text": "ok"}], "end_turn")
    compacted = [*q, user("summary of earlier work"), user("continue")]
    r3 = response([{"type": "text", "text": "continuing"}], "end_turn")
    trace = analyze_bytes(log(pair(q, r1), pair([*q, echo, results], r2), pair(compacted, r3)))
    third = trace.calls[2]
    assert third.loop == 1
    assert third.history_rewritten and not third.extends_previous
    assert third.prefix_len == 1 and third.base_call == 2


def test_side_calls_with_other_first_message_get_their_own_loop():
    q = [user("main task")]
    side = [user("write a title for this conversation")]
    r = response([{"type": "text", "text": "x"}], "end_turn")
    echo = {"role": "assistant", "content": r["content"]}
    trace = analyze_bytes(log(pair(q, r), pair(side, r), pair([*q, echo, user("more")], r)))
    assert [c.loop for c in trace.calls] == [1, 2, 1]


def test_identical_requests_are_separate_unless_a_retry_after_failure():
    q = [user("quota")]
    r = response([{"type": "text", "text": "ok"}], "end_turn")
    trace = analyze_bytes(log(pair(q, r), pair(q, r)))
    assert [c.loop for c in trace.calls] == [1, 2]
    failed = orjson.dumps({"request": {"model": "m", "messages": q}, "response": None})
    trace = analyze_bytes(log(failed, pair(q, r)))
    assert [c.loop for c in trace.calls] == [1, 1]
    assert trace.calls[0].status == "error"


def test_cache_control_breakpoints_do_not_break_the_prefix():
    marked = {
        "role": "user",
        "content": [{"type": "text", "text": "go", "cache_control": {"type": "ephemeral"}}],
    }
    plain = {"role": "user", "content": [{"type": "text", "text": "go"}]}
    r1 = response([tool_use("t1", path="a")], "tool_use")
    echo = {"role": "assistant", "content": r1["content"]}
    results = {"role": "user", "content": [tool_result("t1", "A")]}
    trace = analyze_bytes(log(pair([marked], r1), pair([plain, echo, results], r1)))
    assert trace.calls[1].extends_previous and trace.calls[1].prefix_len == 1


def test_dangling_and_orphan():
    q = [user("go")]
    r1 = response([tool_use("t1", path="a")], "tool_use")
    echo = {"role": "assistant", "content": r1["content"]}
    # The result answers "t1 " (stray space): an orphan, and t1 stays dangling.
    results = {"role": "user", "content": [tool_result("t1 ", "A")]}
    r2 = response([{"type": "text", "text": "?"}], "end_turn")
    trace = analyze_bytes(log(pair(q, r1), pair([*q, echo, results], r2)))
    statuses = {run.id: run.status for run in trace.tool_runs}
    assert statuses == {"t1": "dangling", "t1 ": "orphan"}


def test_timings_from_claude_trace_timestamps():
    q = [user("go")]
    r = response([{"type": "text", "text": "x"}], "end_turn")
    line = orjson.dumps(
        {
            "request": {
                "timestamp": 1748554711.5,
                "method": "POST",
                "url": "/v1/messages",
                "body": {"model": "m", "messages": q},
            },
            "response": {"timestamp": 1748554713.0, "status_code": 200, "body": r},
            "logged_at": "2025-05-29T23:38:33.000",
        }
    )
    (call,) = analyze_bytes(log(line)).calls
    assert call.started_at == 1748554711.5
    assert call.duration_s == 1.5
