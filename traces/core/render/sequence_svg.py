"""The loop as a server-rendered SVG sequence diagram, drawn from a stored report dict.

Three kinds of lifeline, time running down: the model (left), your code (middle) and the
tools (right: one lane per tool name when a window shows at most six, one "tools" lane
otherwise), so billed traffic stays left of your code and unbilled traffic right of it
and no arrow crosses the model's line. Arrows that touch the model are billed and drawn
solid, fatter as the transcript grows (stroke width by the square root of input tokens
over the loop's largest call); the tool run and its result never touch the model and
are drawn dashed and grey, labelled "not billed". A parallel batch is a fan from one
point; a dangling tool call ends in a red open arrowhead with no return; an orphan
result arrives in red from nowhere; a failed call's response is red and carries the
error. Each finding of a shown call is a badge on its arrow (the tool's arrow when it
names a tool call id, else the call's request) linking to the call's findings.

Only a window of the loop's calls is drawn (`start`, `window`, positions within the
loop, 1-based) so a 2,000-call loop never becomes one huge document; `render_overview`
draws the whole loop as a thin strip to move the window, and `sequence_window` says
which calls are shown and where the previous and next windows start.

Every arrow is its own link, `<a href="{prefix}calls/{n}/" aria-label=... class="arrow
..." data-kind data-billed data-call>`, holding a `<title>` with the call's numbers
(hover), so tests and users' scripts can read the diagram:
- `data-kind`: "request", "response", "tool-call", "tool-result";
- `data-billed`: "true" / "false"; `data-call`: the call index (for a result, the
  request that carried it; else the call that asked); tool arrows add `data-tool-id`.

CSS classes (colours are also set as presentation attributes using CSS variables with
fallbacks, `var(--accent, #4f46e5)`, so the SVG works standalone; page rules win):
- root `svg.seq` (data-loop, data-start, data-end, data-total, data-spacing);
  `seq-legend`, `seq-header`, `seq-lane-title` (+ `model`, `code`, `tool`),
  `lifelines` > `lifeline` (+ `model`, `code`, `tool`), `seq-gutter` (call numbers and
  times), `seq-body` (all arrows), `seq-empty`;
- `a.arrow` with `billed` or `unbilled`, the kind (`request`, `response`, `tool-call`,
  `tool-result`) and states: `error` (failed call), `dangling`, `pending`, `orphan`,
  `history` (result of a call made before the trace began), `tool-error` (a result
  marked as an error), `estimate` (token figure estimated), `parallel` (in a batch);
  inside: `arrow-hit` (wide transparent hover target), `arrow-line`, `arrow-head`
  (+ `open`), `arrow-label`, `orphan-origin`;
- `a.badge-link` > `g.badge` with `severity-error|warning|info` (a circle and "!",
  data-rule, data-severity, data-call, data-tool-id), or `g.badge.more` ("+n");
- overview `svg.seq-overview`: `ov-mark` (+ `error`), `ov-windows` > `a` > `ov-window`
  (one link per window), `ov-current` (the shown window).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..failed_generation import describe
from ..rules.base import SEVERITY_ORDER
from .svg import Element, format_number, svg_root, truncate

Spacing = Literal["step", "time"]

ACCENT = "var(--accent, #4f46e5)"
MUTED = "var(--muted, #646b7a)"
ERROR = "var(--error, #c62828)"
WARN = "var(--warn, #a15c00)"
BORDER = "var(--border, #c9ccd6)"
SEVERITY_COLOURS = {"error": ERROR, "warning": WARN, "info": ACCENT}
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif"

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


class UnknownLoop(ValueError):
    """The report has no loop with the requested index."""


@dataclass(frozen=True, slots=True)
class SequenceWindow:
    """Which calls of which loop a diagram shows, and how to page through the loop.

    Positions (`start`, `end`, `previous_start`, `next_start`) count the loop's calls
    from 1; `first_call`/`last_call` are the report's call indexes at either end.
    """

    loop: int | None
    loops: tuple[int, ...]
    total: int
    start: int
    end: int
    window: int
    previous_start: int | None
    next_start: int | None
    first_call: int | None
    last_call: int | None

    @property
    def shown(self) -> int:
        return max(0, self.end - self.start + 1) if self.total else 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "loop": self.loop,
            "loops": list(self.loops),
            "total": self.total,
            "start": self.start,
            "end": self.end,
            "window": self.window,
            "shown": self.shown,
            "previous_start": self.previous_start,
            "next_start": self.next_start,
            "first_call": self.first_call,
            "last_call": self.last_call,
        }


def sequence_window(
    report: Mapping[str, Any], *, loop: int | None = None, start: int = 1, window: int = 60
) -> SequenceWindow:
    """The window of `loop` (default: the first loop) starting at position `start`.

    `start` is clamped into the loop; raises `UnknownLoop` for a loop the report lacks.
    """
    loop_index, call_indexes = _loop_calls(report, loop)
    loops = tuple(int(entry.get("index", 0)) for entry in report.get("loops") or ())
    window = max(1, int(window))
    total = len(call_indexes)
    start = min(max(1, int(start)), max(1, total))
    end = min(total, start + window - 1)
    return SequenceWindow(
        loop=loop_index,
        loops=loops,
        total=total,
        start=start,
        end=end,
        window=window,
        previous_start=max(1, start - window) if start > 1 else None,
        next_start=start + window if start + window <= total else None,
        first_call=call_indexes[start - 1] if total else None,
        last_call=call_indexes[end - 1] if total else None,
    )


def _loop_calls(report: Mapping[str, Any], loop: int | None) -> tuple[int | None, list[int]]:
    loops = report.get("loops") or []
    if loop is None:
        if not loops:
            return None, [int(c["index"]) for c in report.get("calls") or ()]
        entry = loops[0]
    else:
        entry = next((e for e in loops if e.get("index") == loop), None)
        if entry is None:
            raise UnknownLoop(f"the report has no loop {loop}")
    return int(entry["index"]), [int(c) for c in entry.get("calls") or ()]


# -- reading the report ------------------------------------------------------------------


def call_input_tokens(call: Mapping[str, Any]) -> tuple[int, bool]:
    """All input of a call (uncached + cache reads + cache writes) and whether it is exact.

    A call without reported usage shows the accounting's estimate (its buckets' sum).
    """
    uncached = call.get("input_tokens")
    if uncached is not None:
        total = uncached + (call.get("cache_read_tokens") or 0)
        return total + (call.get("cache_write_tokens") or 0), True
    buckets = call.get("buckets") or {}
    return int(sum(v for v in buckets.values() if isinstance(v, int | float))), False


class _CallIndex(Mapping[int, Mapping[str, Any]]):
    """Calls by index without building a dict: `build_report` lists call n at n - 1."""

    def __init__(self, calls: list[Mapping[str, Any]]) -> None:
        self._calls = calls
        self._fallback: dict[int, Mapping[str, Any]] | None = None

    def __getitem__(self, index: int) -> Mapping[str, Any]:
        if type(index) is int and 0 < index <= len(self._calls):
            call = self._calls[index - 1]
            if call.get("index") == index:
                return call
        if self._fallback is None:
            self._fallback = {int(c["index"]): c for c in self._calls}
        return self._fallback[index]

    def get(self, index: Any, default: Any = None) -> Any:
        try:
            return self[index]
        except (KeyError, TypeError, ValueError):
            return default

    def __contains__(self, index: object) -> bool:
        return self.get(index) is not None

    def __iter__(self) -> Iterator[int]:
        return (int(c["index"]) for c in self._calls)

    def __len__(self) -> int:
        return len(self._calls)


def _calls_by_index(report: Mapping[str, Any]) -> Mapping[int, Mapping[str, Any]]:
    return _CallIndex(list(report.get("calls") or ()))


@dataclass(slots=True)
class _Row:
    """One horizontal band of the diagram: a request, a response, or a fan of tool arrows."""

    kind: str
    call: Mapping[str, Any]
    runs: list[Mapping[str, Any]] = field(default_factory=list)
    time: float | None = None
    y: float = 0.0

    def spread(self) -> float:
        return _fan_step(len(self.runs)) * max(0, len(self.runs) - 1)

    def height(self) -> float:
        return ROW_HEIGHT[self.kind] + self.spread()

    def min_height(self) -> float:
        return ROW_MIN_HEIGHT[self.kind] + self.spread()


def _fan_step(count: int) -> float:
    if count <= 1:
        return 0.0
    return min(FAN_STEP, FAN_SPREAD_MAX / (count - 1))


@dataclass(slots=True)
class _Scene:
    """What one window needs from the report, gathered once."""

    meta: SequenceWindow
    prefix: str
    by_index: Mapping[int, Mapping[str, Any]]
    calls: list[Mapping[str, Any]]
    max_input: int
    loop_start_time: float | None
    asked_by: dict[int, list[Mapping[str, Any]]]
    results_for: dict[int, list[Mapping[str, Any]]]
    logged_results: dict[int, list[Mapping[str, Any]]]
    findings_for_call: dict[int, list[Mapping[str, Any]]]
    findings_for_tool: dict[tuple[str, int, str], list[Mapping[str, Any]]]
    """Findings on tool arrows, by (data-kind, data-call, tool id)."""
    lanes: dict[str, float]
    orphan_x: float
    width: float

    def lane_x(self, run: Mapping[str, Any]) -> float:
        if len(self.lanes) == 1:
            return next(iter(self.lanes.values()))
        return self.lanes.get(_lane_name(run), self.orphan_x)


def _lane_name(run: Mapping[str, Any]) -> str:
    name = run.get("name")
    return name if isinstance(name, str) and name else "?"


def _scene(report: Mapping[str, Any], meta: SequenceWindow, prefix: str) -> _Scene:
    by_index = _calls_by_index(report)
    _, loop_indexes = _loop_calls(report, meta.loop) if meta.total else (None, [])
    shown_indexes = loop_indexes[meta.start - 1 : meta.end] if meta.total else []
    shown = set(shown_indexes)
    calls = [by_index[i] for i in shown_indexes if i in by_index]
    loop_calls = [by_index[i] for i in loop_indexes if i in by_index]
    max_input = max((call_input_tokens(c)[0] for c in loop_calls), default=0)
    first_time = next(
        (c["started_at"] for c in loop_calls if c.get("started_at") is not None), None
    )

    asked_by: dict[int, list[Mapping[str, Any]]] = {}
    results_for: dict[int, list[Mapping[str, Any]]] = {}
    logged_results: dict[int, list[Mapping[str, Any]]] = {}
    lane_names: dict[str, None] = {}
    for run in report.get("tool_runs") or ():
        asked, carried = run.get("call"), run.get("result_call")
        if asked in shown:
            asked_by.setdefault(asked, []).append(run)
            lane_names[_lane_name(run)] = None
            if carried is None and run.get("status") == "paired":
                logged_results.setdefault(asked, []).append(run)
        if carried in shown:
            results_for.setdefault(carried, []).append(run)
            if run.get("status") != "orphan":
                lane_names[_lane_name(run)] = None

    findings_for_call, findings_for_tool = _place_findings(
        report, shown, asked_by, results_for, logged_results
    )

    names = list(lane_names) if len(lane_names) <= MAX_TOOL_LANES else ["tools"]
    if not names:
        names = ["tools"]
    lanes = {name: X_CODE + TOOL_GAP + TOOL_STEP * n for n, name in enumerate(names)}
    orphan_x = X_CODE + TOOL_GAP + TOOL_STEP * (len(names) - 1) + ORPHAN_OFFSET
    return _Scene(
        meta=meta,
        prefix=prefix,
        by_index=by_index,
        calls=calls,
        max_input=max_input,
        loop_start_time=first_time,
        asked_by=asked_by,
        results_for=results_for,
        logged_results=logged_results,
        findings_for_call=findings_for_call,
        findings_for_tool=findings_for_tool,
        lanes=lanes,
        orphan_x=orphan_x,
        width=orphan_x - ORPHAN_OFFSET + RIGHT_PAD,
    )


def _place_findings(
    report: Mapping[str, Any],
    shown: set[int],
    asked_by: Mapping[int, list[Mapping[str, Any]]],
    results_for: Mapping[int, list[Mapping[str, Any]]],
    logged_results: Mapping[int, list[Mapping[str, Any]]],
) -> tuple[dict[int, list[Mapping[str, Any]]], dict[tuple[str, int, str], list[Mapping[str, Any]]]]:
    """Which arrow each finding's badge goes on.

    Only findings on the window's calls are drawn (each in one window). One with a tool
    call id goes on that tool's arrow: the one drawn for the finding's call when there
    is one (the result arrow when the finding is on the call that carried the result),
    else the tool call, else its result. Any other finding goes on its call's request.
    """
    places: dict[str, list[tuple[str, int]]] = {}
    for kind, groups in (
        ("tool-call", asked_by),
        ("tool-result", results_for),
        ("tool-result", logged_results),
    ):
        for call, runs in groups.items():
            for run in runs:
                places.setdefault(str(run.get("id")), []).append((kind, call))
    on_calls: dict[int, list[Mapping[str, Any]]] = {}
    on_tools: dict[tuple[str, int, str], list[Mapping[str, Any]]] = {}
    for finding in report.get("findings") or ():
        call, tool_id = finding.get("call"), finding.get("tool_call_id")
        if call not in shown:
            continue  # drawn in the window that holds its call, once
        candidates = places.get(str(tool_id)) if tool_id is not None else None
        if candidates:
            kind, where = next((p for p in candidates if p[1] == call), candidates[0])
            on_tools.setdefault((kind, where, str(tool_id)), []).append(finding)
        else:
            on_calls.setdefault(call, []).append(finding)
    return on_calls, on_tools


# -- layout ------------------------------------------------------------------------------


def _rows(scene: _Scene) -> list[_Row]:
    rows: list[_Row] = []
    for call in scene.calls:
        index = int(call["index"])
        started = call.get("started_at")
        ended = started + (call.get("duration_s") or 0.0) if started is not None else None
        if call.get("compaction"):
            rows.append(_Row("compaction", call, time=started))
        arriving = scene.results_for.get(index)
        if arriving:
            rows.append(_Row("results", call, arriving, _arrival_time(scene, arriving, started)))
        rows.append(_Row("request", call, time=started))
        rows.append(_Row("response", call, time=ended))
        asked = scene.asked_by.get(index)
        if asked:
            rows.append(_Row("tool-calls", call, asked, time=ended))
        logged = scene.logged_results.get(index)
        if logged:
            durations = [r.get("duration_s") or 0.0 for r in logged]
            done = ended + max(durations) if ended is not None else None
            rows.append(_Row("results", call, logged, time=done))
    return rows


def _arrival_time(
    scene: _Scene, runs: list[Mapping[str, Any]], request_time: float | None
) -> float | None:
    """When results came back: the asking call's end plus the tool's duration, when known."""
    if request_time is None:
        return None
    finished = []
    for run in runs:
        asked = scene.by_index.get(run.get("call") or -1)
        duration = run.get("duration_s")
        if asked is None or duration is None or asked.get("started_at") is None:
            continue
        finished.append(asked["started_at"] + (asked.get("duration_s") or 0.0) + duration)
    return min(max(finished), request_time) if finished else request_time


def _place(rows: list[_Row], spacing: Spacing) -> tuple[float, Spacing]:
    """Give every row its y; returns the body's bottom and the spacing actually used."""
    top = HEADER_HEIGHT + 18.0
    timed = spacing == "time" and bool(rows) and all(r.time is not None for r in rows)
    if not timed:
        y = top
        for row in rows:
            row.y = y
            y += row.height()
        return y, "step"
    step_height = sum(row.height() for row in rows)
    times = [r.time for r in rows if r.time is not None]
    first, span = min(times), max(times) - min(times)
    scale = step_height / span if span > 0 else 0.0
    y = top
    for row in rows:
        assert row.time is not None
        row.y = max(y, top + (row.time - first) * scale)
        y = row.y + row.min_height()
    return y, "time"


