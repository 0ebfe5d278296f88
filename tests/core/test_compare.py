"""Exact comparison arithmetic: the seeds' calendar task run with one parallel batch
(4 calls) and with the two availability checks one per round trip (5 calls)."""

from __future__ import annotations

import pytest

from tests.core.builders import log, pair, response, tool_result, tool_use, user
from traces.core.analysis.ingest import analyze_bytes
from traces.core.outputs.compare import (
    RunPoint,
    Side,
    compare_runs,
    compare_sets,
    first_divergence,
    transcript_of,
)
from traces.core.outputs.report import build_report
from traces.core.reading.sample import sample_bytes, serial_sample_bytes


def side(name: str, data: bytes) -> Side:
    trace = analyze_bytes(data)
    return Side(name, build_report(trace), transcript_of(trace))


@pytest.fixture(scope="module")
def calendar():
    return compare_runs(side("parallel", sample_bytes()), side("serial", serial_sample_bytes()))


def test_serial_run_takes_five_calls_against_four(calendar):
    assert calendar["a"]["totals"]["calls"] == 4
    assert calendar["b"]["totals"]["calls"] == 5
    assert calendar["delta"]["calls"] == 1
    assert calendar["delta"]["relative"]["calls"] == 0.25


def test_input_difference_is_the_extra_round_trip(calendar):
    # Parallel: 800 + 1,260 + 1,980 + 2,120 = 6,160 (the seed's worked example).
    # Serial: 800 + 1,260 + 1,620 + 1,980 + 2,120 = 7,780.
    assert calendar["a"]["totals"]["input"] == 6160
    assert calendar["b"]["totals"]["input"] == 7780
    assert calendar["delta"]["input"] == 1620
    assert calendar["a"]["totals"]["buckets"] == {
        "prefix": 3200,
        "tool_results": 2460,
        "replayed_output": 500,
        "other": 0,
    }
    # One more call re-sends the 800-token prefix; the split results and the extra echo
    # are re-sent by more requests.
    assert calendar["delta"]["buckets"] == {
        "prefix": 800,
        "tool_results": 700,
        "replayed_output": 120,
        "other": 0,
    }
    assert calendar["delta"]["output"] == 0


def test_cost_difference_at_the_bundled_sonnet_price(calendar):
    # 3 $/M input, 15 $/M output, no cache: 1,620 more input tokens cost $0.00486.
    assert calendar["a"]["totals"]["cost"] == pytest.approx(6160 * 3e-6 + 340 * 15e-6)
    assert calendar["delta"]["cost"] == pytest.approx(1620 * 3e-6)


def test_calls_align_by_loop_position_and_add_up(calendar):
    rows = calendar["calls"]
    assert [(r["loop"], r["position"]) for r in rows] == [(1, p) for p in range(1, 6)]
    assert [r["a"]["input"] if r["a"] else None for r in rows] == [800, 1260, 1980, 2120, None]
    assert [r["b"]["input"] for r in rows] == [800, 1260, 1620, 1980, 2120]
    assert [r["delta"]["input"] for r in rows] == [0, 0, -360, -140, 2120]
    assert sum(r["delta"]["input"] for r in rows) == calendar["delta"]["input"]
    third = rows[2]["delta"]
    assert (third["tool_results"], third["replayed_output"]) == (-300, -60)
    assert sum(r["delta"]["cost"] for r in rows) == pytest.approx(calendar["delta"]["cost"])


def test_transcripts_diverge_at_the_second_answer(calendar):
    divergence = calendar["divergence"]
    assert divergence["message"] == 4  # user, answer 1, slots, then answer 2 differs
    assert divergence["a"].count("[tool call] check_availability") == 2
    assert divergence["b"].count("[tool call] check_availability") == 1
    removed = [line for line in divergence["diff"] if line.startswith("-[tool call]")]
    assert removed == ['-[tool call] check_availability {"attendee": "tom", "slot": "slot_3"}']


