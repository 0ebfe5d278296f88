"""The what-if figures: actual and simulated side by side, unknown figures left out."""

from __future__ import annotations

from tests.core.whatif.traces import clinic_visit, sundry_run
from traces.core.analysis.ingest import analyze_bytes
from traces.core.analysis.whatif import basis_from_report, build_series, parse_params
from traces.core.outputs.render.whatif_charts import cost_figure, growth_figure
from traces.core.outputs.report import build_report


def _series(data: bytes, values: dict):
    report = build_report(analyze_bytes(data))
    basis = basis_from_report(report)
    return build_series(basis, parse_params(basis, values), loop=1)


def test_growth_puts_the_simulated_bars_beside_the_actual():
    series = _series(sundry_run(), {"cap:get_order": "340", "clear_after": "", "batch": "0"})
    figure = growth_figure(series, loop=1)
    actual, fixed = figure["data"]
    assert figure["layout"]["barmode"] == "group"
    assert actual["x"] == fixed["x"] == list(range(1, 13))
    assert [a - f for a, f in zip(actual["y"], fixed["y"], strict=True)][3] >= 560
    assert "input tokens fewer" in figure["layout"]["title"]["text"]


def test_a_batched_away_call_has_no_simulated_bar_and_says_why():
    series = _series(sundry_run(), {})
    fixed = growth_figure(series)["data"][1]
    assert fixed["y"][7] == 0 and fixed["customdata"][7] == "not sent (batched)"


def test_cost_draws_the_cache_line_only_when_call_times_allow_it():
    untimed = cost_figure(_series(sundry_run(), {}), lifetime="5m")
    assert [t["name"] for t in untimed["data"]] == ["with the token fixes", "actual"]
    assert "cache line: no call times" in untimed["layout"]["title"]["text"]
    timed = cost_figure(_series(clinic_visit(), {}), lifetime="1h")
    names = [t["name"] for t in timed["data"]]
    assert names[0] == "prefix cached (1-hour lifetime)" and names[-1] == "actual"
    assert timed["data"][0]["y"][-1] < timed["data"][-1]["y"][-1]
