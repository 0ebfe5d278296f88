"""Charts to a fixed point budget: at most 2,000 points a series, whatever the loop's size,
exact below it, the totals kept when calls are grouped, and the hover text escaped."""

from __future__ import annotations

import pytest

from tests.core.render.reports import call, linear_loop, report, run
from tests.core.render.test_charts import HOSTILE, all_strings, by_name, valid
from traces.core.analysis.whatif.series import Series
from traces.core.outputs.render import downsample, whatif_charts
from traces.core.outputs.render.chart_style import BUCKET_LABELS
from traces.core.outputs.render.charts import figures, transcript_growth_figure
from traces.core.outputs.render.downsample import POINT_BUDGET
from traces.core.outputs.render.timeline_chart import CONDENSED_BARS

SIZES = (100, 10_000, 20_000)


def timed_loop(count: int, **overrides) -> dict:
    """`count` calls 3 s apart, each 1 s long, each asking for one 0.5 s tool run."""
    calls = [
        call(n, started_at=1000.0 + 3 * n, duration_s=1.0, **overrides) for n in range(1, count + 1)
    ]
    runs = [run(f"toolu_{n:05d}", "read_file", n, n + 1, duration_s=0.5) for n in range(1, count)]
    return report(calls, runs)


def points(figure: dict) -> list[int]:
    """The number of points of every series of a figure."""
    return [len(trace.get("x") or trace.get("y") or []) for trace in figure["data"]]


# -- the buckets ------------------------------------------------------------------------


@pytest.mark.parametrize("size", SIZES)
def test_buckets_cover_every_call_once_within_the_budget(size):
    numbers = list(range(1, size + 1))
    groups = downsample.buckets(numbers)
    assert len(groups) == min(size, POINT_BUDGET)
    covered = [n for g in groups for n in numbers[g.start : g.end + 1]]
    assert covered == numbers  # in order, none twice, none left out
    assert max(g.size for g in groups) - min(g.size for g in groups) <= 1
    assert downsample.is_exact(groups) == (size <= POINT_BUDGET)


def test_a_bucket_names_its_calls():
    groups = downsample.buckets([4, 5, 6, 7], budget=2)
    assert [g.label for g in groups] == ["calls 4–5", "calls 6–7"]
    assert [g.middle for g in groups] == [4.5, 6.5]
    assert downsample.buckets([9])[0].label == "call 9"
    with pytest.raises(ValueError):
        downsample.buckets([1], budget=0)


def test_reductions_keep_totals_and_unknowns():
    groups = downsample.buckets(list(range(1, 11)), budget=3)
    values = [1, 2, 3, None, 5, 6, 7, 8, 9, 10]
    assert sum(v or 0 for v in downsample.reduce(groups, values, downsample.total)) == 51
    assert downsample.reduce(groups, values, downsample.peak) == [3, 6, 10]
    assert downsample.reduce(groups, values, downsample.last) == [3, 6, 10]
    assert downsample.total([None, None]) is None  # unknown, not zero
    assert downsample.mean([None, 2, 4]) == 3


# -- every figure of the trace page ---------------------------------------------------


@pytest.mark.parametrize("size", SIZES)
def test_every_series_of_the_trace_page_holds_at_most_the_budget(size):
    for name, figure in figures(timed_loop(size)).items():
        assert figure is not None, name
        counts = points(valid(figure) if size <= 100 else figure)
        assert counts and max(counts) <= POINT_BUDGET, (name, counts)
    growth = transcript_growth_figure(timed_loop(size))
    # Exact below the budget: one bar a call.
    assert len(growth["data"][0]["x"]) == min(size, POINT_BUDGET)


