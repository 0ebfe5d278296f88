"""The message-list adapter on tau-bench and SWE-agent transcripts, and hand-written lists.

Corpus counts were verified independently of the adapter: the tests below re-read each
file with `json` and count assistant messages, `tool_calls`, tool messages and reused ids
themselves, then compare with the rebuilt trace (SOURCES.md sections 8 and 9 state the
same numbers).
"""

from __future__ import annotations

import json
from collections import Counter

import orjson
import pytest

from tests.conftest import corpus_files, corpus_id
from tests.golden import assert_golden, golden_input
from traces.core.analysis.ingest import analyze_bytes
from traces.core.analysis.pairing import RESULT_TEXT_CHARS
from traces.core.outputs.report import build_report
from traces.core.reading.formats.message_list import MessageListAdapter, normalize_message

TAU = "tau_bench_messages/gpt-4o-airline.first50records.json"
SWE = "swe_agent_traj"


# -- tau-bench -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tau_records(corpus):
    return json.loads((corpus / TAU).read_bytes())


@pytest.fixture(scope="module")
def tau(corpus):
    return analyze_bytes((corpus / TAU).read_bytes(), filename=TAU)


def test_tau_bench_every_assistant_message_is_one_call(tau, tau_records):
    assert tau.format == "message-list"
    assert not tau.line_errors
    assistant = sum(1 for r in tau_records for m in r["traj"] if m["role"] == "assistant")
    assert assistant == len(tau.calls) == 642
    assert len(tau.loops) == 50
    assert [loop.label for loop in tau.loops[:2]] == ["task 0 trial 0", "task 1 trial 0"]
    assert all(c.tokens_estimated and c.usage is None for c in tau.calls)
    # Within a loop each call's request extends the previous one, never rewrites it.
    for loop in tau.loops:
        calls = [tau.calls[i - 1] for i in loop.calls]
        assert not calls[0].extends_previous
        assert all(c.extends_previous and not c.history_rewritten for c in calls[1:])
    both = sum(
        1
        for c in tau.calls
        if c.response.tool_uses and any(b.kind == "text" for b in c.response.blocks)
    )
    assert both == 22


def test_tau_bench_request_is_everything_before_the_reply(tau, tau_records):
    first_loop = [tau.calls[i - 1] for i in tau.loops[0].calls]
    traj = tau_records[0]["traj"]
    indexes = [i for i, m in enumerate(traj) if m["role"] == "assistant"]
    assert [c.message_count for c in first_loop] == indexes
    assert first_loop[0].system == traj[0]["content"]
    assert first_loop[0].extra["task_id"] == 0 and "reward" in first_loop[0].extra
    assert "task_id" not in first_loop[1].extra


def test_tau_bench_tool_runs_and_errors(tau, tau_records):
    calls = sum(len(m.get("tool_calls") or []) for r in tau_records for m in r["traj"])
    errors = sum(
        1
        for r in tau_records
        for m in r["traj"]
        if m["role"] == "tool" and (m["content"] or "").startswith("Error")
    )
    assert calls == len(tau.tool_runs) == 282
    assert errors == sum(run.is_error for run in tau.tool_runs) == 17
    assert all(run.batch_size == 1 for run in tau.tool_runs)


def test_tau_bench_reused_ids_pair_by_position(tau, tau_records):
    """11 records reuse a tool_call_id; every result still pairs with the call just before."""
    reusing = 0
    reused_calls = 0
    for record in tau_records:
        ids = [c["id"] for m in record["traj"] for c in (m.get("tool_calls") or [])]
        reused_calls += len(ids) - len(set(ids))
        reusing += len(ids) != len(set(ids))
    assert reusing == len({c.loop for c in tau.id_collisions}) == 11
    assert reused_calls == len(tau.id_collisions) == 17
    for loop, record in zip(tau.loops, tau_records, strict=True):
        traj = record["traj"]
        expected = [
            (m["tool_calls"][0]["function"]["name"], traj[i + 1]["content"])
            for i, m in enumerate(traj)
            if m.get("tool_calls") and i + 1 < len(traj)
        ]
        runs = sorted((r for r in tau.tool_runs if r.loop == loop.index), key=lambda r: r.call)
        paired = [(r.name, r.result_text) for r in runs]
        assert paired == [(n, t[:RESULT_TEXT_CHARS]) for n, t in expected]
        assert all(r.result_call in (r.call + 1, None) for r in runs)


