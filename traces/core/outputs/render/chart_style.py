"""What every Plotly figure shares: the themes' colours, the layout and axes, and escaping.

Plotly renders hover text, text and tick labels as pseudo-HTML, so every untrusted
string (tool names, ids, model names) goes through `escape` before it reaches a figure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from ..escaping import escape_html

Theme = Literal["light", "dark"]
Figure = dict[str, Any]

BUCKET_LABELS = (
    ("prefix", "prefix (system, tools, first message)"),
    ("replayed_output", "replayed output"),
    ("tool_results", "tool results"),
    ("other", "other"),
)
COLOURS = {
    "prefix": "#6366f1",
    "replayed_output": "#14b8a6",
    "tool_results": "#f59e0b",
    "other": "#94a3b8",
    "cache_read": "#22c55e",
    "cache_write": "#ec4899",
    "output": "#0ea5e9",
    "actual": "#6366f1",
    "uncached": "#ef4444",
    "prefix_cached": "#14b8a6",
    "model": "#6366f1",
    "code": "#94a3b8",
    "tool": "#f59e0b",
}
THEMES: dict[str, dict[str, str]] = {
    "light": {
        "font": "#1b1d24",
        "muted": "#646b7a",
        "grid": "rgba(100, 107, 122, 0.18)",
        "line": "rgba(100, 107, 122, 0.45)",
        "hover_bg": "#ffffff",
        "hover_border": "#e2e4ea",
    },
    "dark": {
        "font": "#e7e9ee",
        "muted": "#9aa1b0",
        "grid": "rgba(154, 161, 176, 0.18)",
        "line": "rgba(154, 161, 176, 0.45)",
        "hover_bg": "#1f232c",
        "hover_border": "#2c313c",
    },
}
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif"
COMPACTION_COLOUR = "#b45309"
"""Compaction marks: the warning amber, readable on the light and the dark theme."""
MANY_CALLS = 100
"""Above this many calls bars touch (bargap 0) and markers and per-bar text are dropped."""
TOP_RESULTS = 20
ESTIMATE_NOTE = " (≈ estimate)"


def escape(value: Any, limit: int = 80) -> str:
    """Untrusted text made safe for Plotly's pseudo-HTML labels, and kept short."""
    text = " ".join(str(value).split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return escape_html(text, quote=False)


# -- shared layout ---------------------------------------------------------------------


def _axis(colours: Mapping[str, str], title: str, **extra: Any) -> dict[str, Any]:
    return {
        "title": {"text": title},
        "gridcolor": colours["grid"],
        "linecolor": colours["line"],
        "zerolinecolor": colours["line"],
        "tickfont": {"color": colours["muted"]},
        "automargin": True,
        **extra,
    }


def _layout(theme: Theme, title: str, **extra: Any) -> dict[str, Any]:
    colours = THEMES.get(theme, THEMES["light"])
    return {
        "title": {"text": title, "x": 0, "xanchor": "left", "font": {"size": 15}},
        "paper_bgcolor": "rgba(0,0,0,0)",
        "plot_bgcolor": "rgba(0,0,0,0)",
        "font": {"family": FONT, "size": 12, "color": colours["font"]},
        "margin": {"l": 64, "r": 24, "t": 56, "b": 48},
        "legend": {
            "orientation": "h",
            "y": -0.18,
            "x": 0,
            "traceorder": "normal",
            "font": {"color": colours["font"]},
        },
        "hoverlabel": {
            "bgcolor": colours["hover_bg"],
            "bordercolor": colours["hover_border"],
            "font": {"family": FONT, "color": colours["font"]},
        },
        "hovermode": "closest",
        **extra,
    }


def _colours(theme: Theme) -> dict[str, str]:
    return THEMES.get(theme, THEMES["light"])


def _calls(report: Mapping[str, Any], loop: int | None) -> list[Mapping[str, Any]]:
    calls = report.get("calls") or []
    if loop is None:
        return list(calls)
    return [c for c in calls if c.get("loop") == loop]


def _runs(report: Mapping[str, Any], loop: int | None) -> list[Mapping[str, Any]]:
    runs = report.get("tool_runs") or []
    if loop is None:
        return list(runs)
    return [r for r in runs if r.get("loop") == loop]


def _loop_title(loop: int | None) -> str:
    return f" · loop {loop}" if loop is not None else ""
