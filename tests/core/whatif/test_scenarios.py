"""Each scenario on its own: clearing after K, unused definitions, parameters, series, and
never a saving that cannot be computed."""

from __future__ import annotations

import orjson
import pytest

from tests.core.builders import log, pair, response, tool_result, tool_use, user
from tests.core.rules.lint import echo, request_pair, results, text
from tests.core.whatif.test_seeds import scenario
from tests.core.whatif.traces import sundry_run
from traces.core.analysis.ingest import analyze_bytes
from traces.core.analysis.rules.oversized_tool_result import OversizedToolResult
from traces.core.analysis.whatif import (
    OVERSIZED_THRESHOLD,
    basis_from_report,
    build_series,
    build_what_if,
    parse_caps,
    parse_params,
)
from traces.core.outputs.report import build_report


@pytest.fixture(scope="module")
def sundry():
    return build_report(analyze_bytes(sundry_run()))


def test_clearing_after_k_replaces_old_results_with_a_placeholder(sundry):
    placeholder = sundry["what_if"]["inputs"]["placeholder_tokens"]
    clear = scenario(build_what_if(sundry, {"clear_after": "3"}), "clear-old-results")
    order = next(item for item in clear["items"] if item["tool"] == "get_order")
    # Arrives in request 4, kept by 4, 5 and 6, cleared in the six requests 7..12.
    assert order["cleared_from_call"] == 7 and order["requests_cleared"] == 6
    assert order["tokens_saved"] == (900 - placeholder) * 6
    assert order["usd_saved"] == pytest.approx(order["tokens_saved"] * 3 / 1e6)
    assert clear["parameters"] == {"clear_after": 3, "placeholder_tokens": placeholder}
    # A larger K clears less; K beyond the loop clears nothing.
    later = scenario(build_what_if(sundry, {"clear_after": "8"}), "clear-old-results")
    order = next(item for item in later["items"] if item["tool"] == "get_order")
    assert order["tokens_saved"] == (900 - placeholder) * 1
    assert later["tokens_saved"] == sum(item["tokens_saved"] for item in later["items"])
    never = scenario(build_what_if(sundry, {"clear_after": "20"}), "clear-old-results")
    assert never["tokens_saved"] == 0 and never["status"] == "none"


def test_blank_k_means_no_clearing(sundry):
    clear = scenario(build_what_if(sundry, {"clear_after": ""}), "clear-old-results")
    assert clear["tokens_saved"] == 0 and clear["parameters"]["clear_after"] is None


def test_unused_tool_definitions_times_the_calls_that_carried_them():
    tools = [
        {"name": "read_file", "description": "Read a file", "input_schema": {"type": "object"}},
        {"name": "deploy", "description": "Deploy to production " * 10, "input_schema": {}},
    ]
    q = [user("read a")]
    r1 = response([tool_use("t1", path="a")], "tool_use", 500, 10)
    r2 = response([text("done")], "end_turn", 530, 5)
    h2 = [*q, echo(r1), results(tool_result("t1", "contents"))]
    report = build_report(
        analyze_bytes(log(request_pair(q, r1, tools=tools), request_pair(h2, r2, tools=tools)))
    )
    (entry,) = report["what_if"]["inputs"]["unused_tools"]
    assert entry["name"] == "deploy" and entry["calls"] == [[1, 2]]
    unused = scenario(report["what_if"], "unused-tools")
    assert unused["items"][0]["calls_carrying"] == 2
    assert unused["tokens_saved"] == 2 * entry["tokens"] > 0
    assert not unused["exact"] and "estimates" in unused["notes"][0]


def test_without_usage_tokens_are_estimates_and_cache_gaps_unknown():
    q = [user("read a")]
    r1 = response([tool_use("t1", path="a")], "tool_use")
    r1.pop("usage")
    r2 = response([text("done")], "end_turn")
    r2.pop("usage")
    h2 = [*q, echo(r1), results(tool_result("t1", "A " * 2000))]
    h3_resp = response([text("more")], "end_turn")
    h3_resp.pop("usage")
    lines = [pair(q, r1), pair(h2, r2)]
    report = build_report(analyze_bytes(log(*lines)))
    what_if = build_what_if(report, {"cap:read_file": "100"})
    cap = scenario(what_if, "cap-results")
    assert cap["tokens_saved"] > 0 and not cap["exact"]
    assert any("estimates" in note for note in cap["notes"])
    assert all(
        s["text"].count("≈") for s in what_if["top_savings"] if s["scenario"] == "cap-results"
    )
    cache = scenario(what_if, "prompt-cache")
    assert cache["status"] == "unknown" and cache["usd_saved"] is None
    assert cache["prefix_cached_usd"] == {"5m": None, "1h": None}
    assert "call times not recorded" in cache["notes"][0]


def test_unpriced_models_have_token_savings_but_no_dollars():
    data = sundry_run().replace(b"claude-sonnet-4-5", b"acme-llm-7")
    report = build_report(analyze_bytes(data))
    what_if = build_what_if(report, {"cap:get_order": "340"})
    cap = scenario(what_if, "cap-results")
    assert cap["tokens_saved"] == 5_040
    assert cap["usd_saved"] is None and cap["usd_before"] is None
    assert any("no price for acme-llm-7" in note for note in cap["notes"])
    (order,) = [s for s in what_if["top_savings"] if s["scenario"] == "cap-results"]
    assert "dollars unknown" in order["text"] and "$" not in order["text"]