def test_tau_bench_task_0_reuses_one_id_for_two_searches(tau):
    runs = [r for r in tau.tool_runs if r.id == "call_HGn16KZh9oNCruxsMJ4gYXan"]
    assert [r.name for r in runs] == ["search_direct_flight", "search_onestop_flight"]
    assert [r.status for r in runs] == ["paired", "paired"]
    # The first search's result arrived before the second search was asked for.
    assert runs[0].call < runs[0].result_call < runs[1].call < runs[1].result_call
    assert runs[0].result_text.startswith('[{"flight_number": "HAT069"')
    assert runs[1].result_text.startswith("[[{")
    collision = next(c for c in tau.id_collisions if c.tool_id == runs[0].id)
    assert (collision.first_call, collision.second_call) == (runs[0].call, runs[1].call)


def test_tau_bench_trajectories_ending_on_a_tool_message(tau, tau_records):
    """10 records end on a tool result that no later call re-sends. The call has its
    result, so it is paired (with no result call), not dangling."""
    ending = [r["task_id"] for r in tau_records if r["traj"][-1]["role"] == "tool"]
    assert ending == [4, 18, 28, 30, 33, 37, 38, 40, 42, 48]
    assert not [r for r in tau.tool_runs if r.status != "paired"]
    unsent = [r for r in tau.tool_runs if r.result_call is None]
    assert len(unsent) == 10
    for run, task in zip(unsent, ending, strict=True):
        loop = tau.loops[run.loop - 1]
        assert loop.label == f"task {task} trial 0"
        last = tau.calls[loop.calls[-1] - 1]
        assert run.call == last.index and last.stop_reason == "tool_use"
        assert last.extra["transcript_tail"] == {"messages": 1, "tool_result_ids": [run.id]}
        assert run.result_text == tau_records[task]["traj"][-1]["content"]
    names = Counter(r.name for r in unsent)
    assert names == {"transfer_to_human_agents": 9, "search_direct_flight": 1}


# -- SWE-agent -------------------------------------------------------------------------
SWE_EXPECTED = {
    # file: (calls, tool runs, results re-sent, results after the last call, collisions,
    # model). Counted with json: assistant messages (not is_demo), tool_calls, tool
    # messages and tool_call_ids; the last tool message of a function-calling run (the
    # submit result) follows the last assistant message, so no request carries it.
    "function_calling_simple.traj": (5, 5, 4, 1, 0, None),
    # The replay reuses ids: 11 tool calls carry 8 distinct ids (call_5iDd... 4 times,
    # call_ahTo... and call_q3Vs... twice each), hence 5 collisions.
    "marshmallow-1867__function_calling_replace.traj": (11, 11, 10, 1, 5, "gpt-4o"),
    "pydicom__pydicom-1458__gpt4_text_actions.traj": (12, 0, 0, 0, 0, None),
    "ctf_crypto_eps.traj": (14, 0, 0, 0, 0, None),
}


@pytest.mark.parametrize("path", corpus_files(SWE), ids=corpus_id)
def test_swe_agent_trajectories(path):
    trace = analyze_bytes(path.read_bytes(), filename=path.name)
    document = json.loads(path.read_bytes())
    calls, runs, resent, unsent, collisions, model = SWE_EXPECTED[path.name]
    assert trace.format == "message-list" and not trace.line_errors
    assistant = [m for m in document["history"] if m["role"] == "assistant"]
    assert len(assistant) == len(trace.calls) == calls
    assert len(trace.loops) == 1
    assert len(trace.tool_runs) == runs
    assert {r.status for r in trace.tool_runs} <= {"paired"}
    carried = Counter(r.result_call is not None for r in trace.tool_runs)
    assert (carried[True], carried[False]) == (resent, unsent)
    assert len(trace.id_collisions) == collisions
    assert {c.model for c in trace.calls} == {model}
    stats = document.get("info", {}).get("model_stats")
    first = trace.calls[0]
    assert first.extra.get("model_stats") == stats
    assert all("model_stats" not in c.extra for c in trace.calls[1:])


def test_swe_agent_tool_call_ids_list_pairs_results(corpus):
    path = corpus / SWE / "function_calling_simple.traj"
    trace = analyze_bytes(path.read_bytes(), filename=path.name)
    document = json.loads(path.read_bytes())
    result_ids = [m["tool_call_ids"] for m in document["history"] if m["role"] == "tool"]
    assert all(isinstance(ids, list) and len(ids) == 1 for ids in result_ids)
    assert [r.id for r in trace.tool_runs] == [ids[0] for ids in result_ids]
    submit = trace.tool_runs[-1]
    assert (submit.name, submit.status, submit.result_call) == ("submit", "paired", None)
    assert submit.result_text.startswith("\r\ndiff --git a/tests/missing_colon.py")
    assert trace.tool_runs[0].result_text.startswith('Found 1 matches for "missing_colon.py"')


