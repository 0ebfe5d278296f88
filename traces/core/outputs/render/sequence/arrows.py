"""Arrow geometry and finding badges: each arrow its own link with a hit area, a line, a
head and a label; badges fold past MAX_BADGES into "+n"."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from ....analysis.rules.base import SEVERITY_ORDER
from ..svg import Element, format_number
from .scene import Scene
from .style import MAX_BADGES, MUTED, SEVERITY_COLOURS
from .text import finding_line


def draw_arrow(
    parent: Element,
    scene: Scene,
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
    focusable: bool = False,
) -> Element:
    """One arrow, its own link: <a class data-*><title/><hit/><line/><head/><text/></a>.

    Its accessible name starts with its visible label (then `aria` adds the words the
    label leaves out), so what a speech user reads out is what names the link; only a
    `focusable` arrow is a tab stop, the others are links for the mouse (tabindex -1).
    """
    classes = " ".join(["arrow", "billed" if billed else "unbilled", kind, *states])
    group = parent.add(
        "a",
        {
            "href": scene.links.call(call),
            "tabindex": None if focusable else -1,
            "aria-label": f"{label} — {aria}" if label else aria,
            "class": classes,
            "data-kind": kind,
            "data-billed": billed,
            "data-call": call,
            "data-tool-id": tool_id,
        },
    )
    if not scene.geometry.compact:  # no hover on a phone: its drawing stays light
        group.add("title", text=title)
    (x1, y1), (x2, y2) = start, end
    coords = {"x1": x1, "y1": y1, "x2": x2, "y2": y2}
    group.add("line", {"class": "arrow-hit", **coords})  # its wide stroke: HIT_CSS
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
    if label:
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
    # Size, colour and the usual anchor come from `LABEL_DEFAULTS` on the arrows' group.
    attrs = {"class": "arrow-label", "x": x, "y": y}
    if anchor != LABEL_DEFAULTS["text-anchor"]:
        attrs["text-anchor"] = anchor
    group.add("text", attrs, text=text)


LABEL_DEFAULTS = {"font-size": 11, "fill": "currentColor", "text-anchor": "middle"}
"""Presentation attributes every arrow label shares, set once on the group holding the
arrows (`seq-body`) and inherited, instead of on each of the window's hundreds of labels:
fewer attributes for the browser to parse and style. The heads, badges and the compaction
rule inside that group set their own fill, size and anchor."""
HIT_CSS = "svg.seq .arrow-hit { stroke: transparent; stroke-width: 12px; }"
"""The hit line's wide transparent stroke is the page's rule (traces/static/css/app.css,
inlined in exports too), not two attributes on each arrow: without the stylesheet the
line has no stroke at all, so it is never drawn, only no wider to point at."""


def _pt(point: tuple[float, float]) -> str:
    return f"{format_number(point[0])},{format_number(point[1])}"


def badges(
    parent: Element,
    scene: Scene,
    findings: Iterable[Mapping[str, Any]],
    x: float,
    y: float,
    direction: int,
) -> None:
    """One badge per finding (the worst first), the rest folded into a "+n" badge."""
    ordered = sorted(findings, key=lambda f: SEVERITY_ORDER.get(str(f.get("severity")), 3))
    if not ordered:
        return
    shown, rest = ordered[:MAX_BADGES], ordered[MAX_BADGES:]
    for n, finding in enumerate(shown):
        _badge(parent, scene, finding, x + direction * 14 * n, y)
    if rest:
        cx = x + direction * 14 * len(shown)
        call = rest[0]["call"]  # every finding placed on the diagram is on a shown call
        link = parent.add(
            "a",
            {
                "class": "badge-link",
                "href": scene.links.call_findings(call),
                "tabindex": -1,
                "aria-label": f"+{len(rest)}: {len(rest)} more findings on call {call}",
            },
        )
        group = link.add("g", {"class": "badge more", "data-call": call})
        group.add("title", text="\n".join(finding_line(f) for f in rest))
        group.add("text", {"x": cx, "y": y + 4, "font-size": 10}, text=f"+{len(rest)}")


def _badge(parent: Element, scene: Scene, finding: Mapping[str, Any], x: float, y: float) -> None:
    call = finding["call"]
    severity = str(finding.get("severity") or "info")
    colour = SEVERITY_COLOURS.get(severity, MUTED)
    link = parent.add(
        "a",
        {
            "class": "badge-link",
            "href": scene.links.call_findings(call),
            "tabindex": -1,
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
    group.add("title", text=finding_line(finding))
    badge_shape(group, x, y, colour)


def badge_shape(group: Element, x: float, y: float, colour: str) -> None:
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
