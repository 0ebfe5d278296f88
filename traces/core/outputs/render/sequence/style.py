"""The sequence diagram's look: lane positions, row heights, stroke widths and colours.

Colours are CSS variables with fallbacks, so the SVG works standalone and page rules win.
"""

from __future__ import annotations

from typing import Literal

Spacing = Literal["step", "time"]

ACCENT = "var(--accent, #4f46e5)"
MUTED = "var(--muted, #646b7a)"
ERROR = "var(--error, #c62828)"
WARN = "var(--warn, #a15c00)"
BORDER = "var(--border, #c9ccd6)"
SEVERITY_COLOURS = {"error": ERROR, "warning": WARN, "info": ACCENT}

MAX_TOOL_LANES = 6
MIN_STROKE, MAX_STROKE = 1.5, 9.0
UNBILLED_STROKE = 1.25
DASH = "5 4"
DASH_RANGE = "\u2013"
"""An en dash, for ranges of calls."""
X_MODEL = 130.0
X_CODE = 470.0
TOOL_GAP = 210.0
TOOL_STEP = 150.0
RIGHT_PAD = 240.0
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
