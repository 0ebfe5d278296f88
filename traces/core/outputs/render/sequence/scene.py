"""What one window needs from the report, gathered once: its calls, the tool runs asked and
answered in it, the tool lanes, and which arrow each finding's badge goes on."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..links import Links
from .style import OTHER_TOOLS, WIDE, Geometry
from .window import SequenceWindow


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


class CallIndex(Mapping[int, Mapping[str, Any]]):
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


def calls_by_index(report: Mapping[str, Any]) -> Mapping[int, Mapping[str, Any]]:
    return CallIndex(list(report.get("calls") or ()))


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


def lane_name(run: Mapping[str, Any]) -> str:
    """The tool's name, or what is known: "unnamed tool" (never a bare "?")."""
    name = run.get("name")
    return name if isinstance(name, str) and name else "unnamed tool"


def tool_lane_order(report: Mapping[str, Any]) -> list[str]:
    """Every tool the trace ran, most used first (ties: first used first).

    Computed from the whole trace, not the window, so lanes keep their places as the
    window moves and the busiest tools get their own lanes when the rest are grouped.
    """
    counts: dict[str, int] = {}
    for run in report.get("tool_runs") or ():
        if run.get("status") == "orphan":
            continue
        name = lane_name(run)
        counts[name] = counts.get(name, 0) + 1
    first_use = {name: n for n, name in enumerate(counts)}
    return sorted(counts, key=lambda name: (-counts[name], first_use[name]))


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
    report: Mapping[str, Any], meta: SequenceWindow, links: Links, geometry: Geometry = WIDE
) -> Scene:
    by_index = calls_by_index(report)
    loop_indexes = list(meta.indexes) if meta.total else []
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
    for run in report.get("tool_runs") or ():
        asked, carried = run.get("call"), run.get("result_call")
        if asked in shown:
            asked_by.setdefault(asked, []).append(run)
            if carried is None and run.get("status") == "paired":
                logged_results.setdefault(asked, []).append(run)
        if carried in shown:
            results_for.setdefault(carried, []).append(run)

    findings_for_call, findings_for_tool = place_findings(
        report, shown, asked_by, results_for, logged_results
    )

    g = geometry
    names, grouped = tool_lanes(tool_lane_order(report), g.max_lanes)
    lanes = {name: g.x_code + g.tool_gap + g.tool_step * n for n, name in enumerate(names)}
    orphan_x = g.x_code + g.tool_gap + g.tool_step * (len(names) - 1) + g.orphan_offset
    return Scene(
        meta=meta,
        links=links,
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
        grouped=grouped,
        orphan_x=orphan_x,
        width=orphan_x - g.orphan_offset + g.right_pad,
        geometry=g,
    )


def place_findings(
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
