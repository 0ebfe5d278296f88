"""The trace page's sequence diagram: the window the query string asks for, drawn by
the core's renderer, with the links and choices around it and the chart figures."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe

from traces import models
from traces.core.outputs import render
from traces.core.outputs.render import charts as render_charts
from traces.core.outputs.render.sequence import MAX_TOOL_LANES, tool_lane_order
from traces.core.report_types import StoredReport
from traces.pages.links import TraceLinks

SPACINGS = ("step", "time")
CHART_KEYS = ("growth", "cost", "timeline", "resend_results", "resend_by_tool")
WINDOW_SIZES = (30, 60, 120)
"""The window sizes offered; a long loop opens on the smallest (see `LONG_LOOP_CALLS`)."""
LONG_LOOP_CALLS = 500
"""A loop of more calls is long: its figures are not embedded (the page names
`figures.json` and charts.js fetches them: at 2,000 points a series, the charts' budget,
they weigh over a megabyte) and its diagram opens on `LONG_LOOP_WINDOW` calls (both
layouts of a 60-call window are some 450 KB; the tables below follow the window), so
the page of a 20,000-call loop stays under 500 KB."""
LONG_LOOP_WINDOW = 30


def figures_inline(report: StoredReport, loop: int | None) -> bool:
    """Whether the charts of `loop` (None: every call) are small enough to embed."""
    if loop is None:
        return len(report.get("calls") or []) <= LONG_LOOP_CALLS
    sizes = (len(e["calls"]) for e in report.get("loops", []) if e["index"] == loop)
    return next(sizes, 0) <= LONG_LOOP_CALLS


def _int_param(params: Any, name: str, default: int, low: int, high: int) -> int:
    try:
        value = int(params.get(name, default))
    except (TypeError, ValueError):
        return default
    return max(low, min(high, value))


@dataclass(frozen=True)
class DiagramView:
    """The sequence diagram window of the trace page: the SVG, the overview strip, and
    the links and choices around it (previous/next window, loop, spacing, size)."""

    svg: SafeString
    """Both layouts: the wide one (desktops) and the compact one (phones); CSS shows one."""
    overview: SafeString
    window: dict[str, Any]
    """The window `render.sequence_view` drew: loop, first and last call, neighbours."""
    loop: int
    spacing: str
    window_size: int
    previous_href: str | None
    next_href: str | None
    loop_choices: list[tuple[int, int]]
    """(loop, calls) for the loop picker: the 30 largest loops with more than one call."""
    grouped_tools: tuple[str, ...] = ()
    """The tools the wide layout groups into its "other tools" lane (empty: all have one)."""
    all_lanes: bool = False
    lanes_href: str | None = None
    """The link that expands the grouped lanes (or groups them again)."""
    spacings: tuple[str, ...] = SPACINGS
    window_sizes: tuple[int, ...] = WINDOW_SIZES


def diagram_context(
    trace: models.Trace, params: Any, *, always_figures: bool = False
) -> dict[str, Any]:
    """The sequence diagram window, overview strip and chart figures for the trace page.

    The loop defaults to the one the outcome names (the agent's own loop); the window,
    spacing and loop come from the query string so every view has a shareable URL. The
    figures of a long loop are left to `figures.json` (`figures_src`; each key None)
    unless `always_figures` (the live redraw, which has no page to fetch them).
    """
    report: StoredReport = trace.report
    loops = [loop["index"] for loop in report.get("loops", [])]
    if not loops:
        return {
            "diagram": None,
            "figures": {},
            "chart_keys": CHART_KEYS,
            "chart_themes": render_charts.THEMES,
        }
    outcome = report.get("outcome")
    default_loop = (outcome.get("loop") if outcome else None) or loops[0]
    loop = _int_param(params, "loop", default_loop, min(loops), max(loops))
    if loop not in loops:
        loop = default_loop
    loop_sizes = {entry["index"]: len(entry["calls"]) for entry in report.get("loops", [])}
    default_window = LONG_LOOP_WINDOW if loop_sizes.get(loop, 0) > LONG_LOOP_CALLS else 60
    window = _int_param(params, "window", default_window, 10, 200)
    start = _int_param(params, "start", 1, 1, 1_000_000)
    spacing: Literal["step", "time"] = "time" if params.get("spacing") == "time" else "step"
    all_lanes = params.get("lanes") == "all"

    def href(window_start: int, lanes: bool = all_lanes) -> str:
        query = f"?loop={loop}&start={window_start}&window={window}&spacing={spacing}"
        return query + ("&lanes=all" if lanes else "") + "#sequence"

    view = render.sequence_view(
        report,
        links=TraceLinks(trace.pk),
        loop=loop,
        start=start,
        window=window,
        spacing=spacing,
        window_href=href,
        all_lanes=all_lanes,
        compact=True,
    )
    meta = view["window"]
    order = tool_lane_order(report)
    grouped = tuple(order[MAX_TOOL_LANES:]) if len(order) > MAX_TOOL_LANES else ()
    return {
        "diagram": DiagramView(
            svg=mark_safe(view["svg"] + view["compact_svg"]),
            overview=mark_safe(view["overview"]),
            window=meta,
            loop=loop,
            spacing=spacing,
            window_size=window,
            previous_href=href(meta["previous_start"]) if meta["previous_start"] else None,
            next_href=href(meta["next_start"]) if meta["next_start"] else None,
            grouped_tools=grouped,
            all_lanes=all_lanes,
            lanes_href=href(meta["start"], not all_lanes) if grouped else None,
            loop_choices=sorted(
                ((index, size) for index, size in loop_sizes.items() if size > 1 or index == loop),
                key=lambda item: (-item[1], item[0]),
            )[:30],
        ),
        **_figures(trace, report, loop, always_figures),
        "chart_keys": CHART_KEYS,
        "chart_themes": render_charts.THEMES,
    }


def _figures(trace: models.Trace, report: StoredReport, loop: int, always: bool) -> dict[str, Any]:
    if always or figures_inline(report, loop):
        return {"figures": render.figures(report, theme="light", loop=loop), "figures_src": None}
    src = reverse("traces:figures-json", args=[trace.pk]) + f"?loop={loop}"
    return {"figures": dict.fromkeys(CHART_KEYS), "figures_src": src}
