"""Compaction: a result recorded before a compaction is paired, not dangling; the call after
it is marked, in the report, the sequence diagram and the growth chart."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from tests.core.builders import log, pair, response, tool_result, tool_use, user
from traces.core.analysis.ingest import analyze_bytes, analyze_files
from traces.core.outputs.render.charts import transcript_growth_figure
from traces.core.outputs.render.links import PrefixLinks
from traces.core.outputs.render.sequence import render_sequence
from traces.core.outputs.report import build_report


def _line(time: str, kind: str, payload: dict[str, Any]) -> str:
    return orjson.dumps({"timestamp": time, "type": kind, "payload": payload}).decode()


def _item(time: str, item: dict[str, Any]) -> str:
    return _line(time, "response_item", item)


def _tokens(time: str, total: int, cached: int = 0) -> str:
    last = {"input_tokens": total, "cached_input_tokens": cached, "output_tokens": 10}
    info = {"total_token_usage": last, "last_token_usage": last}
    return _line(time, "event_msg", {"type": "token_count", "info": info})


def _user(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def _codex(*compaction: str) -> bytes:
    """A Codex session: a shell call whose output is recorded, then a compaction, then more."""
    lines = [
        _line(
            "2025-09-20T10:00:00Z",
            "session_meta",
            {"id": "sess-c", "timestamp": "2025-09-20T10:00:00Z"},
        ),
        _line("2025-09-20T10:00:00.1Z", "turn_context", {"model": "gpt-5-codex"}),
        _item("2025-09-20T10:00:00.2Z", _user("run the tests")),
        _item(
            "2025-09-20T10:00:01Z",
            {
                "type": "function_call",
                "name": "exec_command",
                "arguments": '{"cmd":"pytest"}',
                "call_id": "call_1",
            },
        ),
        _tokens("2025-09-20T10:00:01.1Z", 90_000, 80_000),
        _item(
            "2025-09-20T10:00:03Z",
            {"type": "function_call_output", "call_id": "call_1", "output": "3 passed"},
        ),
        *compaction,
        _item(
            "2025-09-20T10:00:06Z",
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "All tests pass."}],
            },
        ),
        _tokens("2025-09-20T10:00:06.1Z", 4_000),
    ]
    return ("\n".join(lines) + "\n").encode()


def _assert_compacted_codex(data: bytes, source: str, line: int) -> dict[str, Any]:
    trace = analyze_bytes(data, filename="rollout.jsonl")
    assert trace.format == "codex-rollout"
    [run] = trace.tool_runs
    # No request after the compaction carries the output, yet it is the tool's answer.
    assert (run.id, run.status, run.result_text) == ("call_1", "paired", "3 passed")
    first, second = trace.calls
    assert "compaction" not in first.extra
    assert second.extra["compaction"] == {"source": source, "line": line}
    report = build_report(trace)
    assert report["calls"][1]["compaction"] == {
        "source": source,
        "line": line,
        "trigger": None,
        "pre_tokens": None,
    }
    assert "compaction" not in report["calls"][0]
    assert [r["status"] for r in report["tool_runs"]] == ["paired"]
    return report


def test_codex_compacted_line_pairs_the_output_recorded_before_it():
    summary = {"message": "Summary: the tests were run and pass."}
    data = _codex(_line("2025-09-20T10:00:05Z", "compacted", summary))
    _assert_compacted_codex(data, "Codex compacted line", 7)


def test_codex_context_compacted_event_alone_is_a_compaction():
    event = {"type": "context_compacted"}
    data = _codex(_line("2025-09-20T10:00:05Z", "event_msg", event))
    _assert_compacted_codex(data, "Codex context_compacted event", 7)


def test_codex_compacted_line_and_its_event_are_one_compaction():
    summary = {"message": "Summary: the tests were run and pass."}
    data = _codex(
        _line("2025-09-20T10:00:05Z", "compacted", summary),
        _line("2025-09-20T10:00:05.1Z", "event_msg", {"type": "context_compacted"}),
    )
    trace = analyze_bytes(data, filename="rollout.jsonl")
    second = trace.calls[1]
    assert second.extra["compaction"]["source"] == "Codex compacted line"
    kept = [m.blocks[0].text for m in second.appended]
    assert kept.count("Summary: the tests were run and pass.") == 1


def test_compaction_is_drawn_in_the_diagram_and_the_growth_chart():
    summary = {"message": "Summary: the tests were run and pass."}
    report = _assert_compacted_codex(
        _codex(_line("2025-09-20T10:00:05Z", "compacted", summary)), "Codex compacted line", 7
    )
    svg = render_sequence(report, links=PrefixLinks("/traces/x/"))
    assert svg.count('class="compaction"') == 1
    assert 'data-call="2"' in svg and "history compacted" in svg
    figure = transcript_growth_figure(report)
    assert figure is not None
    # Few calls: a category axis, where bars count from 0; the line sits between the
    # bars of calls 1 and 2, before the compacted call.
    [shape] = figure["layout"]["shapes"]
    assert (shape["x0"], shape["x1"], shape["line"]["dash"]) == (0.5, 0.5, "dash")
    [note] = figure["layout"]["annotations"]
    assert note["text"] == "compacted" and note["x"] == 0.5
    assert "history compacted before call 2" in note["hovertext"]
    # The drop in input is the chart's own data: 90,000 before, 4,000 after.
    totals = [call["input_tokens"] + call["cache_read_tokens"] for call in report["calls"]]
    assert totals == [90_000, 4_000]


def test_compaction_mark_on_a_long_loop_uses_call_numbers():
    calls = [
        {"index": n, "loop": 1, "buckets": {}, "output_tokens": 1, "tokens_exact": True}
        for n in range(1, 151)
    ]
    calls[99]["compaction"] = {"source": "Codex compacted line"}
    figure = transcript_growth_figure({"calls": calls})
    assert figure is not None
    assert figure["layout"]["xaxis"]["type"] == "linear"
    assert [shape["x0"] for shape in figure["layout"]["shapes"]] == [99.5]


def test_no_compaction_no_marks():
    data = _codex()
    report = build_report(analyze_bytes(data, filename="rollout.jsonl"))
    assert all("compaction" not in call for call in report["calls"])
    figure = transcript_growth_figure(report)
    assert figure is not None and "shapes" not in figure["layout"]
    assert 'class="compaction"' not in render_sequence(report, links=PrefixLinks("/t/"))


def test_anthropic_compaction_block_keeps_the_loop_and_pairs_across_it():
    # Call 2's response carries a server-side compaction block; the client then drops
    # everything before it, so call 3's first message is not the loop's first message.
    q = [user("refactor the parser")]
    r1 = response([tool_use("t1", path="parser.py")], "tool_use", input_tokens=150_000)
    echo1 = {"role": "assistant", "content": r1["content"]}
    results1 = {"role": "user", "content": [tool_result("t1", "def parse(): ...")]}
    compaction = {"type": "compaction", "content": "Summary: parser.py read; refactor next."}
    r2 = response([compaction, tool_use("t2", path="lexer.py")], "tool_use", input_tokens=160_000)
    echo2 = {"role": "assistant", "content": r2["content"]}
    results2 = {"role": "user", "content": [tool_result("t2", "def lex(): ...")]}
    r3 = response([{"type": "text", "text": "Done."}], "end_turn", input_tokens=3_000)
    trace = analyze_bytes(
        log(
            pair(q, r1),
            pair([*q, echo1, results1], r2),
            pair([echo2, results2], r3),
        )
    )
    assert [call.loop for call in trace.calls] == [1, 1, 1]
    assert "compaction" not in trace.calls[1].extra
    assert trace.calls[2].extra["compaction"] == {"source": "compaction block"}
    runs = {run.id: run for run in trace.tool_runs}
    assert {run.status for run in runs.values()} == {"paired"}
    assert runs["t2"].result_call == 3
    report = build_report(trace)
    assert report["calls"][2]["compaction"]["source"] == "compaction block"
    assert [c["input_tokens"] for c in report["calls"]] == [150_000, 160_000, 3_000]


def test_anthropic_compaction_block_kept_in_full_history_is_marked_once():
    q = [user("refactor the parser")]
    compaction = {"type": "compaction", "content": "Summary so far."}
    r1 = response([compaction, tool_use("t1", path="a")], "tool_use")
    echo1 = {"role": "assistant", "content": r1["content"]}
    results1 = {"role": "user", "content": [tool_result("t1", "A")]}
    r2 = response([tool_use("t2", path="b")], "tool_use")
    echo2 = {"role": "assistant", "content": r2["content"]}
    results2 = {"role": "user", "content": [tool_result("t2", "B")]}
    r3 = response([{"type": "text", "text": "Done."}], "end_turn")
    trace = analyze_bytes(
        log(
            pair(q, r1),
            pair([*q, echo1, results1], r2),
            pair([*q, echo1, results1, echo2, results2], r3),
        )
    )
    marked = [call.index for call in trace.calls if "compaction" in call.extra]
    assert marked == [2]
    assert {run.status for run in trace.tool_runs} == {"paired"}


def test_claude_code_compact_boundary_is_marked_with_its_metadata(corpus: Path):
    path = corpus / "claude_code_jsonl" / "spotter" / "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl"
    trace = analyze_files([(path.name, path.read_bytes())])
    report = build_report(trace)
    marked = [call for call in report["calls"] if "compaction" in call]
    assert len(marked) == 1
    assert marked[0]["compaction"]["source"] == "Claude Code compact boundary"
    assert marked[0]["compaction"]["trigger"] == "auto"
    assert marked[0]["compaction"]["pre_tokens"] == 167_731
    assert 'class="compaction"' in render_sequence(
        report, links=PrefixLinks("/t/"), loop=marked[0]["loop"], start=1, window=10_000
    )


def test_responses_compaction_item_keeps_the_loop_and_pairs_across_it():
    # Server-side compaction in the Responses API: an opaque `compaction` output item;
    # the client drops the items before it from the next input.
    def line(inputs: list[dict[str, Any]], output: list[dict[str, Any]], tokens: int) -> bytes:
        usage = {"input_tokens": tokens, "output_tokens": 10, "total_tokens": tokens + 10}
        body = {"id": "resp", "object": "response", "status": "completed", "model": "gpt-5"}
        body |= {"output": output, "usage": usage}
        return orjson.dumps({"request": {"model": "gpt-5", "input": inputs}, "response": body})

    ask = {"type": "message", "role": "user", "content": "refactor the parser"}
    call1 = {
        "type": "function_call",
        "call_id": "c1",
        "name": "read",
        "arguments": '{"path": "parser.py"}',
    }
    out1 = {"type": "function_call_output", "call_id": "c1", "output": "def parse(): ..."}
    compaction = {"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAAA-opaque"}
    call2 = {"type": "function_call", "call_id": "c2", "name": "read", "arguments": '{"path": "b"}'}
    out2 = {"type": "function_call_output", "call_id": "c2", "output": "B"}
    done = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "ok"}],
    }
    data = b"\n".join(
        [
            line([ask], [call1], 150_000),
            line([ask, call1, out1], [compaction, call2], 160_000),
            line([compaction, call2, out2], [done], 3_000),
        ]
    )
    trace = analyze_bytes(data + b"\n")
    assert trace.format == "openai-responses"
    assert [call.loop for call in trace.calls] == [1, 1, 1]
    assert trace.calls[2].extra["compaction"] == {"source": "compaction block"}
    assert {(run.id, run.status) for run in trace.tool_runs} == {("c1", "paired"), ("c2", "paired")}
