"""ATIF trajectories: golden reports from hand-written files, step semantics, odd input.

There is no ATIF file in the public corpus; the cases follow Harbor RFC 0001 (v1.4) and
the v1.5-v1.7 additions (tool definitions, content parts, embedded subagents).
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from tests.golden import assert_golden, golden_input
from traces.core.analysis.ingest import analyze_bytes
from traces.core.outputs.report import build_report
from traces.core.reading.formats.atif import AtifAdapter, usage_from
from traces.core.reading.formats.detect import detect
from traces.core.reading.limits import InputRejected


def test_basic_golden_report() -> None:
    trace = analyze_bytes(golden_input("atif/basic.json"), filename="trajectory.json")
    assert_golden("atif/basic.report.json", build_report(trace))


def test_one_trajectory_per_line_golden_report() -> None:
    trace = analyze_bytes(golden_input("atif/lines.jsonl"), filename="lines.jsonl")
    assert_golden("atif/lines.report.json", build_report(trace))


def test_each_agent_step_is_a_call_whose_request_is_every_step_before_it() -> None:
    trace = analyze_bytes(golden_input("atif/basic.json"))
    first, second = trace.calls
    assert [m.role for m in first.appended] == ["system", "user"]
    assert first.system == "You are a careful shell agent."
    assert [b.kind for b in first.response.blocks] == ["thinking", "text", "tool_use", "tool_use"]
    # The reply of step 3 and then its observation are what step 4's request adds.
    assert [m.role for m in second.appended] == ["assistant", "tool"]
    results = second.appended[1].blocks
    assert [(b.kind, b.tool_id) for b in results] == [
        ("tool_result", "call_1"),
        ("tool_result", "call_2"),
    ]
    assert results[1].text == "wc: todo.txt: No such file or directory"
    assert first.tools[0]["function"]["name"] == "bash"
    assert first.extra["cost_usd"] == 0.00045
    assert first.extra["stop_reason_inferred"] is True
    assert second.duration_s == 1.5


def test_prompt_tokens_include_cached_tokens_and_cache_writes() -> None:
    usage = usage_from(
        {
            "prompt_tokens": 520,
            "completion_tokens": 80,
            "cached_tokens": 200,
            "extra": {"cache_creation_input_tokens": 120},
        }
    )
    assert usage is not None
    assert (usage.input_tokens, usage.cache_read_tokens, usage.cache_write_tokens) == (
        200,
        200,
        120,
    )
    assert usage.total_input_tokens == 520
    assert usage_from({"cost_usd": 0.1}) is None
    clamped = usage_from({"prompt_tokens": 10, "cached_tokens": 50})
    assert clamped is not None and (clamped.input_tokens, clamped.cache_read_tokens) == (0, 10)


def test_results_without_source_call_id_stay_unpaired() -> None:
    # Line 1 of lines.jsonl: the observation of step 2 names no source_call_id.
    trace = analyze_bytes(golden_input("atif/lines.jsonl"))
    run = next(run for run in trace.tool_runs if run.id == "c1")
    assert run.status == "dangling"
    assert trace.calls[0].extra["unlinked_results"] == 1
    observation = trace.calls[1].appended[1]
    assert [b.kind for b in observation.blocks] == ["text"]
    assert trace.calls[1].tokens_estimated and trace.calls[1].usage is None


def test_embedded_subagent_is_its_own_loop_under_the_delegating_call() -> None:
    trace = analyze_bytes(golden_input("atif/lines.jsonl"))
    child = trace.loops[2]
    assert child.key == "atif child-1"
    assert child.parent_tool_id == "toolu_delegate"
    assert child.label == "orchestrator parent > search"
    delegate = next(run for run in trace.tool_runs if run.id == "toolu_delegate")
    assert delegate.status == "paired"
    assert "[subagent trajectory child-1]" in delegate.result_text


def test_a_json_array_of_trajectories_is_read_item_by_item() -> None:
    lines = golden_input("atif/lines.jsonl").splitlines()
    array = b"[\n" + b",\n".join(lines) + b"\n]\n"
    trace = analyze_bytes(array)
    assert trace.format == "atif"
    assert len(trace.loops) == 3
    assert [call.line for call in trace.calls] == [
        1,
        1,
        1,
        2,
        2,
        2,
        2,
    ]  # item 2 embeds the subagent


def test_detection_needs_the_schema_version_or_the_step_shape() -> None:
    steps = [{"step_id": 1, "source": "user", "message": "hi"}]
    assert detect([{"session_id": "s", "agent": {}, "steps": steps}]).adapter is AtifAdapter
    assert AtifAdapter.sniff([{"schema_version": "ATIF-v1.5"}]).score == 0.95
    assert AtifAdapter.sniff([{"steps": steps}]) is None
    assert AtifAdapter.sniff([{"session_id": "s", "steps": [{"role": "user"}]}]) is None


def _trajectory(steps: Any, session: str = "s") -> dict[str, Any]:
    return {
        "schema_version": "ATIF-v1.4",
        "session_id": session,
        "agent": {"name": "a"},
        "steps": steps,
    }


def test_malformed_lines_and_steps_become_line_errors_and_the_rest_is_read() -> None:
    good = _trajectory(
        [
            {"step_id": 1, "source": "user", "message": "hi"},
            "not a step",
            {"step_id": 3, "source": "robot", "message": "?"},
            {"step_id": 4, "source": "agent", "message": "hello"},
        ],
        "good",
    )
    lines = [
        orjson.dumps(good),
        b'{"schema_version": "ATIF-v1.4", "session_id": "cut", "steps": [{"step_id": 1,',
        b'["not", "a", "trajectory"]',
        orjson.dumps(_trajectory({"step_id": 1}, "bad-steps")),
        orjson.dumps(_trajectory([{"step_id": 1, "source": "user", "message": "only"}], "quiet")),
    ]
    trace = analyze_bytes(b"\n".join(lines) + b"\n", filename="mixed.jsonl")
    assert trace.format == "atif"
    assert len(trace.calls) == 1
    assert trace.records_ingested == 1  # line 1 despite its two bad steps
    assert [(e.line, e.message) for e in trace.line_errors] == [
        (1, "trajectory good: step #2 is not an object"),
        (1, "trajectory good: step 3 has source 'robot', not system, user or agent"),
        (2, "cut off mid-record (the JSON ends before it is complete)"),
        (3, "expected an ATIF trajectory object"),
        (4, "trajectory bad-steps: 'steps' is not a list"),
        (5, "trajectory quiet: no agent step, so no model call to show"),
    ]


def test_a_trajectory_without_agent_steps_is_refused_with_the_reason() -> None:
    data = orjson.dumps(_trajectory([{"step_id": 1, "source": "system", "message": "x"}]))
    with pytest.raises(InputRejected, match="no agent step"):
        analyze_bytes(data)


def test_odd_tool_calls_and_content_parts_never_crash() -> None:
    step = {
        "step_id": 2,
        "source": "agent",
        "message": [{"type": "image", "source": {"media_type": "image/png", "path": "a.png"}}, 7],
        "tool_calls": [{"tool_call_id": 5, "function_name": "f", "arguments": {}}, "junk"],
        "observation": {"results": ["junk", {"source_call_id": 5, "content": None}]},
    }
    trace = analyze_bytes(
        orjson.dumps(_trajectory([{"step_id": 1, "source": "user", "message": "go"}, step]))
    )
    response = trace.calls[0].response
    assert [b.kind for b in response.blocks] == ["image", "other", "tool_use", "other"]
    assert response.blocks[0].text == "[image a.png]"
    assert response.tool_uses[0].tool_id == "5"
