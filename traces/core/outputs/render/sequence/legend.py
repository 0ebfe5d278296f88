"""The diagram's frame: the legend over it and the lane titles and lifelines, laid out
for the wide or the compact geometry (short legend texts in two rows on phones)."""

from __future__ import annotations

from ..svg import Element, truncate
from .arrows import badge_shape
from .scene import Scene
from .style import (
    ACCENT,
    BORDER,
    BOTTOM_PAD,
    DASH,
    ERROR,
    LEGEND_HEIGHT,
    MUTED,
    OTHER_TOOLS,
    UNBILLED_STROKE,
    WARN,
)

LEGEND_ITEMS = [
    (ACCENT, 3.0, None, "billed model call (width grows with tokens)", "billed call"),
    (MUTED, UNBILLED_STROKE, DASH, "tool run in your code: not billed", "tool run: not billed"),
    (ERROR, 2.0, None, "error, dangling call or orphan result", "error, dangling, orphan"),
]
LEGEND_BADGE_TEXT = "finding (links to the call)"
LEGEND_BADGE_SHORT = "finding"
LEGEND_WIDTH = (
    12.0
    + sum(40 + len(text) * 6.0 for *_, text, _short in LEGEND_ITEMS)
    + 24
    + len(LEGEND_BADGE_TEXT) * 6.0
)
"""The legend's width: a narrow diagram (one tool lane) is widened so it is not cut."""
COMPACT_COLUMN = 176.0
"""The compact legend's second column: two items a row, two rows."""


def draw_legend(root: Element, compact: bool) -> None:
    legend = root.add("g", {"class": "seq-legend", "font-size": 11, "fill": "currentColor"})
    y, x = 16.0, 12.0
    for n, (colour, width, dash, text, short) in enumerate(LEGEND_ITEMS):
        if compact:
            x, y = 12.0 + COMPACT_COLUMN * (n % 2), 16.0 + 16.0 * (n // 2)
            text = short
        legend.add(
            "line",
            {
                "x1": x,
                "y1": y - 4,
                "x2": x + 28,
                "y2": y - 4,
                "stroke": colour,
                "stroke-width": width,
                "stroke-dasharray": dash,
            },
        )
        legend.add("text", {"x": x + 34, "y": y}, text=text)
        x += 40 + len(text) * 6.0
    if compact:
        x, y = 12.0 + COMPACT_COLUMN, 32.0
    badge = legend.add("g", {"class": "badge severity-warning"})
    badge_shape(badge, x + 6, y - 4, WARN)
    legend.add(
        "text", {"x": x + 16, "y": y}, text=LEGEND_BADGE_SHORT if compact else LEGEND_BADGE_TEXT
    )


def draw_header(root: Element, scene: Scene, height: float) -> None:
    g = scene.geometry
    header = root.add("g", {"class": "seq-header", "font-weight": 600, "fill": "currentColor"})
    lifelines = root.add("g", {"class": "lifelines", "stroke": BORDER, "stroke-width": 1})
    title_y = LEGEND_HEIGHT + g.legend_extra + 22
    lanes = [("model", "model", g.x_model), ("your code", "code", g.x_code)]
    lanes += [(name, "tool", x) for name, x in scene.lanes.items()]
    limit = 12 if g.compact else 18
    for name, kind, x in lanes:
        grouped = kind == "tool" and name in (OTHER_TOOLS, "tools") and scene.grouped
        title = header.add(
            "text",
            {
                "class": f"seq-lane-title {kind}" + (" grouped" if grouped else ""),
                "x": x,
                "y": title_y,
                "text-anchor": "middle",
            },
            text=truncate(name, limit),
        )
        if grouped:
            title.add("title", text=f"tool lane {name}: {', '.join(scene.grouped)}")
        elif kind == "tool":
            title.add("title", text=f"tool lane: {name}")
        lifelines.add(
            "line",
            {
                "class": f"lifeline {kind}",
                "x1": x,
                "y1": title_y + 8,
                "x2": x,
                "y2": height - BOTTOM_PAD / 2,
                "stroke-dasharray": "2 4" if kind == "tool" else None,
            },
        )