def test_growth_bars_keep_the_tokens_of_their_calls():
    loop = linear_loop(10_000)
    figure = valid(transcript_growth_figure(loop))
    groups = downsample.buckets(list(range(1, 10_001)))
    for trace in figure["data"][:4]:  # the stacked buckets
        key = next(k for k, label in BUCKET_LABELS if label == trace["name"])
        exact = sum(c["buckets"][key] for c in loop["calls"])
        kept = sum(y * g.size for y, g in zip(trace["y"], groups, strict=True))
        assert abs(kept - exact) <= 10_000 / 2  # only each mean's rounding: half a token a call
    # The hover gives each bucket's exact input total: they add up to the loop's.
    customdata = figure["data"][0]["customdata"]
    assert sum(point[0] for point in customdata) == sum(c["input_tokens"] for c in loop["calls"])
    assert customdata[0][3] == "calls 1–5"
    assert "%{customdata[3]}" in figure["data"][0]["hovertemplate"]
    assert "groups of 5" in figure["layout"]["title"]["text"]
    # Drawn as a stacked area (one path a series), not 2,000 bars a series.
    assert {t["type"] for t in figure["data"][:4]} == {"scatter"}
    assert {t["stackgroup"] for t in figure["data"][:4]} == {"input"}
    assert transcript_growth_figure(linear_loop(300))["data"][0]["type"] == "bar"  # exact


def test_cumulative_cost_ends_at_the_exact_total():
    loop = linear_loop(20_000)
    figure = figures(loop)["cost"]
    actual = by_name(figure, "actual")
    assert len(actual["x"]) == POINT_BUDGET and actual["x"][-1] == 20_000
    exact = sum(c["cost_usd"] for c in loop["calls"])
    assert actual["y"][-1] == pytest.approx(exact, abs=1e-3)


def test_the_timeline_keeps_every_rows_time():
    loop = timed_loop(20_000)
    figure = figures(loop)["timeline"]
    model = by_name(figure, "model")
    assert len(model["x"]) == CONDENSED_BARS < POINT_BUDGET  # sub-pixel bars: fewer drawn
    assert sum(model["x"]) == pytest.approx(20_000 * 1.0)
    assert sum(by_name(figure, "your code")["x"]) == pytest.approx(19_999 * 2.0)
    tools = by_name(figure, "tool runs")
    assert sum(tools["x"]) == pytest.approx(19_999 * 0.5)
    assert set(tools["y"]) == {"tools"}
    assert model["customdata"][0][0] == "calls 1–40"
    # The hover's length is the bar's own (Plotly's %{x} on a based bar is its end).
    assert model["customdata"][0][3] == model["x"][0] == 40.0
    assert "%{customdata[3]:.2f} s in all" in model["hovertemplate"]


def test_the_timeline_says_output_not_reported_rather_than_a_blank():
    calls = [call(1, started_at=1.0, duration_s=1.0, output_tokens=None)]
    model = by_name(figures(report(calls))["timeline"], "model")
    assert model["customdata"][0][1] == "not reported"
    assert (
        model["customdata"][0][2] == 1.0 and "for %{customdata[2]:.2f} s" in model["hovertemplate"]
    )


def test_grouped_hover_text_is_escaped():
    loop = linear_loop(5_000, model=HOSTILE)
    figure = transcript_growth_figure(loop)
    strings = all_strings(figure)
    assert not any("<script" in s or "<img" in s for s in strings)
    assert any("&lt;script&gt;" in s for s in strings)
    mixed = linear_loop(4_000)
    mixed["calls"][0]["model"] = HOSTILE
    first = transcript_growth_figure(mixed)["data"][0]["customdata"][0]
    assert first[2] == "2 models"  # a bucket of two models names neither


@pytest.mark.parametrize("size", SIZES)
def test_what_if_figures_hold_at_most_the_budget(size):
    calls = list(range(1, size + 1))
    running = [round(0.01 * n, 6) for n in calls]
    series = Series(
        calls,
        [1000 + n for n in calls],
        [None if n % 7 == 0 else 900 + n for n in calls],
        running,
        [round(v * 0.9, 6) for v in running],
        [None] * size,
    )
    growth = whatif_charts.growth_figure(series)
    cost = whatif_charts.cost_figure(series, lifetime="5m")
    for figure in (growth, cost):
        assert max(points(figure)) == min(size, POINT_BUDGET)
    assert cost["data"][-1]["y"][-1] == running[-1]
    kinds = {t["type"] for t in growth["data"]}
    assert kinds == ({"bar"} if size <= POINT_BUDGET else {"scatter"})  # areas when grouped
    groups = downsample.buckets(calls)
    kept = sum(y * g.size for y, g in zip(growth["data"][0]["y"], groups, strict=True))
    assert abs(kept - sum(series.input_actual)) <= size / 2
