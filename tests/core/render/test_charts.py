"""Plotly figure dicts: shapes, sums, escaping, and None where there is nothing to draw.

Each figure is also loaded by plotly's own validator (`go.Figure`), which rejects
unknown properties, so a typo in a key fails here rather than silently in the browser.
"""

from __future__ import annotations

import orjson
import plotly.graph_objects as go
import pytest

from tests.core.render.reports import call, linear_loop, report, run
from traces.core.analysis.ingest import analyze_bytes
from traces.core.outputs.render import charts
from traces.core.outputs.render.charts import (
    cost_figure,
    figures,
    resend_by_tool_figure,
    resend_results_figure,
    timeline_figure,
    transcript_growth_figure,
)
from traces.core.outputs.report import build_report
from traces.core.reading.sample import sample_bytes

HOSTILE = "<script>alert(1)</script> & <img src=x onerror=alert(1)>"


@pytest.fixture(scope="module")
def sample_report() -> dict:
    return build_report(analyze_bytes(sample_bytes()))


def valid(figure: dict) -> dict:
    orjson.dumps(figure)
    go.Figure(figure)
    return figure


def by_name(figure: dict, prefix: str) -> dict:
    return next(t for t in figure["data"] if t["name"].startswith(prefix))


def all_strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in all_strings(v)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in all_strings(v)]
    return []


# -- transcript growth ------------------------------------------------------------------


def test_growth_stacks_the_buckets_to_each_calls_input(sample_report):
    figure = valid(transcript_growth_figure(sample_report))
    bars = [t for t in figure["data"] if t["type"] == "bar"]
    assert [t["name"].split(" ")[0] for t in bars] == ["prefix", "replayed", "tool", "other"]
    assert figure["layout"]["barmode"] == "stack"
    assert all(t["x"] == [1, 2, 3, 4] for t in bars)
    stacked = [sum(values) for values in zip(*(t["y"] for t in bars), strict=True)]
    assert stacked == [800, 1260, 1980, 2120]  # the seed's worked example
    output = by_name(figure, "output")
    assert output["y"] == [60, 120, 80, 80] and output["yaxis"] == "y2"
    # The sample uses no cache: no empty cache series.
    assert [t["type"] for t in figure["data"]].count("scatter") == 1
    assert "%{y:,}" in bars[0]["hovertemplate"]
    assert bars[0]["customdata"][1][0] == 1260


def test_growth_shows_cache_reads_and_writes_when_present():
    calls = [call(n, cache_read_tokens=100 * n, cache_write_tokens=50) for n in (1, 2, 3)]
    figure = valid(transcript_growth_figure(report(calls)))
    assert by_name(figure, "cache reads")["y"] == [100, 200, 300]
    assert by_name(figure, "cache writes")["y"] == [50, 50, 50]


def test_growth_marks_estimated_calls():
    calls = [call(1), call(2, tokens_exact=False), call(3, input_tokens=None, tokens_exact=False)]
    figure = valid(transcript_growth_figure(report(calls)))
    prefix = figure["data"][0]
    assert prefix["marker"]["pattern"]["shape"] == ["", "/", "/"]
    assert [row[1] for row in prefix["customdata"]] == ["", " (≈ estimate)", " (≈ estimate)"]
    assert "≈ estimated split (2 calls)" in figure["layout"]["legend"]["title"]["text"]
    exact = valid(transcript_growth_figure(report([call(1)])))
    assert "title" not in exact["layout"]["legend"]


def test_growth_stays_legible_with_two_thousand_calls():
    figure = valid(transcript_growth_figure(linear_loop(2000)))
    assert figure["layout"]["bargap"] == 0
    assert all("text" not in t for t in figure["data"])
    assert all(t.get("mode", "lines") == "lines" for t in figure["data"] if t["type"] == "scatter")
    assert len(figure["data"][0]["x"]) == 2000
    small = transcript_growth_figure(linear_loop(5))
    assert small["layout"]["bargap"] > 0


def test_growth_filters_a_loop_and_is_none_without_calls():
    calls = [call(1, loop=1), call(2, loop=2), call(3, loop=1)]
    figure = transcript_growth_figure(report(calls), loop=1)
    assert figure["data"][0]["x"] == [1, 3]
    assert transcript_growth_figure(report([])) is None


# -- cost -------------------------------------------------------------------------------


def test_cumulative_cost_curves(sample_report):
    figure = valid(cost_figure(sample_report))
    assert [t["name"] for t in figure["data"]] == [
        "with no caching",
        "with the stable prefix cached",
        "actual",
    ]
    actual = by_name(figure, "actual")["y"]
    assert actual == sorted(actual)
    assert actual[-1] == pytest.approx(sample_report["totals"]["cost_usd"]["actual"])
    cached = by_name(figure, "with the stable")["y"][-1]
    assert cached == pytest.approx(sample_report["totals"]["cost_usd"]["prefix_cached"])


def test_cost_says_so_when_no_price_is_known():
    calls = [call(n, cost_usd=None, cost_uncached_usd=None, model=HOSTILE) for n in (1, 2)]
    unpriced = report(calls)
    unpriced["accounting"]["unpriced_models"] = [HOSTILE]
    figure = valid(cost_figure(unpriced))
    assert figure["data"] == []
    title = figure["layout"]["title"]["text"]
    assert title.startswith("Cumulative cost: no prices known")
    assert "<script" not in title and "&lt;script&gt;" in title