# -- drawing -----------------------------------------------------------------------------


def render_sequence(
    report: Mapping[str, Any],
    *,
    trace_url_prefix: str,
    loop: int | None = None,
    start: int = 1,
    window: int = 60,
    spacing: Spacing = "step",
) -> str:
    """The window's sequence diagram as an `<svg>` string (see the module docstring).

    `trace_url_prefix` ends with a slash (e.g. "/traces/abc/"); arrows link to
    f"{trace_url_prefix}calls/{n}/". `spacing="time"` places rows by real time when
    every shown call has a start time, and falls back to step spacing otherwise
    (`data-spacing` on the root says which was used).
    """
    return build_sequence(
        report,
        trace_url_prefix=trace_url_prefix,
        loop=loop,
        start=start,
        window=window,
        spacing=spacing,
    ).to_string()


def build_sequence(
    report: Mapping[str, Any],
    *,
    trace_url_prefix: str,
    loop: int | None = None,
    start: int = 1,
    window: int = 60,
    spacing: Spacing = "step",
) -> Element:
    """The diagram as an element tree (for counting elements or embedding)."""
    meta = sequence_window(report, loop=loop, start=start, window=window)
    scene = _scene(report, meta, trace_url_prefix)
    rows = _rows(scene)
    bottom, used = _place(rows, spacing)
    height = bottom + BOTTOM_PAD if rows else HEADER_HEIGHT + 60.0
    root = svg_root(
        max(scene.width, LEGEND_WIDTH),
        height,
        {
            "class": "seq",
            "font-family": FONT,
            "font-size": 12,
            "data-loop": meta.loop,
            "data-start": meta.start,
            "data-end": meta.end,
            "data-total": meta.total,
            "data-spacing": used,
        },
    )
    root.add("title", text=_diagram_title(meta))
    _legend(root)
    _header(root, scene, height)
    if not rows:
        root.add(
            "text",
            {"class": "seq-empty", "x": X_CODE, "y": HEADER_HEIGHT + 36, "text-anchor": "middle"},
            text="No calls in this loop.",
        )
        return root
    gutter = root.add("g", {"class": "seq-gutter", "fill": MUTED, "font-size": 11})
    body = root.add("g", {"class": "seq-body"})
    for row in rows:
        if row.kind == "request":
            _gutter_label(gutter, scene, row, used)
            _request(body, scene, row)
        elif row.kind == "response":
            _response(body, scene, row)
        elif row.kind == "tool-calls":
            _tool_calls(body, scene, row)
        elif row.kind == "compaction":
            _compaction(body, scene, row)
        else:
            _results(body, scene, row)
    return root


