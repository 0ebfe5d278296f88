"""OpenHands SDK / CLI v1 conversations (`openhands-sdk`): the folder, its order, odd input.

The golden input tests/golden/openhands-sdk/events.jsonl is hand-written following the
shape of the real events of ../shared/agents/openhands_sdk_conversations (SOURCES.md
section 24): the same kinds and fields, made-up content, with a parallel batch, an exit
code, an AgentErrorEvent and a finish.
"""

from __future__ import annotations

import random

import orjson
import pytest

from tests.core.test_corpus_counts import corpus_counts
from tests.golden import assert_golden, golden_input
from traces.core.analysis.ingest import analyze_bytes, analyze_files
from traces.core.outputs.report import build_report
from traces.core.reading.formats.detect import detect
from traces.core.reading.limits import InputRejected, NotATrace

FOLDER = "openhands_sdk_conversations"
CONVERSATION = "cd94562403b9487ebdd4018e3f531dfd"


def _folder(agents) -> list[tuple[str, bytes]]:
    root = agents / FOLDER / CONVERSATION
    paths = sorted(p for p in root.rglob("*") if p.is_file())
    return [(str(p.relative_to(root)), p.read_bytes()) for p in paths]


def _golden_events() -> list[dict]:
    return [orjson.loads(line) for line in golden_input("openhands-sdk/events.jsonl").splitlines()]


def _as_folder(events: list[dict], base_state: dict | None = None) -> list[tuple[str, bytes]]:
    files = [
        (f"events/event-{n:05d}-{e['id']}.json", orjson.dumps(e)) for n, e in enumerate(events)
    ]
    if base_state is not None:
        files.insert(0, ("base_state.json", orjson.dumps(base_state)))
    return files


BASE_STATE = {
    "id": "conv-1",
    "agent": {"llm": {"model": "openai/gpt-4o-mini", "api_key": "**********"}, "kind": "Agent"},
    "workspace": {"working_dir": "/work/demo", "kind": "LocalWorkspace"},
    "execution_status": "finished",
    "stats": {
        "usage_to_metrics": {
            "agent": {
                "token_usages": [
                    {"prompt_tokens": 1000, "completion_tokens": 40, "cache_read_tokens": 0,
                     "response_id": "resp-1"},
                    {"prompt_tokens": 1100, "completion_tokens": 10, "cache_read_tokens": 900,
                     "response_id": "resp-2"},
                ],
                "costs": [{"cost": 0.25}, {"cost": 0.5}],
                "response_latencies": [{"latency": 1.5, "response_id": "resp-1"}],
            }
        }
    },
}  # fmt: skip


# -- corpus -----------------------------------------------------------------------------
@pytest.mark.corpus
def test_every_corpus_file_is_detected_as_openhands_sdk(agents):
    for name, data in _folder(agents):
        assert detect([orjson.loads(data)]).adapter.name == "openhands-sdk", name
    lines = (agents / FOLDER / "goal-fixture_events.jsonl").read_bytes().splitlines()
    assert detect([orjson.loads(line) for line in lines]).adapter.name == "openhands-sdk"


@pytest.mark.corpus
def test_folder_reads_usage_cost_and_session_from_base_state(agents):
    trace = analyze_files(_folder(agents))
    first, second, third = trace.calls
    assert first.model == "openai/gpt-4o-mini"
    assert (first.usage.input_tokens, first.usage.output_tokens) == (3778, 36)
    # prompt_tokens 3869 include the 3712 cache reads
    assert (second.usage.input_tokens, second.usage.cache_read_tokens) == (157, 3712)
    assert first.extra["recorded_cost_usd"] == pytest.approx(0.0005883)
    assert first.duration_s == pytest.approx(1.827, abs=0.001)
    assert first.extra["agent_session"] == {
        "agent": "OpenHands",
        "session_id": "cd945624-03b9-487e-bdd4-018e3f531dfd",
        "project": "/workspace/project/software-agent-sdk",
    }
    assert [c.tool_call_ids for c in trace.calls] == [
        ("call_KaQ0kUcBb5tbMzhxbIx9dvoZ",),
        ("call_HhojVstik9LFNxVlLTgV0iIA",),
        (),
    ]
    assert third.message_count == 6 and third.stop_reason == "end_turn"
    assert [t["name"] for t in first.tools] == ["terminal", "finish", "think"]
    assert not any(c.tokens_estimated for c in trace.calls)


@pytest.mark.corpus
def test_folder_in_any_order_reads_the_same(agents):
    files = _folder(agents)
    expected = corpus_counts(build_report(analyze_files(files)))
    shuffled = list(files)
    random.Random(7).shuffle(shuffled)
    trace = analyze_files(shuffled)
    assert corpus_counts(build_report(trace)) == expected
    assert [c.message_count for c in trace.calls] == [1, 3, 6]


