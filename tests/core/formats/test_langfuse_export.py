"""Langfuse trace exports (`langfuse`): corpus facts, pairing methods, golden report, odd input.

Facts from SOURCES.md section 17, re-read by hand: model calls are GENERATION
observations with an input or usage (BeeAI's `…success-16`/`…finish-16` have neither);
OpenAI Agents stores the Responses object as a string; LangGraph lists tool definitions as
`role:"tool"` messages; Google ADK's `function_call` has no id; BeeAI's tool calls are
"Function Name:" text.
"""

from __future__ import annotations

import orjson
import pytest

from tests.conftest import CORPUS
from tests.golden import assert_golden, golden_input
from traces.core.analysis.ingest import analyze_bytes
from traces.core.outputs.report import build_report
from traces.core.reading.dialects import langfuse as lf
from traces.core.reading.formats.detect import detect

FOLDER = CORPUS / "langfuse_export"


def _corpus(name: str):
    path = FOLDER / name
    if not path.is_file():
        pytest.skip(f"corpus file {name} is absent")
    return analyze_bytes(path.read_bytes(), filename=name)


@pytest.mark.corpus
def test_openai_agents_responses_object_stored_as_a_string():
    trace = _corpus("openai-agents-2025-09-30.trace.json")
    first, _ = trace.calls
    assert first.response.tool_uses[0].tool_id == "call_Kud0j0DxWSmLzv9W5m6qVqXn"
    assert first.system == "You are a helpful agent." and first.stop_reason == "tool_use"
    (run,) = trace.tool_runs
    assert (run.status, run.pairing, run.result_call) == ("paired", "id", 2)
    assert run.duration_s is not None  # the TOOL observation matched it by name and input


@pytest.mark.corpus
def test_langgraph_tool_definitions_are_not_results_and_the_history_extends():
    trace = _corpus("langgraph-python-2025-08-22.trace.json")
    first, second = trace.calls
    assert second.extends_previous and not second.history_rewritten
    assert [t["function"]["name"] for t in first.tools] == ["Web-Search"]
    (run,) = trace.tool_runs
    assert run.id == "call_1oGK863sxQHlPreFhDdEs3yl" and run.status == "paired"


@pytest.mark.corpus
def test_google_adk_calls_without_ids_pair_by_name_and_order():
    trace = _corpus("google-adk-2025-08-28.trace.json")
    (run,) = trace.tool_runs
    assert (run.name, run.status, run.pairing) == ("say_hello", "paired", "name-order")
    assert run.result_text == '{"greeting":"Hello Langfuse 👋"}'
    assert [t["name"] for t in trace.calls[0].tools] == ["say_hello"]


@pytest.mark.corpus
def test_beeai_text_tool_calls_and_event_generations():
    trace = _corpus("beeai-2025-08-01.trace.json")
    assert [c.extra["observation_name"] for c in trace.calls] == [
        "backend.openai.chat.start-14",
        "backend.openai.chat.start-15",
        "backend.openai.chat.start-16",
    ]
    assert [(r.name, r.pairing, r.status) for r in trace.tool_runs] == [
        ("Wikipedia", "text", "paired"),
        ("OpenMeteoTool", "text", "paired"),
    ]
    assert trace.tool_runs[0].input == {"query": "Tourism in Barcelona"}
    # No generation stored its output; the next request's new assistant messages are it.
    first, _, last = trace.calls
    assert first.extra["response_from_next_request"] and first.stop_reason == "tool_use"
    assert [(r.call, r.result_call) for r in trace.tool_runs] == [(1, 2), (2, 3)]
    assert last.response is None  # nothing follows the last one


def test_golden_trace():
    trace = analyze_bytes(golden_input("langfuse/trace.json"), filename="trace.json")
    report = build_report(trace)
    assert_golden("langfuse/trace.report.json", report)
    look, save = report["tool_runs"]
    assert "pairing" not in look  # matched by id: the default, not written
    assert save["pairing"] == "name-input" and save["is_error"]
    assert save["result_preview"] == "notes service unavailable"
    assert report["totals"]["calls"] == 2  # the chat.finish event generation is not a call
    assert report["calls"][1]["cache_read_tokens"] == 40


def test_observations_one_per_line_read_like_the_export():
    export = orjson.loads(golden_input("langfuse/trace.json"))
    lines = b"\n".join(orjson.dumps(o) for o in reversed(export["observations"]))
    from_lines = build_report(analyze_bytes(lines, filename="obs.jsonl"))
    from_export = build_report(analyze_bytes(golden_input("langfuse/trace.json")))
    assert from_lines["tool_runs"] == from_export["tool_runs"]
    assert detect([orjson.loads(lines.split(b"\n")[0])]).adapter.name == "langfuse"


def test_a_tool_observation_matching_no_call_is_left_out_and_errors_fail_calls():
    export = orjson.loads(golden_input("langfuse/trace.json"))
    export["observations"][2]["input"] = '{"q": "something else"}'  # no call had this input
    export["observations"][3]["level"] = "ERROR"
    export["observations"][3]["statusMessage"] = "rate limited"
    export["observations"].append({"type": "SPAN"})
    trace = analyze_bytes(orjson.dumps(export), filename="t.json")
    look = trace.tool_runs[0]
    assert look.status == "paired" and look.duration_s is None  # paired by id, no timing
    assert trace.calls[1].status == "error" and trace.calls[1].error == "rate limited"
    assert [e.message for e in trace.line_errors] == [
        "observation without type, startTime and traceId; skipped"
    ]