def _compaction(body: Element, scene: _Scene, row: _Row) -> None:
    """A dashed rule across the lifelines: the history was compacted before this call."""
    call = row.call
    compaction = call.get("compaction") or {}
    y = row.y + 10
    note = "history compacted"
    if compaction.get("pre_tokens"):
        note += f" (was {compaction['pre_tokens']:,} tokens)"
    group = body.add(
        "g", {"class": "compaction", "data-call": call["index"], "role": "img", "color": WARN}
    )
    group.add(
        "title",
        text=f"Before call {call['index']} the history was compacted"
        f" ({compaction.get('source') or 'compaction'}): the request starts from a summary,"
        " and what came before is no longer sent",
    )
    group.add(
        "line",
        {
            "x1": min(X_MODEL, X_CODE) - 50,
            "y1": y,
            "x2": scene.width - 12,
            "y2": y,
            "stroke": WARN,
            "stroke-width": 1.2,
            "stroke-dasharray": "6 4",
        },
    )
    group.add(
        "text",
        {"x": min(X_MODEL, X_CODE) + 8, "y": y - 4, "fill": WARN, "font-size": 11},
        text=f"⟲ {note}",
    )


def _diagram_title(meta: SequenceWindow) -> str:
    if not meta.total:
        return "Sequence diagram: no calls"
    loop = f"loop {meta.loop}, " if meta.loop is not None else ""
    return (
        f"Sequence diagram of {loop}calls {meta.start}{DASH_RANGE}{meta.end} of {meta.total:,}: "
        "solid arrows touch the model and are billed; dashed arrows are tool runs in "
        "your code, not billed."
    )