def test_swe_agent_text_actions_with_a_pasted_demonstration(corpus):
    path = corpus / SWE / "pydicom__pydicom-1458__gpt4_text_actions.traj"
    trace = analyze_bytes(path.read_bytes(), filename=path.name)
    first = trace.calls[0]
    # system prompt, the is_demo demonstration and the issue precede the first reply.
    assert first.message_count == 3
    assert first.appended_raw[1]["is_demo"] is True
    assert first.extra["model_stats"]["tokens_sent"] == 122_612
    assert first.extra["model_stats"]["api_calls"] == len(trace.calls) == 12
    assert not trace.tool_runs
    assert all(c.stop_reason == "end_turn" for c in trace.calls)


def test_swe_agent_steps_give_each_call_its_execution_time(corpus):
    path = corpus / SWE / "marshmallow-1867__function_calling_replace.traj"
    trace = analyze_bytes(path.read_bytes(), filename=path.name)
    steps = json.loads(path.read_bytes())["trajectory"]
    times = [c.extra["step"]["execution_time"] for c in trace.calls]
    assert times == [s["execution_time"] for s in steps]
    assert "observation" not in trace.calls[0].extra["step"]


# -- hand-written cases ----------------------------------------------------------------
def test_mixed_dialects_golden():
    trace = analyze_bytes(golden_input("message-list/mixed_dialects.jsonl"))
    report = build_report(trace)
    assert_golden("message-list/mixed_dialects.report.json", report)
    assert trace.format == "message-list"
    # Line 2 repeats line 1's conversation grown by one turn: only the new calls count.
    assert [c.line for c in trace.calls] == [1, 1, 2, 2, 3, 3]
    assert trace.loops[0].calls == (1, 2, 3, 4)
    assert [(e.line, e.message[:30]) for e in trace.line_errors] == [
        (4, "cut off mid-record (the JSON e"),
        (5, "no message list found (expecte"),
        (6, "'messages' is not a list"),
        (7, "the transcript holds no assist"),
    ]
    runs = {r.id: r for r in trace.tool_runs}
    assert runs["call_B "].status == "paired"  # the stray space is part of the id
    assert runs["call_B "].input == '{"city": "Paris"'  # malformed arguments kept as text
    assert runs["call_A"].is_error and runs["toolu_1"].is_error
    assert trace.calls[0].system == "You are a travel agent."
    assert trace.calls[0].extra["id"] == "conv-1"
    assert [b.kind for b in trace.calls[4].response.blocks] == ["thinking", "tool_use"]


def test_one_message_per_record_golden():
    trace = analyze_bytes(golden_input("message-list/one_message_per_item.json"))
    assert_golden("message-list/one_message_per_item.report.json", build_report(trace))
    # The demonstration's assistant message is pasted context, not a model call.
    assert len(trace.calls) == 2
    assert [c.message_count for c in trace.calls] == [4, 6]
    assert trace.calls[1].ended_at == 1735787049.0


def test_messages_split_over_lines_and_bad_lines():
    lines = [
        b'{"role": "user", "content": "hi"}',
        b'{"role": "assistant", "content": "hello"',
        b'{"role": "robot", "content": "beep"}',
        b'{"role": "assistant", "content": "how can I help?"}',
        b"42",
    ]
    trace = analyze_bytes(b"\n".join(lines))
    assert trace.format == "message-list"
    assert len(trace.calls) == 1 and trace.calls[0].line == 4
    assert trace.calls[0].message_count == 1
    assert [e.line for e in trace.line_errors] == [2, 3, 5]
    assert "unknown message role 'robot'" in trace.line_errors[1].message


# -- sniffing --------------------------------------------------------------------------
@pytest.mark.parametrize(
    "values",
    [
        [{"request": {"messages": [{"role": "user", "content": "x"}]}, "response": {}}],
        [{"type": "user", "message": {"role": "user", "content": "x"}, "uuid": "u1"}],
        [{"type": "message", "role": "assistant", "content": [], "id": "msg_1"}],
        [{"timestamp": "t", "type": "response_item", "payload": {"role": "user"}}],
        [{"messages": []}],
        [[1, 2, 3]],
    ],
)
def test_sniff_leaves_other_formats_alone(values):
    claim = MessageListAdapter.sniff(values)
    assert claim is None or claim.score < 0.5


def test_sniff_scores_stay_below_request_log_adapters():
    message = {"role": "user", "content": "x"}
    assert MessageListAdapter.sniff([{"traj": [message], "task_id": 1}]).score == 0.7
    assert MessageListAdapter.sniff([{"history": [message]}]).score == 0.7
    assert MessageListAdapter.sniff([{"messages": [message]}]).score == 0.6
    assert MessageListAdapter.sniff([[message]]).score == 0.6
    request_body = {"model": "gpt-4o", "messages": [message]}
    assert MessageListAdapter.sniff([request_body]).score == 0.4
    assert MessageListAdapter.sniff([message, {"role": "assistant", "content": "y"}]).score == 0.5


