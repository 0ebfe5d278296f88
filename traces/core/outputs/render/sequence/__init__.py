"""The loop as a server-rendered SVG sequence diagram, drawn from a stored report dict.

Three kinds of lifeline, time running down: the model (left), your code (middle) and the
tools (right: one lane per tool name for the trace's five most used tools, in that order
in every window, the rest grouped into one "other tools" lane; the compact phone layout
folds them all into one "tools" lane and shortens labels), so billed traffic stays left
of your code and unbilled traffic right of it and no arrow crosses the model's line.
Arrows that touch the model are billed and drawn solid, fatter as the transcript grows
(stroke width by the square root of input tokens over the loop's largest call); the tool
run and its result never touch the model and are drawn dashed and grey, labelled "not
billed". A parallel batch is a fan from one point; a dangling tool call ends in a red
open arrowhead with no return; an orphan result arrives in red from nowhere; a failed
call's response is red and carries the error. Each finding of a shown call is a badge on
its arrow (the tool's arrow when it names a tool call id, else the call's request)
linking to the call's findings.

Only a window of the loop's calls is drawn (`start`, `window`, positions within the
loop, 1-based) so a 2,000-call loop never becomes one huge document; `render_overview`
draws the whole loop as a thin strip to move the window, and `sequence_window` says
which calls are shown and where the previous and next windows start. `sequence_view`
is the one entry point a page needs: it works out the window once and draws both.

The package, one job a module: `window` (which calls), `index` (what every window
shares, gathered once per report), `scene` (what the window needs from the report),
`layout` (rows and their y), `draw` (legend, lanes, each row's arrows), `arrows` (arrow
geometry and badges), `text` (hover titles and aria labels), `overview` (the strip),
`style` (positions, sizes, colours).

Every arrow is its own link, `<a href="{links.call(n)}" aria-label=... class="arrow
..." data-kind data-billed data-call>` (its aria-label starts with its visible label; only
the request arrow is a tab stop, and its name tells the whole call: one tab stop per
call; the others and the badges carry tabindex="-1"), holding a `<title>` with the call's numbers
(hover), so tests and users' scripts can read the diagram:
- `data-kind`: "request", "response", "tool-call", "tool-result";
- `data-billed`: "true" / "false"; `data-call`: the call index (for a result, the
  request that carried it; else the call that asked); tool arrows add `data-tool-id`.

CSS classes (colours are also set as presentation attributes using CSS variables with
fallbacks, `var(--accent, #4f46e5)`, so the SVG works standalone; page rules win):
- root `svg.seq` + `wide` or `compact` (data-loop, data-start, data-end, data-total, data-spacing);
  `seq-legend`, `seq-header`, `seq-lane-title` (+ `model`, `code`, `tool`, `grouped`),
  `lifelines` > `lifeline` (+ `model`, `code`, `tool`), `seq-gutter` (call numbers and
  times), `seq-body` (all arrows), `seq-empty`;
- `a.arrow` with `billed` or `unbilled`, the kind (`request`, `response`, `tool-call`,
  `tool-result`) and states: `error` (failed call), `dangling`, `pending`, `orphan`,
  `history` (result of a call made before the trace began), `tool-error` (a result
  marked as an error, drawn red), `estimate` (token figure estimated), `parallel` (in a batch);
  inside: `arrow-hit` (wide transparent hover target), `arrow-line`, `arrow-head`
  (+ `open`), `arrow-label`, `orphan-origin`;
- `a.badge-link` > `g.badge` with `severity-error|warning|info` (a circle and "!",
  data-rule, data-severity, data-call, data-tool-id), or `g.badge.more` ("+n");
- overview `svg.seq-overview`: `ov-mark` (+ `error`), `ov-windows` > `a` > `ov-window`
  (one link per window), `ov-current` (the shown window).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..links import Links
from ..svg import Element
from .draw import draw_sequence
from .index import DiagramIndex, call_input_tokens, diagram_index, tool_lane_order
from .overview import OverviewMarks, current_region, draw_overview, overview_title
from .style import (
    ALL_LANES,
    COMPACT,
    MAX_STROKE,
    MAX_TOOL_LANES,
    MIN_STROKE,
    OTHER_TOOLS,
    WIDE,
    Geometry,
    Spacing,
)
from .window import SequenceWindow, UnknownLoop, sequence_window

__all__ = [
    "ALL_LANES",
    "COMPACT",
    "MAX_STROKE",
    "MAX_TOOL_LANES",
    "MIN_STROKE",
    "OTHER_TOOLS",
    "WIDE",
    "DiagramIndex",
    "Geometry",
    "SequenceWindow",
    "Spacing",
    "UnknownLoop",
    "build_overview",
    "build_sequence",
    "call_input_tokens",
    "diagram_index",
    "render_overview",
    "render_sequence",
    "sequence_view",
    "sequence_window",
    "tool_lane_order",
]


def sequence_view(
    report: Mapping[str, Any],
    *,
    links: Links,
    loop: int | None = None,
    start: int = 1,
    window: int = 60,
    spacing: Spacing = "step",
    window_href: Callable[[int], str] | None = None,
    all_lanes: bool = False,
    compact: bool = False,
    overview: bool = True,
    index: DiagramIndex | None = None,
    overview_marks: OverviewMarks | None = None,
    wide: bool = True,
) -> dict[str, Any]:
    """Everything a sequence page needs: {"svg", "overview", "window"} (window as dict),
    the window worked out once for both drawings; with `compact`, "compact_svg" too (the
    phone layout); `all_lanes` gives every tool its lane instead of grouping the rarer.
    Without `wide`, "svg" is empty: a phone's page asks for its compact layout alone (each
    layout is a few hundred kilobytes of markup the browser would parse for nothing).

    A page moving its window in place keeps its strip (`overview=False`: "overview" is
    None, "overview_current" the highlight's x and width, "overview_title" its title).
    `index` is the report's `diagram_index` when the caller keeps one (see `index`):
    without it each call walks the whole report once more. `overview_marks` are the
    loop's strip marks when the caller has them (a page summary's): the strip is then
    drawn without the loop's calls.
    """
    meta = sequence_window(report, loop=loop, start=start, window=window)
    index = index or diagram_index(report)
    geometry = ALL_LANES if all_lanes else WIDE
    view: dict[str, Any] = {
        "svg": (
            draw_sequence(report, meta, links, spacing, geometry, index).to_string() if wide else ""
        ),
        "overview": (
            draw_overview(
                report, meta, window_href=window_href, index=index, marks=overview_marks
            ).to_string()
            if overview
            else None
        ),
        "overview_current": current_region(meta),
        "overview_title": overview_title(meta),
        "window": meta.as_dict(),
    }
    if compact:
        view["compact_svg"] = draw_sequence(
            report, meta, links, spacing, COMPACT, index
        ).to_string()
    return view


def render_sequence(
    report: Mapping[str, Any],
    *,
    links: Links,
    loop: int | None = None,
    start: int = 1,
    window: int = 60,
    spacing: Spacing = "step",
    geometry: Geometry = WIDE,
) -> str:
    """The window's sequence diagram as an `<svg>` string (see the package docstring).

    Arrows link to `links.call(n)`, badges to `links.call_findings(n)`. `spacing="time"`
    places rows by real time when every shown call has a start time, and falls back to
    step spacing otherwise (`data-spacing` on the root says which was used).
    """
    return build_sequence(
        report,
        links=links,
        loop=loop,
        start=start,
        window=window,
        spacing=spacing,
        geometry=geometry,
    ).to_string()


def build_sequence(
    report: Mapping[str, Any],
    *,
    links: Links,
    loop: int | None = None,
    start: int = 1,
    window: int = 60,
    spacing: Spacing = "step",
    geometry: Geometry = WIDE,
) -> Element:
    """The diagram as an element tree (for counting elements or embedding)."""
    meta = sequence_window(report, loop=loop, start=start, window=window)
    return draw_sequence(report, meta, links, spacing, geometry)


def render_overview(
    report: Mapping[str, Any],
    *,
    loop: int | None = None,
    start: int = 1,
    window: int = 60,
    window_href: Callable[[int], str] | None = None,
    width: float = 960.0,
    height: float = 56.0,
) -> str:
    """The whole loop as a strip (see `draw_overview`), as an `<svg>` string."""
    return build_overview(
        report,
        loop=loop,
        start=start,
        window=window,
        window_href=window_href,
        width=width,
        height=height,
    ).to_string()


def build_overview(
    report: Mapping[str, Any],
    *,
    loop: int | None = None,
    start: int = 1,
    window: int = 60,
    window_href: Callable[[int], str] | None = None,
    width: float = 960.0,
    height: float = 56.0,
) -> Element:
    """The overview strip as an element tree."""
    meta = sequence_window(report, loop=loop, start=start, window=window)
    return draw_overview(report, meta, window_href=window_href, width=width, height=height)
