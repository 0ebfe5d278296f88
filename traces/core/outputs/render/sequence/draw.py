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
from .arrows import LABEL_DEFAULTS, badges, draw_arrow
from .index import DiagramIndex, call_input_tokens, diagram_index, lane_name
from .layout import Row, fan_ys, layout_rows, place_rows
from .legend import LEGEND_WIDTH, draw_header, draw_legend
from .scene import Scene, build_scene
from .style import (
    ACCENT,
    BOTTOM_PAD,
    DASH,
    ERROR,
    HEADER_HEIGHT,
    MAX_STROKE,
    MIN_STROKE,
    MUTED,
    UNBILLED_STROKE,
    WARN,
    WIDE,
    Geometry,
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
    report: Mapping[str, Any],
    meta: SequenceWindow,
    links: Links,
    spacing: Spacing = "step",
    geometry: Geometry = WIDE,
    index: DiagramIndex | None = None,
) -> Element:
    """`meta`'s window of the loop as an element tree, arrows linking through `links`;
    `index` is the report's `diagram_index` when the caller keeps one (else built here).

    Keyboard users get one tab stop per call: its request arrow, whose accessible name
    starts with its visible label and then tells the whole call (response, tool calls,
    findings); the other arrows and the badges stay links for the mouse (tabindex -1).
    """
    scene = build_scene(report, meta, links, index or diagram_index(report), geometry)
    rows = layout_rows(scene)
    bottom, used = place_rows(rows, spacing, geometry.legend_extra)
    height = bottom + BOTTOM_PAD if rows else HEADER_HEIGHT + geometry.legend_extra + 60.0
    root = svg_root(
        scene.width if geometry.compact else max(scene.width, LEGEND_WIDTH),
        height,
        {
            "class": _root_class(geometry),
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
    draw_legend(root, geometry.compact)
    draw_header(root, scene, height)
    if not rows:
        root.add(
            "text",
            {
                "class": "seq-empty",
                "x": geometry.x_code,
                "y": HEADER_HEIGHT + geometry.legend_extra + 36,
                "text-anchor": "middle",
            },
            text="No calls in this loop.",
        )
        return root
    gutter = root.add("g", {"class": "seq-gutter", "fill": MUTED, "font-size": 11})
    body = root.add("g", {"class": "seq-body", **LABEL_DEFAULTS})
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


def _root_class(geometry: Geometry) -> str:
    if geometry.compact:
        return "seq compact"
    return "seq wide all-lanes" if geometry.max_lanes is None else "seq wide"


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
            "x1": max(4.0, scene.geometry.x_model - 50),
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
        {"x": scene.geometry.x_model + 8, "y": y - 4, "fill": WARN, "text-anchor": "start"},
        text=f"⟲ {note}",
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
    g = scene.geometry
    call = row.call
    index = int(call["index"])
    tokens, exact = call_input_tokens(call)
    approx = "" if exact else "≈"
    cost = call.get("cost_usd")
    label = (
        f"#{index} · {approx}{tokens:,} in"
        if g.compact
        else (f"#{index} request · {approx}{tokens:,} in")
    )
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
        start=(g.x_code, y),
        end=(g.x_model, y),
        colour=ACCENT,
        width=width,
        label=label,
        title=request_title(call, tokens, exact),
        aria=_call_summary(scene, call, tokens, approx),
        focusable=True,
    )
    badges(body, scene, scene.findings_for_call.get(index, ()), g.x_code + 16, y, 1)


def _call_summary(scene: Scene, call: Mapping[str, Any], tokens: int, approx: str) -> str:
    """The whole call in words, for its one tab stop: input, response, tools, findings."""
    index = int(call["index"])
    parts = [f"call {index}: {approx}{tokens:,} input tokens"]
    if call.get("status") == "error":
        parts.append(f"failed: {truncate(str(call.get('error') or 'failed call'), 120)}")
    else:
        parts.append(f"response {_output_text(call)}, stop reason {_stop(call)}")
    asked = scene.asked_by.get(index) or ()
    if asked:
        names = ", ".join(dict.fromkeys(lane_name(r) for r in asked))
        parts.append(f"{len(asked)} tool call{'s' if len(asked) != 1 else ''} ({names})")
    found = len(scene.findings_for_call.get(index, ())) + sum(
        len(v) for (_kind, where, _id), v in scene.findings_for_tool.items() if where == index
    )
    if found:
        parts.append(f"{found} finding{'s' if found != 1 else ''}")
    return "; ".join(parts)


def _output_text(call: Mapping[str, Any]) -> str:
    output = call.get("output_tokens")
    return f"{output:,} out" if output is not None else "output not reported"


def _stop(call: Mapping[str, Any]) -> str:
    return str(call.get("stop_reason") or "no stop reason")


def _response(body: Element, scene: Scene, row: Row) -> None:
    g = scene.geometry
    call = row.call
    index = int(call["index"])
    y = row.y + 12
    failed = call.get("status") == "error"
    if failed:
        status = f" {call['http_status']}" if call.get("http_status") else ""
        error = call.get("error") or "failed call"
        limit = 20 if g.compact else 44
        label = f"error{status}: {truncate(str(error), limit)}"
        tried = call.get("attempted_tool_calls")
        if tried:
            label = f"error{status}: tried {truncate(describe(tried), limit - 4)}"
        colour, width = ERROR, 2.0
        aria = f"call {index} failed: {truncate(str(error), 120)}"
    else:
        stop = _stop(call)
        label = f"{_output_text(call)} · {truncate(stop, 12 if g.compact else 24)}"
        colour, width = ACCENT, _stroke(call.get("output_tokens") or 0, scene.max_input)
        aria = f"call {index} response, stop reason {stop}"
    draw_arrow(
        body,
        scene,
        call=index,
        kind="response",
        billed=True,
        states=("error",) if failed else (),
        start=(g.x_model, y),
        end=(g.x_code, y),
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
    for n, (run, end_y) in enumerate(zip(row.runs, fan_ys(row), strict=True)):
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
        if scene.geometry.compact:
            label = truncate(name, 10) + (" · no result" if status == "dangling" else "")
            if parallel:
                label = _compact_fan_label(row.runs, "tool-calls") if n == 0 else ""
        call = int(run["call"])
        draw_arrow(
            body,
            scene,
            call=call,
            kind="tool-call",
            billed=False,
            states=tuple(states),
            start=(scene.geometry.x_code, origin_y),
            end=(x, end_y),
            colour=colour,
            width=UNBILLED_STROKE,
            dash=DASH,
            head=head,
            label=label,
            label_at="end" if parallel and not scene.geometry.compact else "middle",
            title=tool_call_title(run),
            aria=f"tool call {name} from call {call}, run by your code ({status})",
            tool_id=run.get("id"),
        )
        found = scene.findings_for_tool.get(("tool-call", call, str(run.get("id"))), ())
        badges(body, scene, found, x - 14, end_y - 10, -1)


def _compact_fan_label(runs: list[Mapping[str, Any]], kind: str) -> str:
    """One label for a whole fan on a phone (the arrows' labels would sit on each other):
    the tool and how many, or how many results and errors; the other arrows get none."""
    if kind == "results":
        errors = sum(1 for r in runs if r.get("is_error"))
        return f"{len(runs)} results" + (
            f" · {errors} error{'s' * (errors != 1)}" if errors else ""
        )
    names = list(dict.fromkeys(lane_name(r) for r in runs))
    label = f"{truncate(names[0], 10)} ×{len(runs)}" if len(names) == 1 else f"{len(runs)} tools"
    dangling = sum(1 for r in runs if r.get("status") == "dangling")
    return label + (f" · {dangling} no result" if dangling else "")


def _results(body: Element, scene: Scene, row: Row) -> None:
    end_y = row.y + 12
    compact = scene.geometry.compact
    parallel = len(row.runs) > 1
    for n, (run, start_y) in enumerate(zip(row.runs, fan_ys(row), strict=True)):
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
            colour = ERROR
        size = result_size(run)
        if orphan:
            label = f"orphan result {truncate(str(run.get('id')), 18)}: no call asked for it"
            if scene.geometry.compact:
                label = "orphan result"
        else:
            prefix = "error result" if run.get("is_error") else "result"
            if run.get("error_inferred"):
                prefix = "inferred error result"
            label = f"{prefix}{size} · not billed"
            if scene.geometry.compact:
                label = ("error" if run.get("is_error") else "result") + size
            if compact and parallel:
                label = _compact_fan_label(row.runs, "results") if n == 0 else ""
        x = scene.orphan_x if orphan else scene.lane_x(run)
        group = draw_arrow(
            body,
            scene,
            call=call,
            kind="tool-result",
            billed=False,
            states=tuple(states),
            start=(x, start_y),
            end=(scene.geometry.x_code, end_y),
            colour=colour,
            width=UNBILLED_STROKE,
            dash=DASH,
            label=label,
            label_at="start" if parallel and not orphan and not compact else "middle",
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
