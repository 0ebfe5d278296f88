"""Plotly figures of a stored report, as plain JSON-serialisable dicts.

Each builder takes the report dict (`build_report`'s output) and a `theme` ("light" or
"dark": transparent backgrounds, font and grid colours that read on both) and returns
`{"data": [...], "layout": {...}}` for `Plotly.newPlot`, or None when the trace holds
nothing to draw:

- `transcript_growth_figure`: each call's input stacked by bucket (prefix, replayed
  output, tool results, other), cache reads and writes as lines, output tokens on a
  second axis; hatched bars and "≈ estimate" in the hover where the split is estimated;
- `cost_figure`: cumulative cost, actual vs uncached vs stable prefix cached (a figure
  without data whose title says so when no price is known);
- `timeline_figure`: model time vs your code's time over wall-clock seconds, tool runs in
  parallel overlapping (None without timings);
- `resend_results_figure` / `resend_by_tool_figure`: the tool results re-sent the most
  tokens (top 20) and the same per tool name (None without tool results).

Plotly renders hover text, text and tick labels as pseudo-HTML, so every untrusted
string (tool names, ids, model names) is HTML-escaped before it goes in a figure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...formatting import plotly_money
from . import downsample
from .chart_style import (
    BUCKET_LABELS,
    COLOURS,
    COMPACTION_COLOUR,
    ESTIMATE_NOTE,
    MANY_CALLS,
    THEMES,
    Figure,
    Theme,
    _axis,
    _calls,
    _colours,
    _layout,
    _loop_title,
    escape,
)
from .resend_charts import resend_by_tool_figure, resend_results_figure
from .sequence import call_input_tokens
from .timeline_chart import timeline_figure

__all__ = [
    "COLOURS",
    "THEMES",
    "Figure",
    "Theme",
    "cost_figure",
    "escape",
    "figures",
    "resend_by_tool_figure",
    "resend_results_figure",
    "timeline_figure",
    "transcript_growth_figure",
]


# -- 1. transcript growth --------------------------------------------------------------


def transcript_growth_figure(
    report: Mapping[str, Any], *, theme: Theme = "light", loop: int | None = None
) -> Figure | None:
    """Input per call stacked by bucket; cache reads/writes and output as their own series.

    Past `POINT_BUDGET` calls each point is a bucket of consecutive calls, its height the
    bucket's mean per call (so the area under it is the bucket's tokens), drawn as a
    stacked area rather than bars, and the hover names the calls and gives their total.
    """
    calls = _calls(report, loop)
    if not calls:
        return None
    many = len(calls) > MANY_CALLS
    groups = downsample.buckets([c["index"] for c in calls])
    exact = downsample.is_exact(groups)
    estimated = [not c.get("tokens_exact", True) for c in calls]
    inputs = [call_input_tokens(c) for c in calls]
    models = [c.get("model") or "unknown model" for c in calls]
    guessed_groups = [
        any(estimated[g.start : g.end + 1]) or not all(e for _, e in inputs[g.start : g.end + 1])
        for g in groups
    ]
    hatched = [any(estimated[g.start : g.end + 1]) for g in groups]
    customdata = []
    for group, guess in zip(groups, guessed_groups, strict=True):
        totals = [total for total, _ in inputs[group.start : group.end + 1]]
        named = set(models[group.start : group.end + 1])
        model = escape(models[group.start], 60) if len(named) == 1 else f"{len(named)} models"
        point = [downsample.total(totals) or 0, ESTIMATE_NOTE if guess else "", model]
        customdata.append(point if exact else [*point, group.label])
    xs: list[Any] = [g.first for g in groups] if exact else [g.middle for g in groups]
    where = "%{customdata[3]}" if not exact else "call %{x}"
    per = "" if exact else " per call (mean)"
    in_all = "input in all" if exact else "input of these calls"
    data: list[dict[str, Any]] = []
    for key, label in BUCKET_LABELS:
        values = [int((c.get("buckets") or {}).get(key) or 0) for c in calls]
        series: dict[str, Any] = {
            "type": "bar",
            "name": label,
            "x": xs,
            "y": downsample.reduce(groups, values, downsample.mean),
            "customdata": customdata,
            "marker": {
                "color": COLOURS[key],
                "line": {"width": 0},
                "pattern": {
                    "shape": ["/" if guess else "" for guess in hatched],
                    "solidity": 0.35,
                },
            },
            "hovertemplate": (
                f"{where} · %{{customdata[2]}}<br>{label}: %{{y:,}} tokens{per}"
                f"%{{customdata[1]}}<br>{in_all}: %{{customdata[0]:,}} tokens<extra></extra>"
            ),
        }
        data.append(series if exact else _stacked_area(series))
    labels = None if exact else [g.label for g in groups]
    mode = "lines" if many else "lines+markers"
    for key, field, label in (
        ("cache_read", "cache_read_tokens", "cache reads"),
        ("cache_write", "cache_write_tokens", "cache writes"),
    ):
        readings: list[Any] = [c.get(field) for c in calls]
        if not any(readings):
            continue
        data.append(
            _line(xs, _per_bucket(groups, readings), label, COLOURS[key], mode, "y", "dot", labels)
        )
    outputs = _per_bucket(groups, [c.get("output_tokens") for c in calls])
    data.append(
        _line(
            xs, outputs, "output tokens (right axis)", COLOURS["output"], mode, "y2", labels=labels
        )
    )
    colours = _colours(theme)
    guessed = sum(estimated)
    marked = "hatched: " if exact else ""  # an area has no per-point hatching: the hover says it
    legend_note = f"{marked}≈ estimated split ({guessed} calls)" if guessed else ""
    grouped = "" if exact else f" · calls in groups of {groups[0].size}"
    layout = _layout(
        theme,
        f"Transcript growth: input tokens per call{_loop_title(loop)}{grouped}",
        barmode="stack",
        bargap=0 if many else 0.15,
        xaxis=_axis(colours, "call", type="linear" if many else "category"),
        yaxis=_axis(colours, "input tokens", tickformat=",", rangemode="tozero"),
        yaxis2=_axis(
            colours,
            "output tokens",
            overlaying="y",
            side="right",
            showgrid=False,
            tickmode="auto",
            tickformat=",.0f",
            rangemode="tozero",
        ),
    )
    if legend_note:
        layout["legend"]["title"] = {"text": legend_note}
    _mark_compactions(layout, calls, many)
    return {"data": data, "layout": layout}


def _stacked_area(bars: dict[str, Any]) -> dict[str, Any]:
    """Grouped bars as a stacked area: one SVG path a series instead of 2,000 bars (the
    bars of a grouped series touch anyway), drawn in a fraction of the time."""
    colour = bars["marker"]["color"]
    return {
        "type": "scatter",
        "mode": "lines",
        "name": bars["name"],
        "x": bars["x"],
        "y": bars["y"],
        "stackgroup": "input",
        "line": {"width": 0, "color": colour},
        "fillcolor": colour,
        "customdata": bars["customdata"],
        "hovertemplate": bars["hovertemplate"],
    }


def _per_bucket(groups: Sequence[downsample.Bucket], values: Sequence[Any]) -> list[Any]:
    """A per-call series as it is (None kept: not reported), or each bucket's mean."""
    if downsample.is_exact(groups):
        return list(values)
    return downsample.reduce(groups, values, downsample.mean)


