"""The sequence diagram's look: lane positions, row heights, stroke widths and colours.

Colours are CSS variables with fallbacks, so the SVG works standalone and page rules win.
"""

from __future__ import annotations

from typing import Literal

from traces.core.records import dataclass, replace

Spacing = Literal["step", "time"]

ACCENT = "var(--accent, #4f46e5)"
MUTED = "var(--muted, #646b7a)"
ERROR = "var(--error, #c62828)"
WARN = "var(--warn, #a15c00)"
BORDER = "var(--border, #c9ccd6)"
SEVERITY_COLOURS = {"error": ERROR, "warning": WARN, "info": ACCENT}

MAX_TOOL_LANES = 4
"""Tool lanes a wide diagram draws before it groups the rarer tools into OTHER_TOOLS: with
that lane too, the diagram is 1,280 units wide and fits a desktop page scaled by < 5 %."""
OTHER_TOOLS = "other tools"
MIN_STROKE, MAX_STROKE = 1.5, 9.0
UNBILLED_STROKE = 1.25
DASH = "5 4"
DASH_RANGE = "\u2013"
"""An en dash, for ranges of calls."""
X_MODEL = 130.0
X_CODE = 440.0
TOOL_GAP = 170.0
TOOL_STEP = 120.0
RIGHT_PAD = 190.0
ORPHAN_OFFSET = 110.0
LEGEND_HEIGHT = 28.0
HEADER_HEIGHT = 64.0
BOTTOM_PAD = 24.0
FAN_STEP = 14.0
FAN_SPREAD_MAX = 80.0
MAX_BADGES = 3
ROW_HEIGHT = {
    "results": 30.0,
    "request": 36.0,
    "response": 32.0,
    "tool-calls": 30.0,
    "compaction": 22.0,
}
ROW_MIN_HEIGHT = {
    "results": 22.0,
    "request": 26.0,
    "response": 24.0,
    "tool-calls": 22.0,
    "compaction": 18.0,
}


@dataclass(frozen=True, slots=True)
class Geometry:
    """Where the lifelines stand and how long labels may be: one wide layout for desktops,
    one compact for phones (all tools folded into one lane, short labels, a legend in two
    rows) so a 390 px screen shows the diagram scaled to its width, not scrolled sideways.
    """

    x_model: float
    x_code: float
    tool_gap: float
    tool_step: float
    right_pad: float
    orphan_offset: float
    max_lanes: int | None
    """Tool lanes before the rest are grouped; None: one lane per tool; 0: one "tools" lane."""
    compact: bool
    legend_extra: float
    """Height added under the legend (a second row in the compact layout)."""


WIDE = Geometry(
    x_model=X_MODEL,
    x_code=X_CODE,
    tool_gap=TOOL_GAP,
    tool_step=TOOL_STEP,
    right_pad=RIGHT_PAD,
    orphan_offset=ORPHAN_OFFSET,
    max_lanes=MAX_TOOL_LANES,
    compact=False,
    legend_extra=0.0,
)
ALL_LANES = replace(WIDE, max_lanes=None)
COMPACT = Geometry(
    x_model=56.0,
    x_code=232.0,
    tool_gap=112.0,
    tool_step=0.0,
    right_pad=76.0,
    orphan_offset=36.0,
    max_lanes=0,
    compact=True,
    legend_extra=16.0,
)
