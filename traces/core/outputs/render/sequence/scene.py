"""What one window needs from the report, gathered once: its calls, the tool runs asked and
answered in it, the tool lanes, and which arrow each finding's badge goes on."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from traces.core.records import dataclass

from ..links import Links
from .index import DiagramIndex, lane_name, loop_facts
from .style import OTHER_TOOLS, WIDE, Geometry
from .window import SequenceWindow


@dataclass(slots=True)
class Scene:
    """What one window needs from the report, gathered once."""

    meta: SequenceWindow
    links: Links
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
    """Each drawn tool lane's x, in the whole trace's order (the same in every window)."""
    grouped: list[str]
    """The tools drawn in the OTHER_TOOLS lane (or in the one "tools" lane)."""
    orphan_x: float
    width: float
    geometry: Geometry = WIDE

    def lane_x(self, run: Mapping[str, Any]) -> float:
        if len(self.lanes) == 1:
            return next(iter(self.lanes.values()))
        return self.lanes.get(lane_name(run), self.lanes.get(OTHER_TOOLS, self.orphan_x))


def tool_lanes(order: list[str], max_lanes: int | None) -> tuple[list[str], list[str]]:
    """(lane names, tools grouped): the first `max_lanes` tools get a lane each and the
    rest share one OTHER_TOOLS lane; `max_lanes=0` folds every tool into one "tools" lane."""
    if not order:
        return ["tools"], []
    if max_lanes == 0:
        return ["tools"], list(order)
    if max_lanes is None or len(order) <= max_lanes:
        return list(order), []
    return [*order[:max_lanes], OTHER_TOOLS], order[max_lanes:]


def build_scene(
    report: Mapping[str, Any],
    meta: SequenceWindow,
    links: Links,
    index: DiagramIndex,
    geometry: Geometry = WIDE,
) -> Scene:
    """The window's scene, read from `index` (the report's runs and findings by call), so
    it costs what the window's calls cost, not what the whole report holds."""
    by_index = index.by_index
    shown_indexes = list(meta.indexes[meta.start - 1 : meta.end]) if meta.total else []
    calls = [by_index[i] for i in shown_indexes if i in by_index]
    facts = index.loops.get(meta.loop) if meta.loop is not None else None
    if facts is None:  # no loops in the report: the window runs over all its calls
        facts = loop_facts([by_index[i] for i in meta.indexes if i in by_index])

    asked_by: dict[int, list[Mapping[str, Any]]] = {}
    results_for: dict[int, list[Mapping[str, Any]]] = {}
    logged_results: dict[int, list[Mapping[str, Any]]] = {}
    for call in shown_indexes:
        asked = index.runs_asked.get(call)
        if asked:
            asked_by[call] = list(asked)
            logged = [
                r for r in asked if r.get("result_call") is None and r.get("status") == "paired"
            ]
            if logged:
                logged_results[call] = logged
        carried = index.runs_carried.get(call)
        if carried:
            results_for[call] = list(carried)

    all_findings = report.get("findings") or ()
    positions = sorted(p for call in shown_indexes for p in index.finding_positions.get(call, ()))
    findings_for_call, findings_for_tool = place_findings(
        [all_findings[p] for p in positions], asked_by, results_for, logged_results
    )

    g = geometry
    names, grouped = tool_lanes(list(index.lane_order), g.max_lanes)
    lanes = {name: g.x_code + g.tool_gap + g.tool_step * n for n, name in enumerate(names)}
    orphan_x = g.x_code + g.tool_gap + g.tool_step * (len(names) - 1) + g.orphan_offset
    return Scene(
        meta=meta,
        links=links,
        by_index=by_index,
        calls=calls,
        max_input=facts.max_input,
        loop_start_time=facts.start_time,
        asked_by=asked_by,
        results_for=results_for,
        logged_results=logged_results,
        findings_for_call=findings_for_call,
        findings_for_tool=findings_for_tool,
        lanes=lanes,
        grouped=grouped,
        orphan_x=orphan_x,
        width=orphan_x - g.orphan_offset + g.right_pad,
        geometry=g,
    )


def place_findings(
    findings: list[Mapping[str, Any]],
    asked_by: Mapping[int, list[Mapping[str, Any]]],
    results_for: Mapping[int, list[Mapping[str, Any]]],
    logged_results: Mapping[int, list[Mapping[str, Any]]],
) -> tuple[dict[int, list[Mapping[str, Any]]], dict[tuple[str, int, str], list[Mapping[str, Any]]]]:
    """Which arrow each finding's badge goes on.

    `findings` are the window's calls' findings, in the report's order (each finding is
    drawn in the one window that holds its call). One with a tool
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
        for carrier, runs in groups.items():
            for run in runs:
                places.setdefault(str(run.get("id")), []).append((kind, carrier))
    on_calls: dict[int, list[Mapping[str, Any]]] = {}
    on_tools: dict[tuple[str, int, str], list[Mapping[str, Any]]] = {}
    for finding in findings:
        call: int = finding["call"]  # the index lists only findings on a call
        tool_id = finding.get("tool_call_id")
        candidates = places.get(str(tool_id)) if tool_id is not None else None
        if candidates:
            kind, where = next((p for p in candidates if p[1] == call), candidates[0])
            on_tools.setdefault((kind, where, str(tool_id)), []).append(finding)
        else:
            on_calls.setdefault(call, []).append(finding)
    return on_calls, on_tools