def _mark_compactions(layout: dict[str, Any], calls: list[Mapping[str, Any]], linear: bool) -> None:
    """A dashed line and a note just before every call whose history was compacted: the
    drop in input that follows is the compaction, not a change of workload.

    On a category axis (few calls) positions count bars from 0, on a linear one they are
    call numbers; either way the line sits half a bar before the compacted call.
    """
    shapes: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    for position, call in enumerate(calls):
        compaction = call.get("compaction")
        if not compaction:
            continue
        x = (call["index"] if linear else position) - 0.5
        shapes.append(
            {
                "type": "line",
                "xref": "x",
                "yref": "paper",
                "x0": x,
                "x1": x,
                "y0": 0,
                "y1": 1,
                "line": {"color": COMPACTION_COLOUR, "width": 1.5, "dash": "dash"},
            }
        )
        before = compaction.get("pre_tokens")
        hover = f"history compacted before call {call['index']}"
        if before:
            hover += f" (was {int(before):,} tokens)"
        notes.append(
            {
                "x": x,
                "xref": "x",
                "y": 1,
                "yref": "paper",
                "yanchor": "bottom",
                "text": "compacted",
                "hovertext": escape(hover, 120),
                "showarrow": False,
                "font": {"size": 11, "color": COMPACTION_COLOUR},
            }
        )
    if shapes:
        layout["shapes"] = shapes
        layout["annotations"] = notes