LEGEND_ITEMS = [
    (ACCENT, 3.0, None, "billed model call (width grows with tokens)"),
    (MUTED, UNBILLED_STROKE, DASH, "tool run in your code: not billed"),
    (ERROR, 2.0, None, "error, dangling call or orphan result"),
]
LEGEND_BADGE_TEXT = "finding (links to the call)"
LEGEND_WIDTH = (
    12.0
    + sum(40 + len(text) * 6.0 for *_, text in LEGEND_ITEMS)
    + 24
    + len(LEGEND_BADGE_TEXT) * 6.0
)
"""The legend's width: a narrow diagram (one tool lane) is widened so it is not cut."""


def _legend(root: Element) -> None:
    legend = root.add("g", {"class": "seq-legend", "font-size": 11, "fill": "currentColor"})
    y = 16.0
    x = 12.0
    for colour, width, dash, text in LEGEND_ITEMS:
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
    badge = legend.add("g", {"class": "badge severity-warning"})
    _badge_shape(badge, x + 6, y - 4, WARN)
    legend.add("text", {"x": x + 16, "y": y}, text=LEGEND_BADGE_TEXT)


def _header(root: Element, scene: _Scene, height: float) -> None:
    header = root.add("g", {"class": "seq-header", "font-weight": 600, "fill": "currentColor"})
    lifelines = root.add("g", {"class": "lifelines", "stroke": BORDER, "stroke-width": 1})
    title_y = LEGEND_HEIGHT + 22
    lanes = [("model", "model", X_MODEL), ("your code", "code", X_CODE)]
    lanes += [(name, "tool", x) for name, x in scene.lanes.items()]
    for name, kind, x in lanes:
        title = header.add(
            "text",
            {"class": f"seq-lane-title {kind}", "x": x, "y": title_y, "text-anchor": "middle"},
            text=truncate(name, 20),
        )
        if kind == "tool":
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


