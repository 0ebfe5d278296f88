"""OpenHands event streams (`openhands-events`): corpus facts, golden report, odd input.

Facts from SOURCES.md section 18, re-read by hand: calls are distinct
`tool_call_metadata.model_response.id`s; observations answer their action by `cause`;
`finish` is never answered, by design; agent `message` actions without metadata are text
turns, not calls.
"""

from __future__ import annotations

import orjson
import pytest

from tests.conftest import CORPUS
from tests.golden import assert_golden, golden_input
from traces.core.analysis.accounting import account
from traces.core.analysis.ingest import analyze_bytes
from traces.core.analysis.rules.registry import run_rules
from traces.core.outputs.report import build_report
from traces.core.reading.formats.detect import detect

FOLDER = CORPUS / "openhands_events"


def _corpus(name: str):
    path = FOLDER / name
    if not path.is_file():
        pytest.skip(f"corpus file {name} is absent")
    return analyze_bytes(path.read_bytes(), filename=name)


@pytest.mark.corpus
def test_wrong_initial_state_every_action_pairs_with_its_observation_by_cause():
    trace = _corpus("openhands_runtime_trajs_wrong_initial_state.json")
    assert [run.status for run in trace.tool_runs] == ["paired"] * 3 + ["dangling"]
    assert trace.tool_runs[-1].name == "finish"
    assert [c.usage.output_tokens for c in trace.calls] == [95, 111, 85, 67]
    # LiteLLM counts cache writes and reads inside prompt_tokens: 3475 = 4 + 3471 written
    first = trace.calls[0].usage
    assert (first.input_tokens, first.cache_write_tokens, first.cache_read_tokens) == (4, 3471, 0)
    assert trace.tool_runs[1].duration_s == pytest.approx(0.648764, abs=1e-3)


@pytest.mark.corpus
def test_agent_text_messages_without_metadata_are_transcript_not_calls():
    trace = _corpus("openhands_runtime_trajs_basic_interactions.json")
    (call,) = trace.calls
    assert [m.role for m in call.appended] == ["user", "assistant", "user", "assistant", "user"]
    report = build_report(trace)
    assert report["outcome"]["kind"] == "finished"  # finish ends the run by design
    assert not [f for f in report["findings"] if f["rule"] == "dangling-tool-call"]


@pytest.mark.corpus
def test_a_run_ending_on_the_agents_text_message_ends_on_that_call():
    """The corpus conversation as saved when the agent had answered "1 + 1 equals 2." (its
    first two events): that closing message is the model call that finished the run."""
    path = FOLDER / "openhands_runtime_trajs_basic_interactions.json"
    if not path.is_file():
        pytest.skip("corpus file openhands_runtime_trajs_basic_interactions.json is absent")
    events = orjson.loads(path.read_bytes())
    for saved in (events[:2], events[:4]):
        trace = analyze_bytes(orjson.dumps(saved), filename="basic_interactions.json")
        (call,) = trace.calls
        assert call.extra["final_message"] is True and call.stop_reason == "end_turn"
        assert call.response is not None
        assert [b.text for b in call.response.blocks] == [saved[-1]["args"]["content"]]
        assert [m.role for m in call.appended] == ["user", "assistant", "user"][: len(saved) - 1]
        assert build_report(trace)["outcome"]["kind"] == "finished"


def test_final_text_message_after_tools_reads_as_finished_not_halted():
    events = orjson.loads(golden_input("openhands-events/events.json"))
    assert events[-1]["action"] == "finish"
    halted = analyze_bytes(orjson.dumps(events[:-1]), filename="e.json")
    assert build_report(halted)["outcome"]["kind"] == "halted_on_tool_use"
    closing = {"id": 99, "source": "agent", "action": "message", "args": {"content": "Done."}}
    state = {"id": 100, "source": "environment", "observation": "agent_state_changed"}
    state["extras"] = {"agent_state": "awaiting_user_input"}
    trace = analyze_bytes(orjson.dumps([*events[:-1], closing, state]), filename="e.json")
    assert len(trace.calls) == len(halted.calls) + 1
    last = trace.calls[-1]
    assert (last.model, last.usage) == (halted.calls[-1].model, None)
    assert last.extra["agent_states"] == ["awaiting_user_input"]
    assert build_report(trace)["outcome"]["kind"] == "finished"


def test_golden_events():
    trace = analyze_bytes(golden_input("openhands-events/events.json"), filename="events.json")
    assert_golden("openhands-events/events.report.json", build_report(trace))
    run, read1, read2, finish = trace.tool_runs
    assert run.is_error  # exit code 1
    assert (read1.batch_size, read2.batch_size) == (2, 2) and read2.call == read1.call
    assert finish.status == "dangling"
    assert trace.calls[0].extra["agent_states"] == ["running"]


def test_non_zero_exit_codes_and_error_observations_are_error_results():
    events = orjson.loads(golden_input("openhands-events/events.json"))
    events[3]["extras"]["metadata"]["exit_code"] = 0
    events[7]["observation"] = "error"
    trace = analyze_bytes(orjson.dumps(events), filename="e.json")
    assert [r.is_error for r in trace.tool_runs] == [False, True, False, False]


def test_detection_and_malformed_events():
    events = orjson.loads(golden_input("openhands-events/events.json"))
    assert detect([events]).adapter.name == "openhands-events"
    events.insert(2, {"id": 99, "note": "not an event"})
    events[6]["tool_call_metadata"]["model_response"] = "gone"
    trace = analyze_bytes(orjson.dumps(events), filename="e.json")
    messages = {e.line: e.message for e in trace.line_errors}
    assert "not an OpenHands event" in messages[3]
    assert "without a model_response id" in messages[7]
    # the batch's other action repeats the response id: the call is read from it
    assert [c.extra["response_id"] for c in trace.calls] == [
        "chatcmpl-r1",
        "chatcmpl-r2",
        "chatcmpl-r3",
    ]


def test_one_event_per_line_reads_like_the_list():
    events = orjson.loads(golden_input("openhands-events/events.json"))
    lines = b"\n".join(orjson.dumps(e) for e in events)
    from_lines = build_report(analyze_bytes(lines, filename="e.jsonl"))
    from_list = build_report(analyze_bytes(orjson.dumps(events), filename="e.json"))
    assert from_lines["tool_runs"] == from_list["tool_runs"]


def test_rules_see_finish_as_the_end_of_the_loop():
    trace = analyze_bytes(golden_input("openhands-events/events.json"))
    rules = {f.rule for f in run_rules(trace, account(trace))}
    assert "dangling-tool-call" not in rules


def test_odd_fields_never_crash():
    events = [
        {"id": 0, "source": "user", "action": "message", "args": "x", "timestamp": 5},
        {"id": 1, "source": "agent", "action": "run", "tool_call_metadata": "x", "timestamp": None},
        {
            "id": 2,
            "source": "agent",
            "action": "run",
            "timestamp": "2025-01-01T00:00:00",
            "tool_call_metadata": {
                "tool_call_id": 7,
                "model_response": {"id": "r", "choices": "x"},
            },
        },
        {
            "id": 3,
            "source": "agent",
            "observation": "run",
            "cause": 2,
            "content": None,
            "extras": {"metadata": {"exit_code": "1"}},
        },
        {"id": 4, "source": "agent", "observation": "run", "cause": [], "extras": "x"},
    ]
    trace = analyze_bytes(orjson.dumps(events), filename="odd.json")
    assert len(trace.calls) == 1 and [r.id for r in trace.tool_runs] == ["7"]
    build_report(trace)
