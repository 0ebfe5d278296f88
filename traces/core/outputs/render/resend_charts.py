"""The tool results re-sent the most tokens (top 20), and the same per tool name (None
without tool results)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...formatting import count
from .chart_style import (
    COLOURS,
    ESTIMATE_NOTE,
    MANY_CALLS,
    TOP_RESULTS,
    Figure,
    Theme,
    _axis,
    _colours,
    _layout,
    _runs,
    escape,
)


def _resent(report: Mapping[str, Any], loop: int | None) -> list[Mapping[str, Any]]:
    return [
        run
        for run in _runs(report, loop)
        if run.get("result_tokens") is not None and (run.get("resend_tokens") or 0) > 0
    ]


def resend_results_figure(
    report: Mapping[str, Any],
    *,
    theme: Theme = "light",
    loop: int | None = None,
    top: int = TOP_RESULTS,
) -> Figure | None:
    """The tool results that cost the most re-sent input: tokens x requests carrying."""
    runs = sorted(_resent(report, loop), key=lambda r: -(r.get("resend_tokens") or 0))[:top]
    if not runs:
        return None
    labels = [
        f"{rank}. {escape(run.get('name') or '?', 32)} (call {run.get('call') or '?'})"
        for rank, run in enumerate(runs, start=1)
    ]
    customdata = [
        [
            run.get("result_tokens"),
            run.get("requests_carrying") or 0,
            escape(run.get("id") or "", 60),
            "" if run.get("result_tokens_exact", True) else ESTIMATE_NOTE,
        ]
        for run in runs
    ]
    trace = {
        "type": "bar",
        "orientation": "h",
        "name": "re-sent tokens",
        "y": labels,
        "x": [run.get("resend_tokens") or 0 for run in runs],
        "customdata": customdata,
        "marker": {"color": COLOURS["tool_results"]},
        "hovertemplate": (
            "%{y}<br>id %{customdata[2]}<br>%{customdata[0]:,} tokens \u00d7 %{customdata[1]} "
            "requests = %{x:,} tokens re-sent%{customdata[3]}<extra></extra>"
        ),
    }
    if len(runs) <= MANY_CALLS:
        trace["text"] = [count(value) for value in trace["x"]]
        trace["textposition"] = "auto"
    colours = _colours(theme)
    layout = _layout(
        theme,
        f"Heaviest tool results: top {len(runs)} by tokens re-sent",
        showlegend=False,
        xaxis=_axis(colours, "tokens re-sent as input", tickformat=","),
        yaxis=_axis(colours, "", type="category", autorange="reversed"),
        height=max(240, 90 + 24 * len(runs)),
        margin={"l": 200, "r": 24, "t": 56, "b": 48},
    )
    return {"data": [trace], "layout": layout}


def resend_by_tool_figure(
    report: Mapping[str, Any],
    *,
    theme: Theme = "light",
    loop: int | None = None,
    top: int = TOP_RESULTS,
) -> Figure | None:
    """Tokens re-sent per tool name, summed over its results."""
    totals: dict[str, list[int]] = {}
    for run in _resent(report, loop):
        entry = totals.setdefault(run.get("name") or "?", [0, 0, 0])
        entry[0] += run.get("resend_tokens") or 0
        entry[1] += 1
        entry[2] += run.get("result_tokens") or 0
    if not totals:
        return None
    ranked = sorted(totals.items(), key=lambda item: -item[1][0])[:top]
    labels = [escape(name, 40) for name, _ in ranked]
    if len(set(labels)) != len(labels):  # names that differ only past the cut
        labels = [f"{rank}. {label}" for rank, label in enumerate(labels, start=1)]
    trace = {
        "type": "bar",
        "orientation": "h",
        "name": "re-sent tokens per tool",
        "y": labels,
        "x": [entry[0] for _, entry in ranked],
        "customdata": [[entry[1], entry[2]] for _, entry in ranked],
        "text": [count(entry[0]) for _, entry in ranked],
        "textposition": "auto",
        "marker": {"color": COLOURS["tool"]},
        "hovertemplate": (
            "%{y}<br>%{customdata[0]} results, %{customdata[1]:,} tokens"
            "<br>%{x:,} tokens re-sent<extra></extra>"
        ),
    }
    colours = _colours(theme)
    layout = _layout(
        theme,
        "Tokens re-sent per tool",
        showlegend=False,
        xaxis=_axis(colours, "tokens re-sent as input", tickformat=","),
        yaxis=_axis(colours, "", type="category", autorange="reversed"),
        height=max(200, 90 + 28 * len(ranked)),
        margin={"l": 160, "r": 24, "t": 56, "b": 48},
    )
    return {"data": [trace], "layout": layout}