def _gutter_label(gutter: Element, scene: _Scene, row: _Row, spacing: str) -> None:
    call = row.call
    gutter.add("text", {"x": 8, "y": row.y + 4}, text=f"#{call['index']}")
    started = call.get("started_at")
    if spacing == "time" and started is not None and scene.loop_start_time is not None:
        offset = started - scene.loop_start_time
        gutter.add("text", {"x": 8, "y": row.y + 17}, text=f"+{_seconds(offset)}")


def _stroke(tokens: int, max_input: int) -> float:
    if max_input <= 0 or tokens <= 0:
        return MIN_STROKE
    return MIN_STROKE + (MAX_STROKE - MIN_STROKE) * math.sqrt(min(1.0, tokens / max_input))


def _request(body: Element, scene: _Scene, row: _Row) -> None:
    call = row.call
    index = int(call["index"])
    tokens, exact = call_input_tokens(call)
    approx = "" if exact else "≈"
    cost = call.get("cost_usd")
    label = f"#{index} request · {approx}{tokens:,} in"
    if cost is not None:
        label += f" · {approx}{_money(cost)}"
    width = _stroke(tokens, scene.max_input)
    y = row.y + 12
    _arrow(
        body,
        scene,
        call=index,
        kind="request",
        billed=True,
        states=() if exact else ("estimate",),
        start=(X_CODE, y),
        end=(X_MODEL, y),
        colour=ACCENT,
        width=width,
        label=label,
        title=_request_title(call, tokens, exact),
        aria=f"Call {index} request: {approx}{tokens:,} input tokens",
    )
    _badges(body, scene, scene.findings_for_call.get(index, ()), X_CODE + 16, y, 1)


def _request_title(call: Mapping[str, Any], tokens: int, exact: bool) -> str:
    index = call["index"]
    lines = [f"Call {index} · request to the model (billed)"]
    if call.get("model"):
        lines.append(f"model: {call['model']}")
    approx = "" if exact else "≈ "
    lines.append(f"input: {approx}{tokens:,} tokens")
    if call.get("input_tokens") is not None:
        lines.append(
            f"  uncached {call['input_tokens']:,} · cache read "
            f"{call.get('cache_read_tokens') or 0:,} · cache write "
            f"{call.get('cache_write_tokens') or 0:,}"
        )
    buckets = call.get("buckets") or {}
    if buckets:
        split = "" if call.get("tokens_exact", True) else "≈ "
        lines.append(
            f"  {split}prefix {buckets.get('prefix', 0):,} · tool results "
            f"{buckets.get('tool_results', 0):,} · replayed output "
            f"{buckets.get('replayed_output', 0):,} · other {buckets.get('other', 0):,}"
        )
    if call.get("cost_usd") is not None:
        lines.append(f"cost: {_money(call['cost_usd'])}")
    if call.get("messages") is not None:
        lines.append(f"messages sent: {call['messages']} ({call.get('appended', 0)} new)")
    return "\n".join(lines)


def _response(body: Element, scene: _Scene, row: _Row) -> None:
    call = row.call
    index = int(call["index"])
    y = row.y + 12
    failed = call.get("status") == "error"
    output = call.get("output_tokens")
    if failed:
        status = f" {call['http_status']}" if call.get("http_status") else ""
        error = call.get("error") or "failed call"
        label = f"error{status}: {truncate(str(error), 44)}"
        tried = call.get("attempted_tool_calls")
        if tried:
            label = f"error{status}: tried {truncate(describe(tried), 40)}"
        colour, width = ERROR, 2.0
        aria = f"Call {index} failed: {truncate(str(error), 120)}"
    else:
        stop = call.get("stop_reason") or "no stop reason"
        amount = f"{output:,}" if output is not None else "?"
        label = f"{amount} out · {truncate(str(stop), 24)}"
        colour, width = ACCENT, _stroke(output or 0, scene.max_input)
        aria = f"Call {index} response: {amount} output tokens, stop reason {stop}"
    _arrow(
        body,
        scene,
        call=index,
        kind="response",
        billed=True,
        states=("error",) if failed else (),
        start=(X_MODEL, y),
        end=(X_CODE, y),
        colour=colour,
        width=width,
        label=label,
        title=_response_title(call),
        aria=aria,
    )


def _response_title(call: Mapping[str, Any]) -> str:
    lines = [f"Call {call['index']} · response from the model (billed)"]
    if call.get("status") == "error":
        lines.append(f"failed: {call.get('error') or 'no error text'}")
        if call.get("http_status"):
            lines.append(f"HTTP status: {call['http_status']}")
        tried = call.get("attempted_tool_calls")
        if tried:
            lines.append(f"the model tried to call {truncate(describe(tried), 200)}")
    else:
        output = call.get("output_tokens")
        lines.append(f"output: {output:,} tokens" if output is not None else "output: unknown")
        lines.append(f"stop reason: {call.get('stop_reason') or 'none'}")
    if call.get("duration_s") is not None:
        lines.append(f"duration: {_seconds(call['duration_s'])}")
    ids = call.get("tool_call_ids") or []
    if ids:
        lines.append(f"asked for {len(ids)} tool call{'s' if len(ids) != 1 else ''}")
    return "\n".join(lines)


