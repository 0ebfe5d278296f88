"""The whole loop as a thin strip: one mark per call (per pixel column past the strip's
width), the shown window highlighted, each window's region a link, so a 50,000-call loop
is still one small document."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypedDict

from .. import downsample
from ..svg import Element, format_number, svg_root
from .index import DiagramIndex, call_input_tokens, diagram_index
from .style import ACCENT, DASH_RANGE, ERROR
from .window import SequenceWindow


class OverviewMarks(TypedDict):
    """A loop's strip marks: its tallest call's input, and per pixel column (a group of
    calls) [first position, last position, calls, tallest input, red], positions from 0."""

    peak: int
    groups: list[list[Any]]


def overview_marks(
    indexes: Sequence[int], index: DiagramIndex, width: float = 960.0
) -> OverviewMarks:
    """The strip's marks of the loop of calls `indexes`: what the strip reads of every
    call, kept in the page summary (traces.core.outputs.page_summary) at this resolution."""
    by_index, red = index.by_index, index.red_calls
    tokens = [call_input_tokens(by_index[i])[0] if i in by_index else 0 for i in indexes]
    # More calls than pixel columns: one mark a column (its tallest call, red when any of
    # its calls is), so 20,000 calls draw 960 marks, not 20,000 of a twentieth of a pixel.
    groups = downsample.buckets(indexes, budget=max(1, int(width)))
    return {
        "peak": max(tokens, default=0) or 1,
        "groups": [
            [
                group.start,
                group.end,
                group.size,
                max(tokens[group.start : group.end + 1]),
                any(i in red for i in indexes[group.start : group.end + 1]),
            ]
            for group in groups
        ],
    }


def draw_overview(
    report: Mapping[str, Any],
    meta: SequenceWindow,
    *,
    window_href: Callable[[int], str] | None = None,
    width: float = 960.0,
    height: float = 56.0,
    index: DiagramIndex | None = None,
    marks: OverviewMarks | None = None,
) -> Element:
    """The overview strip of `meta`'s loop as an element tree; marks are drawn as two
    paths, not one element per call, so a 50,000-call loop stays a small document.

    One thin mark per call (height = input tokens, red for failed calls and calls with
    error findings), the shown window highlighted, and each window's region a link to
    `window_href(start)` (default "?loop=L&start=S&window=W"). Given the loop's `marks`
    (its page summary's), the strip is drawn without the loop's calls.
    """
    if window_href is None:

        def window_href(position: int) -> str:
            loop_part = f"loop={meta.loop}&" if meta.loop is not None else ""
            return f"?{loop_part}start={position}&window={meta.window}"

    root = svg_root(
        width,
        height,
        {
            "class": "seq-overview",
            "data-loop": meta.loop,
            "data-start": meta.start,
            "data-end": meta.end,
            "data-total": meta.total,
            "preserveAspectRatio": "none",
        },
    )
    root.add("title", text=overview_title(meta))
    if not meta.total:
        return root
    if marks is None:
        marks = overview_marks(meta.indexes, index or diagram_index(report), width)
    slot = width / meta.total
    usable = height - 6
    peak = marks["peak"]
    normal: list[str] = []
    failed: list[str] = []
    for start, _end, size, amount, red in marks["groups"]:
        mark = max(1.5, usable * amount / peak)
        x = start * slot
        bar = max(size * slot * 0.8, min(size * slot, 1.0))
        target = failed if red else normal
        target.append(
            f"M{format_number(x)},{format_number(height - mark)}"
            f"h{format_number(bar)}v{format_number(mark)}h{format_number(-bar)}z"
        )
    if normal:
        root.add("path", {"class": "ov-mark", "d": "".join(normal), "fill": ACCENT})
    if failed:
        root.add("path", {"class": "ov-mark error", "d": "".join(failed), "fill": ERROR})
    _overview_windows(root, meta, window_href, width, height)
    return root


MAX_OVERVIEW_LINKS = 400


def _overview_windows(
    root: Element,
    meta: SequenceWindow,
    window_href: Callable[[int], str],
    width: float,
    height: float,
) -> None:
    slot = width / meta.total
    regions = math.ceil(meta.total / meta.window)
    stride = meta.window * math.ceil(regions / MAX_OVERVIEW_LINKS)
    links = root.add("g", {"class": "ov-windows"})
    for position in range(1, meta.total + 1, stride):
        last = min(meta.total, position + stride - 1)
        span = f"{position}{DASH_RANGE}{last}"
        link = links.add("a", {"href": window_href(position), "aria-label": f"Show calls {span}"})
        region = link.add(
            "rect",
            {
                "class": "ov-window",
                "x": (position - 1) * slot,
                "y": 0,
                "width": (last - position + 1) * slot,
                "height": height,
                "fill": "transparent",
            },
        )
        region.add("title", text=f"calls {span}")
    x, region_width = current_region(meta, width)
    root.add(
        "rect",
        {
            "class": "ov-current",
            "x": x,
            "y": 0.5,
            "width": region_width,
            "height": height - 1,
            "fill": ACCENT,
            "fill-opacity": 0.14,
            "stroke": ACCENT,
            "stroke-width": 1,
            "pointer-events": "none",
        },
    )


def current_region(meta: SequenceWindow, width: float = 960.0) -> tuple[float, float]:
    """(x, width) of the shown window's highlight on a strip `width` wide: a page that
    moves the window in place moves the highlight without redrawing the whole strip."""
    slot = width / meta.total if meta.total else 0.0
    return (meta.start - 1) * slot, max(2.0, meta.shown * slot)


def overview_title(meta: SequenceWindow) -> str:
    """The strip's title: the loop's size and, when it has calls, the window shown."""
    shown = f"; calls {meta.start}{DASH_RANGE}{meta.end} shown" if meta.total else ""
    return f"Overview of the loop: {meta.total:,} calls{shown}"
