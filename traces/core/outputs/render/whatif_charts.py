"""Plotly figures of the what-if panel: the actual run beside the run with the fixes.

`growth_figure` puts each call's input as recorded and as simulated side by side;
`cost_figure` draws the cumulative cost actual, with the token fixes, and with the
stable prefix cached at the chosen lifetime. Both take a `Series` (built from the report
by `whatif.build_series`); untrusted text never reaches them (call numbers and figures
only), and lines stop where a figure is unknown instead of guessing it. Past
`downsample.POINT_BUDGET` calls, bars are each bucket's mean per call and lines each
bucket's last running total (as the trace's own charts).
"""

from __future__ import annotations

from typing import Any

from ...analysis.whatif.params import LIFETIME_LABELS
from ...analysis.whatif.series import Series
from ...formatting import plotly_money
from . import downsample
from .chart_style import COLOURS, MANY_CALLS, Figure, Theme, _axis, _colours, _layout, _loop_title

SIMULATED = "#0ea5e9"


def growth_figure(series: Series, *, theme: Theme = "light", loop: int | None = None) -> Figure:
    colours = _colours(theme)
    many = len(series.calls) > MANY_CALLS
    groups = downsample.buckets(series.calls)
    exact = downsample.is_exact(groups)
    xs = [g.first if exact else g.middle for g in groups]
    where = "call %{x}" if exact else "%{customdata[1]}"
    per = "" if exact else " per call (mean)"
    batched = [
        "not sent (batched)"
        if all(v is None for v in series.input_simulated[g.start : g.end + 1])
        else ""
        for g in groups
    ]
    labels = [g.label for g in groups]
    simulated = [0 if v is None else v for v in series.input_simulated]
    data: list[dict[str, Any]] = [
        {
            "type": "bar",
            "name": "actual input",
            "x": xs,
            "y": downsample.reduce(groups, series.input_actual, downsample.mean),
            "marker": {"color": COLOURS["actual"], "line": {"width": 0}},
            "hovertemplate": f"{where}<br>actual: %{{y:,}} input tokens{per}<extra></extra>",
        },
        {
            "type": "bar",
            "name": "with the fixes",
            "x": xs,
            "y": downsample.reduce(groups, simulated, downsample.mean),
            "customdata": batched
            if exact
            else [[b, label] for b, label in zip(batched, labels, strict=True)],
            "marker": {"color": SIMULATED, "line": {"width": 0}},
            "hovertemplate": (
                f"{where}<br>with the fixes: %{{y:,}} input tokens{per} "
                + ("%{customdata}" if exact else "%{customdata[0]}")
                + "<extra></extra>"
            ),
        },
    ]
    if not exact:
        # Grouped: two overlapping areas (one SVG path each, not 2,000 bars), the run
        # with the fixes in front of the actual one.
        data[0]["customdata"] = [["", label] for label in labels]
        for trace in data:
            colour = trace.pop("marker")["color"]
            trace.update(
                type="scatter",
                mode="lines",
                fill="tozeroy",
                fillcolor=colour,
                line={"width": 0, "color": colour},
            )
    saved = sum(series.input_actual) - sum(v or 0 for v in series.input_simulated)
    layout = _layout(
        theme,
        f"Transcript growth, actual vs with the fixes{_loop_title(loop)}: "
        f"{saved:,} input tokens fewer",
        barmode="group",
        bargap=0 if many else 0.2,
        bargroupgap=0.05,
        xaxis=_axis(colours, "call", type="linear" if many else "category"),
        yaxis=_axis(colours, "input tokens", tickformat=",", rangemode="tozero"),
    )
    layout["legend"]["y"] = -0.25
    return {"data": data, "layout": layout}


def cost_figure(
    series: Series, *, lifetime: str, theme: Theme = "light", loop: int | None = None
) -> Figure:
    colours = _colours(theme)
    many = len(series.calls) > MANY_CALLS
    mode = "lines" if many else "lines+markers"
    groups = downsample.buckets(series.calls)
    xs = [g.last for g in groups]
    data = []
    for key, values, label, colour in (
        (
            "cached",
            series.cost_cached,
            f"prefix cached ({LIFETIME_LABELS[lifetime]} lifetime)",
            COLOURS["prefix_cached"],
        ),
        ("simulated", series.cost_simulated, "with the token fixes", SIMULATED),
        ("actual", series.cost_actual, "actual", COLOURS["actual"]),
    ):
        if not any(v is not None for v in values):
            continue
        data.append(
            {
                "type": "scatter",
                "mode": mode,
                "name": label,
                "x": xs,
                "y": downsample.reduce(groups, values, downsample.last),
                "line": {
                    "color": colour,
                    "width": 2.5 if key == "actual" else 1.8,
                    "dash": "solid" if key == "actual" else "dash",
                },
                "marker": {"size": 5},
                "connectgaps": False,
                "hovertemplate": (
                    f"after call %{{x}}<br>{label}: {plotly_money('y')}<extra></extra>"
                ),
            }
        )
    if not data:
        return {"data": [], "layout": _layout(theme, "Cumulative cost: no prices known")}
    missing = (
        " · cache line: no call times" if not any(v is not None for v in series.cost_cached) else ""
    )
    layout = _layout(
        theme,
        f"Cumulative cost with the fixes{_loop_title(loop)}{missing}",
        xaxis=_axis(colours, "call", type="linear" if many else "category"),
        yaxis=_axis(colours, "US dollars", tickprefix="$", tickformat=",", rangemode="tozero"),
    )
    layout["legend"]["y"] = -0.25
    return {"data": data, "layout": layout}
