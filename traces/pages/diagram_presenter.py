"""The trace page's sequence diagram: the window the query string asks for, drawn by
the core's renderer, with the links and choices around it and the chart figures."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe

from traces import models
from traces.core.outputs import render
from traces.core.outputs.render import charts as render_charts
from traces.core.outputs.render.sequence import MAX_TOOL_LANES, DiagramIndex, diagram_index
from traces.core.outputs.render.sequence.overview import OverviewMarks
from traces.core.outputs.render.sequence.window_parts import (
    WindowHead,
    parts_for_window,
    window_report,
)
from traces.core.outputs.report_views import loop_figures
from traces.core.report_types import StoredReport
from traces.pages.links import TraceLinks
from traces.storage.report_cache import derived, load_report, report_cached
from traces.storage.report_parts import report_head, report_window_parts
from traces.storage.report_views import figures_name, keeps_views, stored_view

SPACINGS = ("step", "time")
CHART_KEYS = ("growth", "cost", "timeline", "resend_results", "resend_by_tool")
WINDOW_SIZES = (30, 60, 120)
"""The window sizes offered; a long loop opens on the smallest (see `LONG_LOOP_CALLS`)."""
LONG_LOOP_CALLS = 500
"""A loop of more calls is long: its figures are not embedded (the page names
`figures.json` and charts.js fetches them: at 2,000 points a series, the charts' budget,
they weigh over a megabyte) and its diagram opens on `LONG_LOOP_WINDOW` calls (the wide
layout of a 60-call window is some 250 KB; the tables below follow the window), so
the page of a 20,000-call loop stays under 500 KB."""
LONG_LOOP_WINDOW = 30
Layout = Literal["wide", "compact"]
LAYOUTS: tuple[Layout, ...] = ("wide", "compact")
PAGE_LAYOUTS: tuple[Layout, ...] = ("wide",)
"""The layouts the trace page is sent: the wide one only. The compact (phone) layout is as
heavy again and a desktop never shows it, so diagram_window.js fetches it (diagram.json,
`layout=compact`) when the viewport is a phone's; without scripts a phone scales the wide
one to its width (CSS), which still never scrolls the page sideways."""
WindowSource = Callable[[int, int, int], tuple[Any, DiagramIndex]]
"""(loop, start, window) -> the report and diagram index a window is drawn from."""


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
    """The layouts asked for, wide first (desktops), then compact (phones); CSS shows one."""
    overview: SafeString | None
    """None when the page keeps its strip and only moves its highlight (a window move)."""
    overview_current: tuple[float, float]
    """(x, width) of the shown window's highlight on the strip."""
    overview_title: str
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


def _diagram_index(trace: models.Trace, report: StoredReport) -> DiagramIndex:
    """The report's diagram index, kept beside the report when this process keeps the
    report: the index points into the report's calls and runs, so keeping it for a
    report too large for the cache (REPORT_CACHE_BYTES) would keep most of that report
    in memory past the cache's bound. Such a report is decoded and indexed per request."""
    if report_cached(trace):
        return derived(trace, "diagram index", lambda: diagram_index(report))
    return diagram_index(report)


def window_loop(report: Any, params: Any) -> int:
    """The loop the query string's `loop` names when the report has it, else the one the
    outcome names (the agent's own loop), else the first (the report has loops)."""
    loops = [loop["index"] for loop in report.get("loops", [])]
    outcome = report.get("outcome")
    default_loop = (outcome.get("loop") if outcome else None) or loops[0]
    loop = _int_param(params, "loop", default_loop, min(loops), max(loops))
    return loop if loop in loops else default_loop


def diagram_context(
    trace: models.Trace,
    params: Any,
    *,
    always_figures: bool = False,
    figures: bool = True,
    overview: bool = True,
    head: WindowHead | None = None,
    window_source: WindowSource | None = None,
    overviews: Mapping[str, OverviewMarks] | None = None,
    layouts: tuple[Layout, ...] = LAYOUTS,
) -> dict[str, Any]:
    """The sequence diagram window, overview strip and chart figures for the trace page.

    The loop defaults to the one the outcome names (the agent's own loop); the window,
    spacing and loop come from the query string so every view has a shareable URL. The
    figures of a long loop are left to `figures.json` (`figures_src`; each key None)
    unless `always_figures` (the live redraw, which has no page to fetch them).
    A window moved in place needs neither the figures (they follow the loop, not the
    window) nor the strip (the page moves its highlight): without them, and with the
    report's diagram index kept beside the cached report, a move reads only its calls.
    Given the report's `head` (its loops and outcome) and a `window_source` (the report
    and index of a window's parts), the window is drawn without the whole report; with
    the loops' strip marks (`overviews`, a page summary's), so is the strip.
    `layouts` are the drawings sent (see `PAGE_LAYOUTS`).
    """
    report: Any = head if head is not None else trace.report
    loops = [loop["index"] for loop in report.get("loops", [])]
    if not loops:
        return {
            "diagram": None,
            "figures": {},
            "chart_keys": CHART_KEYS,
            "chart_themes": render_charts.THEMES,
        }
    loop = window_loop(report, params)
    loop_sizes = {entry["index"]: len(entry["calls"]) for entry in report.get("loops", [])}
    default_window = LONG_LOOP_WINDOW if loop_sizes.get(loop, 0) > LONG_LOOP_CALLS else 60
    window = _int_param(params, "window", default_window, 10, 200)
    start = _int_param(params, "start", 1, 1, 1_000_000)
    spacing: Literal["step", "time"] = "time" if params.get("spacing") == "time" else "step"
    all_lanes = params.get("lanes") == "all"

    def href(window_start: int, lanes: bool = all_lanes) -> str:
        query = f"?loop={loop}&start={window_start}&window={window}&spacing={spacing}"
        return query + ("&lanes=all" if lanes else "") + "#sequence"

    drawn_from, index = (
        window_source(loop, start, window)
        if window_source is not None
        else (report, _diagram_index(trace, report))
    )
    view = render.sequence_view(
        drawn_from,
        links=TraceLinks(trace.pk),
        loop=loop,
        start=start,
        window=window,
        spacing=spacing,
        window_href=href,
        all_lanes=all_lanes,
        compact="compact" in layouts,
        wide="wide" in layouts,
        overview=overview,
        index=index,
        overview_marks=overviews.get(str(loop)) if overviews is not None else None,
    )
    meta = view["window"]
    order = index.lane_order
    grouped = tuple(order[MAX_TOOL_LANES:]) if len(order) > MAX_TOOL_LANES else ()
    return {
        "diagram": DiagramView(
            svg=mark_safe(view["svg"] + view.get("compact_svg", "")),
            overview=mark_safe(view["overview"]) if view["overview"] is not None else None,
            overview_current=view["overview_current"],
            overview_title=view["overview_title"],
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
                ((n, size) for n, size in loop_sizes.items() if size > 1 or n == loop),
                key=lambda item: (-item[1], item[0]),
            )[:30],
        ),
        **(
            _figures(trace, report, loop, always_figures)
            if figures
            else {"figures": {}, "figures_src": None}
        ),
        "chart_keys": CHART_KEYS,
        "chart_themes": render_charts.THEMES,
    }


