"""The usage page's figure: each period's spend as a stacked bar by kind of token
(uncached input, cache reads, cache writes, output), as plain Plotly JSON."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...formatting import plotly_money
from .chart_style import COLOURS, Figure, Theme, _axis, _colours, _layout

KIND_LABELS = (
    ("uncached_input", "input (uncached)", COLOURS["prefix"]),
    ("cache_read", "cache reads", COLOURS["cache_read"]),
    ("cache_write", "cache writes", COLOURS["cache_write"]),
    ("output", "output", COLOURS["output"]),
)


def usage_figure(summary: Mapping[str, Any], *, theme: Theme = "light") -> Figure | None:
    """None when no period has a priced call (there is nothing to draw)."""
    periods = [p for p in summary.get("periods") or [] if p.get("cost_usd") is not None]
    if not periods:
        return None
    colours = _colours(theme)
    xs = [p["period"] for p in periods]
    data = [
        {
            "type": "bar",
            "name": label,
            "x": xs,
            "y": [round(p["by_kind"][kind] or 0.0, 6) for p in periods],
            "marker": {"color": colour},
            "hovertemplate": f"%{{x}}<br>{label}: {plotly_money('y')}<extra></extra>",
        }
        for kind, label, colour in KIND_LABELS
    ]
    unit = {"daily": "day", "weekly": "week (from Monday)", "monthly": "month"}
    layout = _layout(
        theme,
        f"Spend per {unit.get(summary.get('period', ''), 'period')}, by kind of token",
        barmode="stack",
        xaxis=_axis(colours, "", type="category"),
        yaxis=_axis(colours, "US dollars", tickprefix="$", tickformat=",", rangemode="tozero"),
    )
    return {"data": data, "layout": layout}