def test_anthropic_shaped_generations_pair_by_tool_use_id():
    use = {"type": "tool_use", "id": "tu1", "name": "read", "input": {"p": "a"}}
    first_in = [{"role": "user", "content": "read a"}]
    second_in = [
        *first_in,
        {"role": "assistant", "content": [use]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "tu1", "content": "A"}],
        },
    ]
    reply = {"type": "message", "role": "assistant", "content": [{"type": "text", "text": "A."}]}
    observations = [
        {
            "type": "GENERATION",
            "traceId": "t",
            "startTime": "2025-01-01T00:00:01Z",
            "input": first_in,
            "output": [use],
            "model": "claude-sonnet-4-5",
        },
        {
            "type": "GENERATION",
            "traceId": "t",
            "startTime": "2025-01-01T00:00:02Z",
            "input": second_in,
            "output": reply,
            "model": "claude-sonnet-4-5",
        },
    ]
    trace = analyze_bytes(orjson.dumps(observations), filename="obs.json")
    first, second = trace.calls
    assert first.stop_reason == "tool_use" and second.stop_reason == "end_turn"
    (run,) = trace.tool_runs
    assert (run.id, run.status, run.call, run.result_call) == ("tu1", "paired", 1, 2)


def test_message_shapes():
    langchain = {
        "type": "ai",
        "content": "",
        "additional_kwargs": {"tool_calls": []},
        "tool_calls": [{"id": "c1", "name": "f", "args": {"a": 1}}],
    }
    assert lf.normalize_message(langchain).tool_uses[0].input == {"a": 1}
    parts = {"role": "assistant", "parts": [{"type": "tool_call", "id": "c2", "name": "g"}]}
    assert lf.normalize_message(parts).tool_uses[0].tool_id == "c2"
    definition = {"role": "tool", "content": {"type": "function", "function": {"name": "f"}}}
    assert lf.normalize_message(definition).tool_results == ()
    assert lf.parse_value("{'query': 'example'}") == {"query": "example"}
    claude = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tu1"}]}
    assert lf.normalize_message(claude).tool_results[0].tool_id == "tu1"
    assert lf.parse_value("__import__('os')") == "__import__('os')"


def test_odd_fields_never_crash():
    base = {"traceId": "t", "startTime": "2025-01-01T00:00:00Z"}
    observations = [
        {**base, "type": "GENERATION", "input": "not json {", "output": 42, "usageDetails": "x"},
        {**base, "type": "GENERATION", "input": [1, None, {"role": 7}], "output": [None]},
        {**base, "type": "GENERATION", "input": {"contents": "x"}, "output": {"candidates": []}},
        {**base, "type": "TOOL", "name": None, "input": "{'a': (1,", "output": {"b": [1]}},
        {
            **base,
            "type": "GENERATION",
            "input": '{"contents": [{"parts": [{"function_call": 1}]}]}',
        },
    ]
    trace = analyze_bytes(orjson.dumps(observations), filename="odd.json")
    assert len(trace.calls) == 4  # every generation with an input, however odd
    build_report(trace)


def test_a_type_that_is_not_text_is_skipped_not_a_crash():
    export = orjson.loads(golden_input("langfuse/trace.json"))
    export["observations"].append({**export["observations"][1], "type": ["GENERATION"]})
    export["observations"][1]["input"] = '[{"role": "user", "type": ["ai"], "content": "hi"}]'
    trace = analyze_bytes(orjson.dumps(export), filename="t.json")
    assert len(trace.calls) == 2 and len(trace.line_errors) == 1


@pytest.mark.corpus
@pytest.mark.parametrize(
    ("name", "last_generation", "tool", "arguments", "output"),
    [
        (
            "openai-agents-2025-09-30.trace.json",
            "90d94774e8e3724d",
            "get_weather",
            {"city": "Tokyo"},
            "The weather in Tokyo is sunny.",
        ),
        ("google-adk-2025-08-28.trace.json", "bded677884f031ce", "say_hello", {}, "{}"),
    ],
)
def test_tool_spans_without_call_ids_pair_by_name_and_input(
    name, last_generation, tool, arguments, output
):
    """The export as it stood before the last generation (a run still going): no request
    carries the tool's result yet, so the TOOL span, which names no call id, is what
    pairs the call, by tool name and arguments, with its output and its times."""
    path = FOLDER / name
    if not path.is_file():
        pytest.skip(f"corpus file {name} is absent")
    export = orjson.loads(path.read_bytes())
    (span,) = [o for o in export["observations"] if o["type"] == "TOOL"]
    assert "tool_call_id" not in str(span.get("input")) + str(span.get("output"))
    export["observations"] = [o for o in export["observations"] if o["id"] != last_generation]
    trace = analyze_bytes(orjson.dumps(export), filename=name)
    (run,) = trace.tool_runs
    assert (run.name, run.status, run.pairing, run.input) == (
        tool,
        "paired",
        "name-input",
        arguments,
    )
    assert (run.result_call, run.result_text) == (None, output)  # the span's output
    assert run.duration_s is not None and run.duration_s < 0.01  # the span's own start and end
    report = build_report(trace)
    assert report["tool_runs"][0]["pairing"] == "name-input"