def _figures(trace: models.Trace, report: StoredReport, loop: int, always: bool) -> dict[str, Any]:
    if always or figures_inline(report, loop):
        return {"figures": chart_figures(trace, report, loop), "figures_src": None}
    src = reverse("traces:figures-json", args=[trace.pk]) + f"?loop={loop}"
    return {"figures": dict.fromkeys(CHART_KEYS), "figures_src": src}


def chart_source(trace: models.Trace) -> Mapping[str, Any]:
    """What the charts' loop is chosen from (the report's loops and outcome): for a long
    trace fetched without its report that this process does not keep decoded, the head
    of its parts (traces.storage.report_parts); else the report, loaded if need be."""
    deferred = "report" in trace.get_deferred_fields()
    if deferred and keeps_views(trace) and not report_cached(trace):
        head = report_head(trace)
        if head is not None:
            return head
    return whole_report_of(trace, {})


def whole_report_of(trace: models.Trace, source: Mapping[str, Any]) -> Mapping[str, Any]:
    """`source` when it is the trace's whole report (it has calls), else the report."""
    if "calls" in source:
        return source
    if "report" in trace.get_deferred_fields():
        load_report(trace)
    return trace.report or {}


def chart_figures(
    trace: models.Trace, source: Mapping[str, Any], loop: int | None
) -> dict[str, Any]:
    """The charts of `loop`: a long trace's kept beside its report (computed from the
    report on their first request, traces.storage.report_views), any other's computed
    from `source` (the report, or its head: the report is then read)."""
    if not keeps_views(trace):
        return loop_figures(whole_report_of(trace, source), loop)
    return stored_view(
        trace, figures_name(loop), lambda: loop_figures(whole_report_of(trace, source), loop)
    )


def _window_parts_source(trace: models.Trace) -> dict[str, Any]:
    """The head and window source of a trace fetched without its report, when its report
    has parts (traces.storage.report_parts) and this process does not keep the report
    decoded (a cached report and its index draw faster); else its report, loaded."""
    head = None if report_cached(trace) else report_head(trace)
    if head is not None:
        source = parts_window_source(
            trace, head, lambda numbers: report_window_parts(trace, numbers)
        )
        return {"head": head, "window_source": source}
    if "report" in trace.get_deferred_fields():
        load_report(trace)
    return {}


def parts_window_source(
    trace: models.Trace, head: WindowHead, read_parts: Callable[[list[int]], list[Any] | None]
) -> WindowSource:
    """The window source of a report's `head` and parts (`read_parts(numbers)`: None
    when any is missing, the report changed since the head was read: the report, loaded)."""

    def source(loop: int, start: int, window: int) -> tuple[Any, DiagramIndex]:
        numbers = parts_for_window(head, loop=loop, start=start, window=window)
        parts = read_parts(numbers)
        if parts is None:
            load_report(trace)
            return trace.report, _diagram_index(trace, trace.report)
        return window_report(head, parts)

    return source


def window_move(trace: models.Trace, params: Any) -> dict[str, Any]:
    """What moving the window in place changes, as JSON for the page's script: the
    drawing, the window, its neighbours' and the lanes' links (relative to the trace
    page, as the page's own) and the strip's highlight. No figures, no strip. `trace` may
    come without its report: a long one's window is drawn from its report's parts.
    `layout` ("wide" or "compact") asks for the drawing the page shows; without it both."""
    asked = params.get("layout")
    layouts: tuple[Layout, ...] = (asked,) if asked in LAYOUTS else LAYOUTS
    diagram: DiagramView | None = diagram_context(
        trace,
        params,
        figures=False,
        overview=False,
        layouts=layouts,
        **_window_parts_source(trace),
    )["diagram"]
    if diagram is None:
        return {"svg": None}
    x, width = diagram.overview_current
    return {
        "svg": str(diagram.svg),
        "window": diagram.window,
        "overview_current": {"x": x, "width": width},
        "overview_title": diagram.overview_title,
        "previous_href": diagram.previous_href,
        "next_href": diagram.next_href,
        "lanes_href": diagram.lanes_href,
        "spacing": diagram.spacing,
        "window_size": diagram.window_size,
    }
