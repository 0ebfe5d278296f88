"""A report cut into the parts a diagram window is drawn from, so moving the window of a
20,000-call loop reads a head and one or two parts, not the whole report.

The head holds what every window shares (the loops, the outcome and the `DiagramIndex`
facts taken over the whole trace: tool lanes' order, each loop's largest input and start
time, the calls the strip marks red); each part holds a run of `PART_CALLS` consecutive
calls with the tool runs they asked and carried, their findings (with their positions in
the report, which badges keep) and the calls that asked the runs they carry. Drawn from
the head and the window's parts, a window is the window drawn from the whole report
(tests/web/test_window_parts.py compares them).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NotRequired, TypedDict

from .index import DiagramIndex, LoopFacts, diagram_index
from .window import sequence_window

PART_CALLS = 100
"""Calls a part holds: a 30- to 200-call window reads two or three parts of ~0.3 MB of JSON."""


class WindowHead(TypedDict):
    loops: list[Any]
    outcome: Any
    lane_order: list[str]
    loop_facts: dict[str, list[Any]]
    red_calls: list[int]
    call_count: int


class WindowPart(TypedDict):
    calls: list[Any]
    linked_calls: list[Any]
    asked: list[Any]
    carried: list[Any]
    findings: list[list[Any]]
    asked_at: NotRequired[list[int]]
    carried_at: NotRequired[list[int]]
    """The report positions (from 0) of `asked` and `carried`, in their order: the trace
    page's tool-run rows read their pairing by position (parts cut before: absent)."""


def part_number(call_index: int) -> int:
    """The part holding call `call_index` (calls count from 1; part 0 is the head)."""
    return (call_index - 1) // PART_CALLS + 1


def window_head(report: Mapping[str, Any], index: DiagramIndex | None = None) -> WindowHead:
    """What every window of `report` shares."""
    index = index or diagram_index(report)
    return {
        "loops": list(report.get("loops") or ()),
        "outcome": report.get("outcome"),
        "lane_order": list(index.lane_order),
        "loop_facts": {
            str(loop): [facts.max_input, facts.start_time] for loop, facts in index.loops.items()
        },
        "red_calls": sorted(index.red_calls),
        "call_count": len(report.get("calls") or ()),
    }


def window_parts(report: Mapping[str, Any]) -> dict[int, WindowPart]:
    """The report's calls, runs and findings by part number (1 and up), in report order."""
    parts: dict[int, WindowPart] = {}

    def part(call: int) -> WindowPart:
        number = part_number(call)
        if number not in parts:
            parts[number] = {
                "calls": [],
                "linked_calls": [],
                "asked": [],
                "carried": [],
                "findings": [],
                "asked_at": [],
                "carried_at": [],
            }
        return parts[number]

    calls = {int(call["index"]): call for call in report.get("calls") or ()}
    linked: set[tuple[int, int]] = set()  # (part, call) pairs already linked
    for number, call in calls.items():
        part(number)["calls"].append(call)
    for position, run in enumerate(report.get("tool_runs") or ()):
        asked, carried = run.get("call"), run.get("result_call")
        if asked is not None:
            part(asked)["asked"].append(run)
            part(asked)["asked_at"].append(position)
        if carried is not None:
            holder = part(carried)
            holder["carried"].append(run)
            holder["carried_at"].append(position)
            key = (part_number(carried), asked if asked is not None else 0)
            if asked in calls and part_number(asked) != key[0] and key not in linked:
                linked.add(key)
                holder["linked_calls"].append(calls[asked])
    for position, finding in enumerate(report.get("findings") or ()):
        if finding.get("call") is not None:
            part(finding["call"])["findings"].append([position, finding])
    return parts


def parts_for_window(head: WindowHead, *, loop: int | None, start: int, window: int) -> list[int]:
    """The part numbers the window at `start` of `loop` draws from."""
    meta = sequence_window(head, loop=loop, start=start, window=window)
    shown = meta.indexes[meta.start - 1 : meta.end] if meta.total else []
    return sorted({part_number(call) for call in shown})


def window_report(
    head: WindowHead, parts: Iterable[WindowPart]
) -> tuple[dict[str, Any], DiagramIndex]:
    """A report holding only the parts' calls and findings, and its diagram index with
    the head's whole-trace facts: what `sequence_view(..., overview=False)` needs to draw
    any window inside those parts as it draws it from the whole report."""
    by_index: dict[int, Mapping[str, Any]] = {}
    runs_asked: dict[int, list[Mapping[str, Any]]] = {}
    runs_carried: dict[int, list[Mapping[str, Any]]] = {}
    findings: dict[int, Mapping[str, Any]] = {}
    finding_positions: dict[int, list[int]] = {}
    for part in parts:
        for call in part["linked_calls"]:
            by_index.setdefault(int(call["index"]), call)
        for call in part["calls"]:
            by_index[int(call["index"])] = call
        for run in part["asked"]:
            runs_asked.setdefault(run["call"], []).append(run)
        for run in part["carried"]:
            runs_carried.setdefault(run["result_call"], []).append(run)
        for position, finding in part["findings"]:
            findings[position] = finding
            finding_positions.setdefault(finding["call"], []).append(position)
    report = {
        "loops": head["loops"],
        "outcome": head["outcome"],
        "calls": list(by_index.values()),
        "findings": findings,  # by position: the scene reads findings[position]
    }
    index = DiagramIndex(
        by_index=by_index,
        runs_asked=runs_asked,
        runs_carried=runs_carried,
        finding_positions=finding_positions,
        lane_order=tuple(head["lane_order"]),
        loops={
            int(loop): LoopFacts(max_input=facts[0], start_time=facts[1])
            for loop, facts in head["loop_facts"].items()
        },
        red_calls=frozenset(head["red_calls"]),
    )
    return report, index