def _fan_ys(row: _Row) -> list[float]:
    step = _fan_step(len(row.runs))
    base = row.y + 12
    return [base + step * n for n in range(len(row.runs))]


def _tool_calls(body: Element, scene: _Scene, row: _Row) -> None:
    origin_y = row.y + 12
    parallel = len(row.runs) > 1
    shown_end = scene.meta.last_call or 0
    for run, end_y in zip(row.runs, _fan_ys(row), strict=True):
        status = run.get("status")
        x = scene.lane_x(run)
        name = _lane_name(run)
        carried = run.get("result_call")
        states: list[str] = ["parallel"] if parallel else []
        colour = MUTED
        head = "filled"
        if status == "dangling":
            states.append("dangling")
            colour, head = ERROR, "open"
            note = "dangling: no result"
        elif status == "pending":
            states.append("pending")
            head = "open"
            note = "waiting for result"
        elif carried is not None and carried > shown_end:
            note = f"result in call {carried}"
        else:
            note = "not billed"
        label = f"run {truncate(name, 18)} · {note}"
        call = int(run["call"])
        _arrow(
            body,
            scene,
            call=call,
            kind="tool-call",
            billed=False,
            states=tuple(states),
            start=(X_CODE, origin_y),
            end=(x, end_y),
            colour=colour,
            width=UNBILLED_STROKE,
            dash=DASH,
            head=head,
            label=label,
            label_at="end" if parallel else "middle",
            title=_tool_call_title(run),
            aria=f"Tool call {name} from call {call}, run by your code ({status})",
            tool_id=run.get("id"),
        )
        found = scene.findings_for_tool.get(("tool-call", call, str(run.get("id"))), ())
        _badges(body, scene, found, x - 14, end_y - 10, -1)


def _tool_call_title(run: Mapping[str, Any]) -> str:
    lines = [
        f"Tool call {_lane_name(run)} · id {run.get('id')}",
        "run by your code: no model call, not billed",
        f"asked in call {run.get('call')}",
        f"status: {run.get('status')}",
    ]
    if (run.get("batch_size") or 1) > 1:
        lines.append(f"parallel batch of {run['batch_size']}")
    if run.get("duration_s") is not None:
        lines.append(f"ran for {_seconds(run['duration_s'])}")
    if run.get("result_call") is not None:
        lines.append(f"result carried by call {run['result_call']}")
    return "\n".join(lines)


def _results(body: Element, scene: _Scene, row: _Row) -> None:
    end_y = row.y + 12
    parallel = len(row.runs) > 1
    for run, start_y in zip(row.runs, _fan_ys(row), strict=True):
        status = run.get("status")
        orphan = status == "orphan"
        history = not orphan and run.get("call") is None
        carried = run.get("result_call")
        call = int(carried if carried is not None else run["call"])
        states: list[str] = ["parallel"] if parallel else []
        colour = MUTED
        if orphan:
            states.append("orphan")
            colour = ERROR
        elif history:
            states.append("history")
        if run.get("is_error"):
            states.append("tool-error")
        size = _result_size(run)
        if orphan:
            label = f"orphan result {truncate(str(run.get('id')), 18)}: no call asked for it"
        else:
            prefix = "error result" if run.get("is_error") else "result"
            if run.get("error_inferred"):
                prefix = "inferred error result"
            label = f"{prefix}{size} · not billed"
        x = scene.orphan_x if orphan else scene.lane_x(run)
        group = _arrow(
            body,
            scene,
            call=call,
            kind="tool-result",
            billed=False,
            states=tuple(states),
            start=(x, start_y),
            end=(X_CODE, end_y),
            colour=colour,
            width=UNBILLED_STROKE,
            dash=DASH,
            label=label,
            label_at="start" if parallel and not orphan else "middle",
            title=_result_title(run),
            aria=_result_aria(run, call),
            tool_id=run.get("id"),
        )
        found = scene.findings_for_tool.get(("tool-result", call, str(run.get("id"))), ())
        _badges(body, scene, found, x - 14, start_y - 10, -1)
        if orphan:
            group.add(
                "circle",
                {
                    "class": "orphan-origin",
                    "cx": x,
                    "cy": start_y,
                    "r": 3.5,
                    "fill": "none",
                    "stroke": ERROR,
                    "stroke-width": 1.5,
                },
            )


def _result_size(run: Mapping[str, Any]) -> str:
    tokens = run.get("result_tokens")
    if tokens is None:
        return ""
    approx = "" if run.get("result_tokens_exact", True) else "≈"
    return f" · {approx}{tokens:,} tok"


def _result_title(run: Mapping[str, Any]) -> str:
    status = run.get("status")
    if status == "orphan":
        head = f"Orphan result · id {run.get('id')}: no call in this loop asked for it"
    else:
        head = f"Result of {_lane_name(run)} · id {run.get('id')}"
    lines = [head, "returned to your code: not billed here"]
    tokens = run.get("result_tokens")
    if tokens is not None:
        approx = "" if run.get("result_tokens_exact", True) else "≈ "
        carrying = run.get("requests_carrying") or 0
        lines.append(
            f"{approx}{tokens:,} tokens, billed as input in {carrying} request"
            f"{'s' if carrying != 1 else ''} ({approx}{run.get('resend_tokens') or 0:,} tokens)"
        )
    if run.get("is_error"):
        lines.append("the tool reported an error")
    elif run.get("error_inferred"):
        lines.append(f"reads as an error, though not flagged: {run['error_inferred']}")
    if run.get("call") is None and status != "orphan":
        lines.append("asked before the trace began")
    if run.get("result_call") is not None:
        lines.append(f"carried by call {run['result_call']}")
    return "\n".join(lines)