# -- normalising -----------------------------------------------------------------------
def test_normalize_reads_openai_and_anthropic_messages():
    openai = normalize_message(
        {
            "role": "assistant",
            "reasoning_content": "think",
            "content": [{"type": "output_text", "text": "a"}, {"type": "image_url"}],
            "tool_calls": [{"id": " x", "function": {"name": "f", "arguments": "[1]"}}],
        }
    )
    assert [b.kind for b in openai.blocks] == ["thinking", "text", "image", "tool_use"]
    assert openai.tool_uses[0].tool_id == " x" and openai.tool_uses[0].input == [1]
    swe = normalize_message({"role": "tool", "content": "ok", "tool_call_ids": ["a", "b"]})
    assert [b.tool_id for b in swe.tool_results] == ["a", "b"]
    assert not swe.tool_results[0].is_error
    flagged = normalize_message({"role": "tool", "tool_call_id": "a", "content": "Error: x"})
    assert flagged.tool_results[0].is_error
    explicit = normalize_message(
        {"role": "tool", "tool_call_id": "a", "content": "Error: x", "is_error": False}
    )
    assert not explicit.tool_results[0].is_error
    anthropic = normalize_message(
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "r"}]}
    )
    assert anthropic.tool_results[0].tool_id == "t"
    assert normalize_message("odd").role == "unknown"


def test_a_stream_of_messages_ending_on_a_tool_result():
    messages = [
        {"role": "user", "content": "run it"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "function": {}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "Error: exit 1"},
    ]
    trace = analyze_bytes(b"\n".join(orjson.dumps(m) for m in messages))
    (run,) = trace.tool_runs
    assert (run.status, run.call, run.result_call, run.is_error) == ("paired", 1, None, True)
    assert run.result_text == "Error: exit 1"


def test_system_and_developer_messages_make_the_system_prompt():
    line = [
        {"role": "system", "content": "Rule one."},
        {"role": "developer", "content": [{"type": "text", "text": "Rule two."}]},
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "done"},
    ]
    trace = analyze_bytes(orjson.dumps(line) + b"\n" + orjson.dumps(line[:2]))
    assert trace.calls[0].system == "Rule one.\n\nRule two."
    assert trace.calls[0].message_count == 3
    assert [e.line for e in trace.line_errors] == [2]  # no assistant message on line 2


def test_mini_swe_agent_messages_keep_their_response_usage_and_model():
    """mini-swe-agent 2 (`trajectory_format: mini-swe-agent-1.1`): each assistant message
    keeps its LiteLLM response in `extra.response` (Claude via LiteLLM: `prompt_tokens`
    counts cache reads and writes), its cost and time; the calls take them."""
    raw = golden_input("message-list/mini_swe_agent.traj.json")
    trace = analyze_bytes(raw, filename="demo__pages-1.traj.json")
    assert trace.format == "message-list" and len(trace.calls) == 4
    assert {c.model for c in trace.calls} == {"claude-sonnet-4-5-20250929"}
    first, second = trace.calls[0].usage, trace.calls[1].usage
    assert (first.input_tokens, first.cache_write_tokens, first.output_tokens) == (4, 1830, 41)
    assert (second.input_tokens, second.cache_read_tokens) == (92, 1830)
    assert not any(c.tokens_estimated for c in trace.calls)
    assert [c.extra["recorded_cost_usd"] for c in trace.calls] == [0.012, 0.0017, 0.0019, 0.0015]
    assert [c.ended_at for c in trace.calls] == [
        1761000000.5,
        1761000007.5,
        1761000014.5,
        1761000021.5,
    ]
    assert trace.calls[0].extra["response_id"] == "chatcmpl-mini-0"
    report = build_report(trace)
    assert report["calls"][0]["input_tokens"] == 4  # read, not estimated
    assert_golden("message-list/mini_swe_agent.report.json", report)


def test_a_message_list_without_responses_still_estimates():
    raw = orjson.loads(golden_input("message-list/mini_swe_agent.traj.json"))
    for message in raw["messages"]:
        message.pop("extra", None)
    trace = analyze_bytes(orjson.dumps(raw), filename="bare.traj.json")
    assert all(c.usage is None and c.tokens_estimated for c in trace.calls)
    # the configured model stands in for the one each response would have named
    assert {c.model for c in trace.calls} == {"anthropic/claude-sonnet-4-5-20250929"}