def test_without_tool_timings_concurrency_says_so():
    report = build_report(analyze_bytes(log(*_batch_lines())))
    concurrent = scenario(report["what_if"], "concurrent-tools")
    assert concurrent["status"] == "unknown" and concurrent["seconds_saved"] is None
    assert concurrent["items"][0]["timings"] == "missing"
    assert "no tool timings" in concurrent["notes"][-1]


def _batch_lines():
    q = [user("two files")]
    r1 = response([tool_use("a", path="a"), tool_use("b", path="b")], "tool_use")
    h2 = [*q, echo(r1), results(tool_result("a", "A"), tool_result("b", "B"))]
    return [pair(q, r1), pair(h2, response([text("ok")], "end_turn"))]


def test_parameters_parse_from_query_and_command_line(sundry):
    basis = basis_from_report(sundry)
    params = parse_params(
        basis, {"cap:get_order": "340", "clear_after": "5", "cache_lifetime": "1h"}
    )
    assert dict(params.caps) == {"get_order": 340}
    assert (params.clear_after, params.cache_lifetime) == (5, "1h")
    # Nonsense falls back to the defaults instead of failing.
    odd = parse_params(basis, {"clear_after": "soon", "cache_lifetime": "forever"})
    assert odd.clear_after is None and odd.cache_lifetime == "5m"
    assert parse_caps(["get_order=340", "search=1,000"]) == {"get_order": 340, "search": 1000}
    with pytest.raises(ValueError, match="TOOL=N"):
        parse_caps(["get_order"])


def test_the_suggested_cap_is_the_rule_threshold():
    assert OversizedToolResult.defaults["result_tokens"] == OVERSIZED_THRESHOLD


def test_series_put_the_simulated_run_beside_the_actual(sundry):
    basis = basis_from_report(sundry)
    params = parse_params(basis, {"cap:get_order": "340", "clear_after": "", "batch": "0"})
    series = build_series(basis, params)
    assert series.calls == list(range(1, 13))
    saved = [a - (s or 0) for a, s in zip(series.input_actual, series.input_simulated, strict=True)]
    unused = sum(t["tokens"] for t in sundry["what_if"]["inputs"]["unused_tools"])
    assert saved[:3] == [unused] * 3 and saved[3:] == [560 + unused] * 9
    assert series.cost_actual[-1] == pytest.approx(sundry["totals"]["cost_usd"]["actual"])
    assert series.cost_simulated[-1] < series.cost_actual[-1]
    assert series.cost_cached == [None] * 12  # no call times: the cache cannot be judged


def test_the_report_section_is_json_and_deterministic(sundry):
    again = build_report(analyze_bytes(sundry_run()))
    assert orjson.dumps(sundry["what_if"]) == orjson.dumps(again["what_if"])
    assert [s["id"] for s in sundry["what_if"]["scenarios"]] == [
        "cap-results",
        "batch-serial-calls",
        "concurrent-tools",
        "prompt-cache",
        "clear-old-results",
        "unused-tools",
    ]


def test_post_mortem_and_markdown_state_the_largest_savings_as_instructions(sundry):
    from traces.core.outputs.export_html import render_export
    from traces.core.outputs.export_md import render_markdown
    from traces.core.outputs.postmortem import build_postmortem

    report = dict(sundry, what_if=build_what_if(sundry, {"cap:get_order": "340"}))
    pm = build_postmortem(report, "sundry.jsonl")
    assert len(pm.savings) == 3
    dollars = [entry["usd_saved"] for entry in pm.savings]
    assert dollars == sorted(dollars, reverse=True)
    text = render_markdown(pm)
    assert "## What would have saved the most" in text
    assert "`cap get_order at 340 tokens`: saves 5,040 input tokens, $0.015 on this run" in text
    html = render_export(report, name="sundry.jsonl", css="")
    assert "<strong>cap get_order at 340 tokens</strong>: saves 5,040 input tokens" in html


def test_a_saving_on_priced_calls_stands_beside_an_unpriced_side_call():
    side = response([text("A title")], "end_turn", 50, 5)
    side["model"] = "acme-llm-7"
    line = pair([user("Title this conversation")], side, system="Titles.")
    line = line.replace(b'"model":"claude-sonnet-4-5"', b'"model":"acme-llm-7"')
    report = build_report(analyze_bytes(sundry_run() + line + b"\n"))
    assert report["accounting"]["unpriced_models"] == ["acme-llm-7"]
    cap = scenario(build_what_if(report, {"cap:get_order": "340"}), "cap-results")
    assert cap["usd_saved"] == pytest.approx(5_040 * 3 / 1e6)
    assert cap["usd_before"] is None and cap["percent_usd"] is None


def test_the_placeholder_size_is_its_tiktoken_count():
    from traces.core.analysis.tokens import TokenCounter
    from traces.core.analysis.whatif.clear_results import PLACEHOLDER, PLACEHOLDER_TOKENS

    assert TokenCounter().text(PLACEHOLDER) == PLACEHOLDER_TOKENS