def _line(
    xs: Sequence[Any],
    values: Sequence[Any],
    label: str,
    colour: str,
    mode: str,
    axis: str,
    dash: str = "solid",
    labels: Sequence[str] | None = None,
) -> dict[str, Any]:
    """One line of a per-call chart; with `labels` (bucketed) the hover names the calls."""
    line: dict[str, Any] = {
        "type": "scatter",
        "mode": mode,
        "name": label,
        "x": list(xs),
        "y": list(values),
        "yaxis": axis,
        "line": {"color": colour, "width": 1.5, "dash": dash},
        "marker": {"size": 5},
        "hovertemplate": f"call %{{x}}<br>{label}: %{{y:,}} tokens<extra></extra>",
    }
    if labels is not None:
        line["customdata"] = list(labels)
        line["hovertemplate"] = (
            f"%{{customdata}}<br>{label}: %{{y:,}} tokens per call (mean)<extra></extra>"
        )
    return line


# -- 2. cumulative cost ----------------------------------------------------------------


def cost_figure(
    report: Mapping[str, Any], *, theme: Theme = "light", loop: int | None = None
) -> Figure:
    """Cumulative dollars: what was paid, with no caching, and with the prefix cached."""
    calls = _calls(report, loop)
    colours = _colours(theme)
    known = [c for c in calls if c.get("cost_usd") is not None]
    if not known:
        unpriced = (report.get("accounting") or {}).get("unpriced_models") or []
        models = ", ".join(escape(m, 40) for m in unpriced[:3])
        why = f" ({models})" if models else ""
        title = f"Cumulative cost: no prices known for these models{why}"
        return {"data": [], "layout": _layout(theme, title)}
    many = len(calls) > MANY_CALLS
    # A running total is exact at each bucket's last call: that is the point kept.
    groups = downsample.buckets([c["index"] for c in calls])
    xs = [g.last for g in groups]
    data = []
    # "actual" last, so it is drawn on top where the curves coincide.
    for key, field, label in (
        ("uncached", "cost_uncached_usd", "with no caching"),
        ("prefix_cached", "cost_prefix_cached_usd", "with the stable prefix cached"),
        ("actual", "cost_usd", "actual"),
    ):
        running, values = 0.0, []
        for call in calls:
            running += call.get(field) or 0.0
            values.append(round(running, 6))
        data.append(
            {
                "type": "scatter",
                "mode": "lines" if many else "lines+markers",
                "name": label,
                "x": xs,
                "y": downsample.reduce(groups, values, downsample.last),
                "line": {
                    "color": COLOURS[key],
                    "width": 2.5 if key == "actual" else 1.5,
                    "dash": "solid" if key == "actual" else "dash",
                },
                "marker": {"size": 5},
                "hovertemplate": (
                    f"after call %{{x}}<br>{label}: {plotly_money('y')}<extra></extra>"
                ),
            }
        )
    missing = len(calls) - len(known)
    note = f" ({missing} calls unpriced)" if missing else ""
    layout = _layout(
        theme,
        f"Cumulative cost{_loop_title(loop)}{note}",
        xaxis=_axis(colours, "call", type="linear" if many else "category"),
        yaxis=_axis(colours, "US dollars", tickprefix="$", tickformat=",", rangemode="tozero"),
    )
    return {"data": data, "layout": layout}


def figures(
    report: Mapping[str, Any], *, theme: Theme = "light", loop: int | None = None
) -> dict[str, Figure | None]:
    """Every figure of a report page, keyed by name (None where there is nothing to draw)."""
    return {
        "growth": transcript_growth_figure(report, theme=theme, loop=loop),
        "cost": cost_figure(report, theme=theme, loop=loop),
        "timeline": timeline_figure(report, theme=theme, loop=loop),
        "resend_results": resend_results_figure(report, theme=theme, loop=loop),
        "resend_by_tool": resend_by_tool_figure(report, theme=theme, loop=loop),
    }