def test_cost_notes_unpriced_calls():
    calls = [call(1), call(2, cost_usd=None)]
    figure = valid(cost_figure(report(calls)))
    assert "(1 calls unpriced)" in figure["layout"]["title"]["text"]


# -- timeline ---------------------------------------------------------------------------


def test_timeline_is_none_without_timings(sample_report):
    assert timeline_figure(linear_loop(4)) is None
    assert timeline_figure(report([])) is None
    assert timeline_figure(sample_report) is not None  # the sample has timestamps


def test_timeline_model_time_vs_your_code_and_parallel_runs_overlap():
    calls = [
        call(1, started_at=100.0, duration_s=2.0),
        call(2, started_at=105.0, duration_s=1.0),
        call(3, started_at=110.0, duration_s=1.5),
    ]
    runs = [
        run("a", "grep", 1, 2, batch_size=2, duration_s=2.5),
        run("b", "bash", 1, 2, batch_size=2, duration_s=1.0),
        run("c", "grep", 2, 3, duration_s=3.0, started_at=106.5),
    ]
    figure = valid(timeline_figure(report(calls, runs)))
    model = by_name(figure, "model")
    assert model["base"] == [0.0, 5.0, 10.0] and model["x"] == [2.0, 1.0, 1.5]
    assert model["orientation"] == "h"
    code = by_name(figure, "your code")
    assert code["base"] == [2.0, 6.0] and code["x"] == [3.0, 4.0]
    tools = by_name(figure, "tool runs")
    assert tools["y"] == ["tools", "tools (2)", "tools"]
    # The parallel pair starts together when call 1 ends and overlaps in time.
    assert tools["base"][:2] == [2.0, 2.0]
    assert tools["base"][2] == 6.5  # a measured start wins over the asking call's end
    rows = figure["layout"]["yaxis"]["categoryarray"]
    assert rows == ["model", "your code", "tools", "tools (2)"]


# -- re-sent tool results ---------------------------------------------------------------


def test_heaviest_results_top_twenty_in_order():
    long = linear_loop(40)
    figure = valid(resend_results_figure(long))
    trace = figure["data"][0]
    assert len(trace["y"]) == 20
    assert trace["x"] == sorted(trace["x"], reverse=True)
    assert trace["y"][0].startswith("1. read_file")
    assert figure["layout"]["yaxis"]["autorange"] == "reversed"
    assert resend_results_figure(report([call(1)])) is None


def test_resend_per_tool_name_sums_its_results():
    runs = [
        run("a", "grep", 1, 2, resend_tokens=300),
        run("b", "grep", 2, 3, resend_tokens=200),
        run("c", "bash", 2, 3, resend_tokens=900),
    ]
    figure = valid(resend_by_tool_figure(report([call(1), call(2), call(3)], runs)))
    trace = figure["data"][0]
    assert trace["y"] == ["bash", "grep"] and trace["x"] == [900, 500]
    assert trace["customdata"][1][0] == 2  # two grep results
    assert resend_by_tool_figure(report([call(1)])) is None


def test_hostile_tool_names_are_html_escaped_everywhere():
    calls = [call(n, model=HOSTILE, started_at=10.0 * n, duration_s=1.0) for n in (1, 2, 3)]
    runs = [
        run(HOSTILE, HOSTILE, 1, 2, duration_s=1.0),
        run("id2" + HOSTILE, HOSTILE + "2", 2, 3, duration_s=1.0),
    ]
    hostile = report(calls, runs)
    for name, figure in figures(hostile).items():
        assert figure is not None, name
        valid(figure)
        text = orjson.dumps(figure).decode()
        assert "<script" not in text and "<img" not in text, name
    by_tool = resend_by_tool_figure(hostile)["data"][0]["y"]
    # Both names agree up to the cut, so they are told apart by rank.
    assert by_tool[0].startswith("1. &lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;img")
    heaviest = resend_results_figure(hostile)["data"][0]
    assert any("&lt;script&gt;" in s for s in all_strings(heaviest["customdata"]))


# -- themes -----------------------------------------------------------------------------


def test_themes_are_transparent_with_their_own_font_colours(sample_report):
    light = figures(sample_report, theme="light")
    dark = figures(sample_report, theme="dark")
    for name in light:
        for figure in (light[name], dark[name]):
            layout = figure["layout"]
            assert layout["paper_bgcolor"] == "rgba(0,0,0,0)"
            assert layout["plot_bgcolor"] == "rgba(0,0,0,0)"
        assert light[name]["layout"]["font"]["color"] != dark[name]["layout"]["font"]["color"]
    assert dark["growth"]["layout"]["font"]["color"] == charts.THEMES["dark"]["font"]


def test_figures_filter_one_loop():
    calls = [call(1, loop=1), call(2, loop=2), call(3, loop=1), call(4, loop=2)]
    runs = [run("a", "grep", 1, 3, loop=1), run("b", "bash", 2, 4, loop=2, resend_tokens=50)]
    two_loops = report(calls, runs)
    only_two = figures(two_loops, loop=2)
    assert only_two["growth"]["data"][0]["x"] == [2, 4]
    assert only_two["cost"]["data"][0]["x"] == [2, 4]
    assert only_two["resend_by_tool"]["data"][0]["y"] == ["bash"]
    assert only_two["resend_results"]["data"][0]["x"] == [50]
    assert "loop 2" in only_two["growth"]["layout"]["title"]["text"]