def test_the_serial_run_alone_has_the_serial_calls_finding(calendar):
    findings = calendar["findings"]
    assert findings["only_a"] == [] and findings["both"] == []
    assert findings["only_b"] == [
        {"rule": "serial-independent-calls", "severity": "warning", "a": 0, "b": 1}
    ]
    assert calendar["delta"]["findings"] == 1


def test_tools_side_by_side(calendar):
    tools = {row["name"]: row for row in calendar["tools"]}
    assert set(tools) == {"find_free_slots", "check_availability", "create_event"}
    check = tools["check_availability"]
    assert (check["a"]["runs"], check["a"]["errors"], check["a"]["error_rate"]) == (2, 1, 0.5)
    assert check["b"]["errors"] == 1 and check["delta"]["runs"] == 0


def test_findings_only_in_one_side_or_both():
    clean = log(
        pair([user("read a")], response([tool_use("t1", path="a")], "tool_use", 100, 20)),
        pair(
            [
                user("read a"),
                {"role": "assistant", "content": [tool_use("t1", path="a")]},
                {"role": "user", "content": [tool_result("t1", "ok")]},
            ],
            response([{"type": "text", "text": "done"}], "end_turn", 130, 10),
        ),
    )
    dangling = log(
        pair([user("read a")], response([tool_use("t9", path="a")], "tool_use", 100, 20)),
    )
    result = compare_runs(side("clean", clean), side("dangling", dangling))
    only_b = {row["rule"] for row in result["findings"]["only_b"]}
    assert "dangling-tool-call" in only_b
    assert result["findings"]["only_a"] == []
    assert all(row["a"] == 0 and row["b"] >= 1 for row in result["findings"]["only_b"])
    same = compare_runs(side("d1", dangling), side("d2", dangling))
    assert {row["rule"] for row in same["findings"]["both"]} >= {"dangling-tool-call"}
    assert same["divergence"] is None


def test_first_divergence_of_a_longer_transcript():
    assert first_divergence(["a", "b"], ["a", "b", "c"])["message"] == 3
    assert first_divergence(["a"], ["a"]) is None


def test_two_sets_rates_means_and_medians():
    before = [
        RunPoint("finished", 4, 6000, 300, 0.02, frozenset({"oversized-tool-result"})),
        RunPoint("finished", 6, 8000, 300, 0.04, frozenset({"oversized-tool-result"})),
        RunPoint("api_error", 2, 1000, 0, None),
        RunPoint("finished", 8, 9000, 300, 0.06, frozenset({"oversized-tool-result"})),
    ]
    after = [
        RunPoint("finished", 4, 5000, 300, 0.02, frozenset({"oversized-tool-result"})),
        RunPoint("finished", 5, 6000, 300, 0.03),
        RunPoint("finished", 5, 6000, 300, 0.04),
        RunPoint("finished", 6, 7000, 300, 0.03),
    ]
    result = compare_sets(before, after)
    assert result["runs"] == {"a": 4, "b": 4}
    metrics = {m["metric"]: m for m in result["metrics"]}
    cost = metrics["cost"]
    assert cost["a"] == {"n": 3, "mean": 0.04, "median": 0.04}
    assert cost["b"] == {"n": 4, "mean": 0.03, "median": 0.03}
    assert cost["delta_mean"] == pytest.approx(-0.01)
    assert cost["relative_mean"] == pytest.approx(-0.25)
    calls = metrics["calls"]
    assert (calls["a"]["mean"], calls["a"]["median"]) == (5.0, 5.0)
    assert (calls["b"]["mean"], calls["b"]["median"]) == (5.0, 5.0)
    outcomes = {row["key"]: row for row in result["outcomes"]}
    assert outcomes["finished"]["a"] == {"runs": 3, "of": 4, "rate": 0.75}
    assert outcomes["finished"]["b"]["rate"] == 1.0
    assert outcomes["api_error"]["delta_rate"] == -0.25
    oversized = result["rules"][0]
    assert oversized["key"] == "oversized-tool-result"
    assert (oversized["a"]["runs"], oversized["b"]["runs"]) == (3, 1)
    assert oversized["delta_rate"] == -0.5
    assert oversized["relative"] == pytest.approx(-2 / 3, abs=1e-6)
