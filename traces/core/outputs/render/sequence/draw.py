"""Drawing one window: the legend, lane headers, gutter, and every row's arrows."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ....analysis.failed_generation import describe
from ....formatting import duration, money
from ..chart_style import FONT
from ..links import Links
from ..svg import Element, svg_root, truncate
from .arrows import badge_shape, badges, draw_arrow
from .layout import Row, fan_ys, layout_rows, place_rows
from .scene import Scene, build_scene, call_input_tokens, lane_name
from .style import (
    ACCENT,
    BORDER,
    BOTTOM_PAD,
    DASH,
    ERROR,
    HEADER_HEIGHT,
    LEGEND_HEIGHT,
    MAX_STROKE,
    MIN_STROKE,
    MUTED,
    UNBILLED_STROKE,
    WARN,
    X_CODE,
    X_MODEL,
    Spacing,
)
from .text import (
    diagram_title,
    request_title,
    response_title,
    result_aria,
    result_size,
    result_title,
    tool_call_title,
)
from .window import SequenceWindow


def draw_sequence(
    report: Mapping[str, Any], meta: SequenceWindow, links: Links, spacing: Spacing = "step"
) -> Element:
    """`meta`'s window of the loop as an element tree, arrows linking through `links`."""
    scene = build_scene(report, meta, links)
    rows = layout_rows(scene)
    bottom, used = place_rows(rows, spacing)
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
    root.add("title", text=diagram_title(meta))
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


def _compaction(body: Element, scene: Scene, row: Row) -> None:
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
    badge_shape(badge, x + 6, y - 4, WARN)
    legend.add("text", {"x": x + 16, "y": y}, text=LEGEND_BADGE_TEXT)


def _header(root: Element, scene: Scene, height: float) -> None:
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


def _gutter_label(gutter: Element, scene: Scene, row: Row, spacing: str) -> None:
    call = row.call
    gutter.add("text", {"x": 8, "y": row.y + 4}, text=f"#{call['index']}")
    started = call.get("started_at")
    if spacing == "time" and started is not None and scene.loop_start_time is not None:
        offset = started - scene.loop_start_time
        gutter.add("text", {"x": 8, "y": row.y + 17}, text=f"+{duration(offset)}")


def _stroke(tokens: int, max_input: int) -> float:
    if max_input <= 0 or tokens <= 0:
        return MIN_STROKE
    return MIN_STROKE + (MAX_STROKE - MIN_STROKE) * math.sqrt(min(1.0, tokens / max_input))


def _request(body: Element, scene: Scene, row: Row) -> None:
    call = row.call
    index = int(call["index"])
    tokens, exact = call_input_tokens(call)
    approx = "" if exact else "≈"
    cost = call.get("cost_usd")
    label = f"#{index} request · {approx}{tokens:,} in"
    if cost is not None:
        label += f" · {approx}{money(cost)}"
    width = _stroke(tokens, scene.max_input)
    y = row.y + 12
    draw_arrow(
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
        title=request_title(call, tokens, exact),
        aria=f"Call {index} request: {approx}{tokens:,} input tokens",
    )
    badges(body, scene, scene.findings_for_call.get(index, ()), X_CODE + 16, y, 1)


def _response(body: Element, scene: Scene, row: Row) -> None:
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
    draw_arrow(
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
        title=response_title(call),
        aria=aria,
    )


def _tool_calls(body: Element, scene: Scene, row: Row) -> None:
    origin_y = row.y + 12
    parallel = len(row.runs) > 1
    shown_end = scene.meta.last_call or 0
    for run, end_y in zip(row.runs, fan_ys(row), strict=True):
        status = run.get("status")
        x = scene.lane_x(run)
        name = lane_name(run)
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
        draw_arrow(
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
            title=tool_call_title(run),
            aria=f"Tool call {name} from call {call}, run by your code ({status})",
            tool_id=run.get("id"),
        )
        found = scene.findings_for_tool.get(("tool-call", call, str(run.get("id"))), ())
        badges(body, scene, found, x - 14, end_y - 10, -1)


def _results(body: Element, scene: Scene, row: Row) -> None:
    end_y = row.y + 12
    parallel = len(row.runs) > 1
    for run, start_y in zip(row.runs, fan_ys(row), strict=True):
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
        size = result_size(run)
        if orphan:
            label = f"orphan result {truncate(str(run.get('id')), 18)}: no call asked for it"
        else:
            prefix = "error result" if run.get("is_error") else "result"
            if run.get("error_inferred"):
                prefix = "inferred error result"
            label = f"{prefix}{size} · not billed"
        x = scene.orphan_x if orphan else scene.lane_x(run)
        group = draw_arrow(
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
            title=result_title(run),
            aria=result_aria(run, call),
            tool_id=run.get("id"),
        )
        found = scene.findings_for_tool.get(("tool-result", call, str(run.get("id"))), ())
        badges(body, scene, found, x - 14, start_y - 10, -1)
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