def _result_aria(run: Mapping[str, Any], call: int) -> str:
    if run.get("status") == "orphan":
        return f"Orphan tool result {run.get('id')} arriving in call {call}"
    return f"Result of tool {_lane_name(run)} returned for call {call}, not billed"


def _arrow(
    parent: Element,
    scene: _Scene,
    *,
    call: int,
    kind: str,
    billed: bool,
    states: Iterable[str],
    start: tuple[float, float],
    end: tuple[float, float],
    colour: str,
    width: float,
    label: str,
    title: str,
    aria: str,
    dash: str | None = None,
    head: str = "filled",
    label_at: str = "middle",
    tool_id: str | None = None,
) -> Element:
    """One arrow, its own link: <a class data-*><title/><hit/><line/><head/><text/></a>."""
    classes = " ".join(["arrow", "billed" if billed else "unbilled", kind, *states])
    group = parent.add(
        "a",
        {
            "href": f"{scene.prefix}calls/{call}/",
            "aria-label": aria,
            "class": classes,
            "data-kind": kind,
            "data-billed": billed,
            "data-call": call,
            "data-tool-id": tool_id,
        },
    )
    group.add("title", text=title)
    (x1, y1), (x2, y2) = start, end
    coords = {"x1": x1, "y1": y1, "x2": x2, "y2": y2}
    group.add(
        "line",
        {"class": "arrow-hit", **coords, "stroke": "transparent", "stroke-width": 12},
    )
    length = math.hypot(x2 - x1, y2 - y1) or 1.0
    ux, uy = (x2 - x1) / length, (y2 - y1) / length
    head_length = 7.0 + width * 0.9
    half = 3.5 + width * 0.6
    base_x, base_y = x2 - ux * head_length, y2 - uy * head_length
    line_end = (base_x, base_y) if head == "filled" else (x2, y2)
    group.add(
        "line",
        {
            "class": "arrow-line",
            "x1": x1,
            "y1": y1,
            "x2": line_end[0],
            "y2": line_end[1],
            "stroke": colour,
            "stroke-width": width,
            "stroke-dasharray": dash,
        },
    )
    left = (base_x - uy * half, base_y + ux * half)
    right = (base_x + uy * half, base_y - ux * half)
    points = f"{_pt(left)} L{_pt((x2, y2))} L{_pt(right)}"
    if head == "filled":
        group.add("path", {"class": "arrow-head", "d": f"M{points}Z", "fill": colour})
    else:
        group.add(
            "path",
            {
                "class": "arrow-head open",
                "d": f"M{points}",
                "fill": "none",
                "stroke": colour,
                "stroke-width": 1.5,
            },
        )
    _label(group, label, start, end, label_at, width)
    return group


def _label(
    group: Element,
    text: str,
    start: tuple[float, float],
    end: tuple[float, float],
    where: str,
    width: float,
) -> None:
    (x1, y1), (x2, y2) = start, end
    if where == "middle":
        x, y, anchor = (x1 + x2) / 2, min(y1, y2) - width / 2 - 4, "middle"
    elif where == "end":
        x, y, anchor = x2 + 8, y2 + 4, "start"
    else:
        x, y, anchor = x1 + 8, y1 + 4, "start"
    group.add(
        "text",
        {
            "class": "arrow-label",
            "x": x,
            "y": y,
            "text-anchor": anchor,
            "fill": "currentColor",
            "font-size": 11,
        },
        text=text,
    )


def _pt(point: tuple[float, float]) -> str:
    return f"{format_number(point[0])},{format_number(point[1])}"


def _badges(
    parent: Element,
    scene: _Scene,
    findings: Iterable[Mapping[str, Any]],
    x: float,
    y: float,
    direction: int,
) -> None:
    """One badge per finding (the worst first), the rest folded into a "+n" badge."""
    ordered = sorted(findings, key=lambda f: SEVERITY_ORDER.get(f.get("severity"), 3))
    if not ordered:
        return
    shown, rest = ordered[:MAX_BADGES], ordered[MAX_BADGES:]
    for n, finding in enumerate(shown):
        _badge(parent, scene, finding, x + direction * 14 * n, y)
    if rest:
        cx = x + direction * 14 * len(shown)
        call = rest[0].get("call")
        link = parent.add(
            "a",
            {
                "class": "badge-link",
                "href": f"{scene.prefix}calls/{call}/#findings",
                "aria-label": f"{len(rest)} more findings on call {call}",
            },
        )
        group = link.add("g", {"class": "badge more", "data-call": call})
        group.add("title", text="\n".join(_finding_line(f) for f in rest))
        group.add(
            "text",
            {"x": cx, "y": y + 4, "text-anchor": "middle", "font-size": 10, "fill": "currentColor"},
            text=f"+{len(rest)}",
        )