@pytest.mark.corpus
def test_base_state_alone_says_upload_the_folder(agents):
    (base,) = [f for f in _folder(agents) if f[0] == "base_state.json"]
    with pytest.raises(NotATrace, match=r"stats of 3 responses.*whole conversation folder"):
        analyze_files([base])


@pytest.mark.corpus
def test_jsonl_excerpt_has_an_orphan_and_estimated_tokens(agents):
    path = agents / FOLDER / "goal-fixture_events.jsonl"
    trace = analyze_bytes(path.read_bytes(), filename=path.name)
    assert [r.status for r in trace.tool_runs].count("orphan") == 1
    assert all(c.tokens_estimated and c.usage is None for c in trace.calls)
    assert trace.calls[0].model == "litellm_proxy/minimax-m2.7"
    assert trace.calls[0].response.blocks[0].kind == "thinking"


# -- golden -----------------------------------------------------------------------------
def test_golden_events():
    trace = analyze_bytes(golden_input("openhands-sdk/events.jsonl"), filename="events.jsonl")
    assert_golden("openhands-sdk/events.report.json", build_report(trace))


def test_parallel_actions_are_one_call_and_errors_are_flagged():
    trace = analyze_bytes(golden_input("openhands-sdk/events.jsonl"), filename="events.jsonl")
    assert [c.tool_call_ids for c in trace.calls] == [
        ("call_a", "call_b"),
        ("call_c",),
        ("call_d",),
    ]
    runs = {r.id: r for r in trace.tool_runs}
    assert not runs["call_a"].is_error
    assert runs["call_b"].is_error  # exit code 2
    assert runs["call_c"].is_error and runs["call_c"].result_text.startswith("The terminal")
    assert runs["call_d"].status == "paired"  # finish is answered in the SDK
    assert trace.calls[1].extra["accumulated_usage"]["agent"]["prompt_tokens"] == 1200
    assert "state_updates" not in trace.calls[2].extra  # the stats update is kept apart


def test_folder_given_backwards_is_read_in_sequence_order():
    events = _golden_events()
    files = _as_folder(events, BASE_STATE)
    trace = analyze_files([files[0], *reversed(files[1:])])
    assert [c.tool_call_ids for c in trace.calls] == [
        ("call_a", "call_b"),
        ("call_c",),
        ("call_d",),
    ]
    first, second, third = trace.calls
    assert first.usage.input_tokens == 1000 and first.extra["recorded_cost_usd"] == 0.25
    assert (second.usage.input_tokens, second.usage.cache_read_tokens) == (200, 900)
    assert third.usage is None and third.tokens_estimated
    assert first.started_at == pytest.approx(first.ended_at - 1.5)
    assert first.extra["agent_session"]["project"] == "/work/demo"


# -- odd input --------------------------------------------------------------------------
def test_malformed_events_are_reported_and_the_rest_read():
    events: list = _golden_events()
    events[4] = {**events[4], "observation": "gone"}
    events[7] = {k: v for k, v in events[7].items() if k not in ("tool_call_id", "tool_call")}
    events.insert(2, {"kind": "MessageEvent"})
    events.insert(3, [1, 2])
    lines = [orjson.dumps(e) for e in events]
    lines.insert(5, lines.pop(5)[:40])  # a truncated line
    trace = analyze_bytes(b"\n".join(lines) + b"\n", filename="events.jsonl")
    errors = {e.line: e.message for e in trace.line_errors}
    assert "not an OpenHands SDK event" in errors[3]
    assert 4 in errors and 6 in errors  # the list, and the truncated line
    assert "without an observation object" in errors[7]
    assert "without a tool_call_id" in errors[10]
    assert len(trace.calls) == 3
    assert {r.id for r in trace.tool_runs} >= {"call_a", "call_d"}


def test_wrong_types_never_raise():
    events: list = _golden_events()
    events[0]["tools"] = "many"
    events[1]["llm_message"] = 3
    events[2]["tool_call"]["arguments"] = "{not json"
    events[6]["value"] = [1]
    trace = analyze_bytes(b"\n".join(orjson.dumps(e) for e in events), filename="events.jsonl")
    assert len(trace.calls) == 3 and trace.calls[0].tools == ()


def test_only_system_prompt_is_not_a_trace():
    events = _golden_events()[:2]
    with pytest.raises(InputRejected, match="no agent response"):
        analyze_bytes(b"\n".join(orjson.dumps(e) for e in events), filename="events.jsonl")


def test_a_run_ending_on_finish_reads_as_finished_and_results_as_one_batch():
    trace = analyze_bytes(golden_input("openhands-sdk/events.jsonl"), filename="events.jsonl")
    report = build_report(trace)
    assert report["outcome"]["kind"] == "finished"
    assert trace.calls[2].extra["terminal_tool_ids"] == ["call_d"]
    assert [m.role for m in trace.calls[1].appended] == ["assistant", "tool", "tool"]
    assert not [f for f in report["findings"] if f["rule"] == "split-parallel-results"]
