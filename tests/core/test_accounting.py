"""Token accounting reproduces the seeds' worked examples; costs follow the price table."""

from __future__ import annotations

import orjson
import pytest

from tests.core.builders import log, pair, response, tool_result, tool_use, user
from traces.core.analysis.accounting import account
from traces.core.analysis.ingest import analyze_bytes
from traces.core.analysis.pricing import Price, library_table, load_overrides
from traces.core.outputs.report import build_report
from traces.core.reading.sample import sample_bytes


def test_calendar_task_reproduces_the_seed_to_the_token():
    trace = analyze_bytes(sample_bytes())
    accounting = account(trace)
    per_call = [c.buckets.as_dict() for c in accounting.calls]
    assert per_call == [
        {"prefix": 800, "tool_results": 0, "replayed_output": 0, "other": 0},
        {"prefix": 800, "tool_results": 400, "replayed_output": 60, "other": 0},
        {"prefix": 800, "tool_results": 1000, "replayed_output": 180, "other": 0},
        {"prefix": 800, "tool_results": 1060, "replayed_output": 260, "other": 0},
    ]
    totals = accounting.buckets
    assert (totals.prefix, totals.tool_results, totals.replayed_output) == (3200, 2460, 500)
    assert totals.total == 6160
    assert sum(c.output_tokens for c in accounting.calls) == 340
    assert all(c.tokens_exact for c in accounting.calls)
    # The eight free slots: one result of 400 tokens carried by the three later requests.
    slots = accounting.results[0]
    assert (slots.result_tokens, slots.requests_carrying, slots.resend_tokens) == (400, 3, 1200)
    assert slots.tokens_exact


def test_calendar_costs_at_the_seed_prices():
    trace = analyze_bytes(sample_bytes())
    table = library_table().merged(
        load_overrides(
            b'{"claude-sonnet-4-5": {"input": 3, "output": 15, '
            b'"cache_write": 3.75, "cache_read": 0.3}}'
        )
    )
    costs = account(trace, table).cost_totals()
    # 6,160 x $3/M + 340 x $15/M; nothing was cached, so actual = uncached.
    assert costs["actual"] == costs["uncached"] == pytest.approx(0.02358)
    # Prefix cached: written once (800 x 3.75), read on three calls (800 x 0.3 each).
    expected = (800 * 3.75 + 3 * 800 * 0.3 + (6160 - 3200) * 3 + 340 * 15) / 1e6
    assert costs["prefix_cached"] == pytest.approx(expected)


def test_a_900_token_result_carried_by_nine_requests_costs_8100():
    """The seed's Sundry example: a 900-token result on turn 3 of a twelve-turn run."""
    messages = [user("Where is my order SU-88421?")]
    lines = []
    input_tokens = 1000
    for turn in range(1, 13):
        last = turn == 12
        content = [{"type": "text", "text": f"step {turn}"}]
        if not last:
            content.append(tool_use(f"t{turn}", name="get_order", order=f"SU-{turn}"))
        resp = response(content, "end_turn" if last else "tool_use", input_tokens, 10)
        lines.append(pair(list(messages), resp))
        result_tokens = 900 if turn == 3 else 20
        messages += [
            {"role": "assistant", "content": content},
            {"role": "user", "content": [tool_result(f"t{turn}", "x " * result_tokens)]},
        ]
        input_tokens += 10 + result_tokens
    trace = analyze_bytes(log(*lines))
    accounting = account(trace)
    order = next(accounting.results[p] for p, run in enumerate(trace.tool_runs) if run.id == "t3")
    assert (order.result_tokens, order.requests_carrying, order.resend_tokens) == (900, 9, 8100)


def test_unknown_models_have_tokens_but_no_cost():
    q = [user("hi")]
    resp = response([{"type": "text", "text": "hello"}], "end_turn")
    resp["model"] = "acme-llm-7"
    body = {"model": "acme-llm-7", "messages": q}
    trace = analyze_bytes(orjson.dumps({"request": body, "response": resp}))
    report = build_report(trace)
    assert report["calls"][0]["cost_usd"] is None
    assert report["totals"]["cost_usd"] == {"actual": None, "uncached": None, "prefix_cached": None}
    assert report["accounting"]["unpriced_models"] == ["acme-llm-7"]
    assert report["totals"]["buckets"]["prefix"] == 100


@pytest.mark.parametrize(
    "model, family",
    [
        ("claude-sonnet-4-20250514", "claude-sonnet-4-0"),  # the library's id
        ("anthropic/claude-sonnet-4-5", "claude-sonnet-4-5"),
        ("anthropic.claude-haiku-4-5-20251001-v1:0", "claude-haiku-4-5"),
        ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
        ("openai/gpt-4o-mini", "gpt-4o-mini"),
    ],
)
def test_dated_and_prefixed_model_names_find_their_family(model, family):
    found = library_table().lookup(model)
    assert found is not None and found[0] == family


def test_cache_reads_and_writes_are_priced_separately():
    from traces.core.analysis.pricing import call_cost
    from traces.core.model import Usage

    price = Price(input=3.0, output=15.0, cache_write=3.75, cache_read=0.3, cache_write_1h=6.0)
    usage = Usage(
        input_tokens=100,
        output_tokens=50,
        cache_read_tokens=10_000,
        cache_write_tokens=2_000,
        cache_write_1h_tokens=500,
    )
    expected = (100 * 3 + 1500 * 3.75 + 500 * 6 + 10_000 * 0.3 + 50 * 15) / 1e6
    assert call_cost(usage, price) == pytest.approx(expected)


def test_without_usage_tokens_are_estimated_and_marked():
    q = [user("Summarise the quarterly report in three bullet points, please.")]
    resp = response([{"type": "text", "text": "- one\n- two\n- three"}], "end_turn")
    resp.pop("usage")
    trace = analyze_bytes(log(pair(q, resp, system="You are terse.")))
    call = account(trace).calls[0]
    assert not call.tokens_exact
    assert call.buckets.prefix > 10  # system + tools + the user message, by tiktoken
    assert account(trace).estimated_calls == 1


def test_a_rewritten_history_is_estimated_then_scaled_to_the_reported_total():
    q = [user("start")]
    r1 = response([tool_use("t1", path="a")], "tool_use", 500, 20)
    echo = {"role": "assistant", "content": r1["content"]}
    results = {"role": "user", "content": [tool_result("t1", "A" * 400)]}
    r2 = response([{"type": "text", "text": "ok"}], "end_turn", 700, 5)
    rewritten = [*q, user("summary: read file a, it held As"), user("go on")]
    r3 = response([{"type": "text", "text": "more"}], "end_turn", 650, 5)
    trace = analyze_bytes(log(pair(q, r1), pair([*q, echo, results], r2), pair(rewritten, r3)))
    third = account(trace).calls[2]
    assert trace.calls[2].history_rewritten
    assert not third.tokens_exact
    assert third.buckets.total == 650  # scaled to what the API reported
    assert third.residual != 0