def _badge(parent: Element, scene: _Scene, finding: Mapping[str, Any], x: float, y: float):
    call = finding.get("call")
    severity = str(finding.get("severity") or "info")
    colour = SEVERITY_COLOURS.get(severity, MUTED)
    link = parent.add(
        "a",
        {
            "class": "badge-link",
            "href": f"{scene.prefix}calls/{call}/#findings",
            "aria-label": f"{severity} finding on call {call}: {finding.get('rule')}",
        },
    )
    group = link.add(
        "g",
        {
            "class": f"badge severity-{severity}",
            "data-rule": finding.get("rule"),
            "data-severity": severity,
            "data-call": call,
            "data-tool-id": finding.get("tool_call_id"),
        },
    )
    group.add("title", text=_finding_line(finding))
    _badge_shape(group, x, y, colour)


def _badge_shape(group: Element, x: float, y: float, colour: str) -> None:
    group.add("circle", {"cx": x, "cy": y, "r": 6, "fill": colour})
    group.add(
        "text",
        {
            "x": x,
            "y": y + 3.5,
            "text-anchor": "middle",
            "font-size": 10,
            "font-weight": 700,
            "fill": "var(--surface, #fff)",
        },
        text="!",
    )


def _finding_line(finding: Mapping[str, Any]) -> str:
    return f"{finding.get('severity')} · {finding.get('rule')}: {finding.get('message')}"


# -- overview strip ----------------------------------------------------------------------


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
    """The whole loop as a strip: one thin mark per call (height = input tokens, red for
    failed calls and calls with error findings), the shown window highlighted, and each
    window's region a link to `window_href(start)` (default "?loop=L&start=S&window=W").
    """
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
    """The overview strip as an element tree; marks are drawn as two paths, not one
    element per call, so a 50,000-call loop stays a small document."""
    meta = sequence_window(report, loop=loop, start=start, window=window)
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
    shown = f"; calls {meta.start}{DASH_RANGE}{meta.end} shown" if meta.total else ""
    root.add("title", text=f"Overview of the loop: {meta.total:,} calls{shown}")
    if not meta.total:
        return root
    _, indexes = _loop_calls(report, meta.loop)
    by_index = _calls_by_index(report)
    red = _red_calls(report, set(indexes))
    slot = width / meta.total
    bar = max(slot * 0.8, min(slot, 1.0))
    usable = height - 6
    tokens = [call_input_tokens(by_index[i])[0] if i in by_index else 0 for i in indexes]
    peak = max(tokens, default=0) or 1
    normal: list[str] = []
    failed: list[str] = []
    for position, (index, amount) in enumerate(zip(indexes, tokens, strict=True)):
        mark = max(1.5, usable * amount / peak)
        x = position * slot
        target = failed if index in red else normal
        target.append(
            f"M{format_number(x)},{format_number(height - mark)}"
            f"h{format_number(bar)}v{format_number(mark)}h{format_number(-bar)}z"
        )
    if normal:
        root.add("path", {"class": "ov-mark", "d": "".join(normal), "fill": ACCENT})
    if failed:
        root.add("path", {"class": "ov-mark error", "d": "".join(failed), "fill": ERROR})
    _overview_windows(root, meta, window_href, slot, height)
    return root


def _red_calls(report: Mapping[str, Any], indexes: set[int]) -> set[int]:
    red = {
        int(c["index"])
        for c in report.get("calls") or ()
        if c.get("status") == "error" and c.get("index") in indexes
    }
    red.update(
        f["call"]
        for f in report.get("findings") or ()
        if f.get("severity") == "error" and f.get("call") in indexes
    )
    return red


MAX_OVERVIEW_LINKS = 400


def _overview_windows(
    root: Element,
    meta: SequenceWindow,
    window_href: Callable[[int], str],
    slot: float,
    height: float,
) -> None:
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
    root.add(
        "rect",
        {
            "class": "ov-current",
            "x": (meta.start - 1) * slot,
            "y": 0.5,
            "width": max(2.0, meta.shown * slot),
            "height": height - 1,
            "fill": ACCENT,
            "fill-opacity": 0.14,
            "stroke": ACCENT,
            "stroke-width": 1,
            "pointer-events": "none",
        },
    )


# -- formatting ------------------------------------------------------------------------


def _money(value: float) -> str:
    if value == 0:
        return "$0"
    if value >= 1:
        return f"${value:,.2f}"
    if value >= 0.01:
        return f"${value:.3f}"
    return f"${value:.4f}"


def _seconds(value: float) -> str:
    if value < 60:
        return f"{value:.1f} s"
    minutes, seconds = divmod(value, 60)
    if minutes < 60:
        return f"{int(minutes)} min {int(seconds)} s"
    hours, minutes = divmod(minutes, 60)
    return f"{int(hours)} h {int(minutes)} min"


def sequence_view(
    report: Mapping[str, Any],
    *,
    trace_url_prefix: str,
    loop: int | None = None,
    start: int = 1,
    window: int = 60,
    spacing: Spacing = "step",
    window_href: Callable[[int], str] | None = None,
) -> dict[str, Any]:
    """Everything a sequence page needs: {"svg", "overview", "window"} (window as dict)."""
    meta = sequence_window(report, loop=loop, start=start, window=window)
    return {
        "svg": render_sequence(
            report,
            trace_url_prefix=trace_url_prefix,
            loop=meta.loop,
            start=meta.start,
            window=meta.window,
            spacing=spacing,
        ),
        "overview": render_overview(
            report,
            loop=meta.loop,
            start=meta.start,
            window=meta.window,
            window_href=window_href,
        ),
        "window": meta.as_dict(),
    }
