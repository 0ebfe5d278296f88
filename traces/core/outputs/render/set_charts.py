"""Plotly figures of a run set: one distribution per measure (cost, calls, input tokens,
wall time), every run a point whose hover names it, over a box of the spread.

Run names are untrusted: escaped (see `charts.escape`) before they reach hover text.
Each point carries its run's URL in `customdata`, so clicking it opens the run.
"""

from __future__ import annotations

from collections.abc import Sequence

from traces.core.records import dataclass

from ...formatting import plotly_money
from .chart_style import COLOURS, Figure, Theme, _axis, _colours, _layout, escape

MEASURES = (
    ("cost", "Cost per run", "USD", plotly_money("x")),
    ("calls", "Calls per run", "calls", "%{x:,} calls"),
    ("input_tokens", "Input tokens per run", "tokens", "%{x:,} tokens"),
    ("wall_time", "Wall time per run", "seconds", "%{x:.1f} s"),
)


@dataclass(frozen=True, slots=True)
class RunValue:
    name: str
    url: str
    value: float


def distribution_figure(
    values: Sequence[RunValue], title: str, unit: str, value_format: str, theme: Theme = "light"
) -> Figure | None:
    """A horizontal box with every run as a point (None when no run has the measure)."""
    if not values:
        return None
    colours = _colours(theme)
    names = [escape(v.name) for v in values]
    box = {
        "type": "box",
        "x": [v.value for v in values],
        "name": "",
        "orientation": "h",
        "boxpoints": "all",
        "jitter": 0.5,
        "pointpos": 0,
        "marker": {"color": COLOURS["prefix"], "size": 7, "opacity": 0.75},
        "line": {"color": COLOURS["prefix"]},
        "fillcolor": "rgba(99, 102, 241, 0.12)",
        "text": names,
        "customdata": [v.url for v in values],
        "hovertemplate": f"%{{text}}<br>{value_format}<extra></extra>",
        "hoveron": "points",
    }
    layout = _layout(theme, f"{title} <span style='font-size:12px'>({len(values)} runs)</span>")
    layout.update(
        {
            "height": 220,
            "margin": {"l": 24, "r": 24, "t": 48, "b": 48},
            "showlegend": False,
            "xaxis": _axis(colours, unit, rangemode="tozero"),
            "yaxis": _axis(colours, "", showticklabels=False),
        }
    )
    return {"data": [box], "layout": layout}
