"""What every window of a report shares, gathered in one pass: tool runs and findings by
call, the tool lanes' order, each loop's largest input and first start time.

A window shows 60 calls, but without this index each one walked all of the report's
calls, tool runs and findings (at 20,000 calls, 0.1 s of a window's 0.12 s); built once
per report and kept by the caller (the web keeps it beside its cached report), moving
the window costs what the window's own calls cost. The index only points into the
report: it must be rebuilt when the report changes, and neither may be mutated.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from traces.core.records import dataclass


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


@dataclass(frozen=True, slots=True)
class LoopFacts:
    """What a loop's every window draws with: the stroke scale and the time origin."""

    max_input: int
    """The loop's largest call input (uncached + cache reads and writes)."""
    start_time: float | None
    """The first start time among the loop's calls, in loop order."""


@dataclass(frozen=True, slots=True)
class DiagramIndex:
    """The report's calls, tool runs and findings arranged for drawing any one window."""

    by_index: Mapping[int, Mapping[str, Any]]
    runs_asked: Mapping[int, list[Mapping[str, Any]]]
    """Tool runs by the call that asked for them, in the report's order."""
    runs_carried: Mapping[int, list[Mapping[str, Any]]]
    """Tool runs by the call whose request carried their result, in the report's order."""
    finding_positions: Mapping[int, list[int]]
    """Positions in `report["findings"]` of each call's findings (the report's order)."""
    lane_order: tuple[str, ...]
    """Every tool the trace ran, most used first (`tool_lane_order`)."""
    loops: Mapping[int, LoopFacts]
    red_calls: frozenset[int]
    """Calls the overview strip marks red: failed, or carrying an error finding."""


def loop_facts(calls: list[Mapping[str, Any]]) -> LoopFacts:
    """The facts of a loop from its calls in loop order."""
    return LoopFacts(
        max_input=max((call_input_tokens(call)[0] for call in calls), default=0),
        start_time=next(
            (call["started_at"] for call in calls if call.get("started_at") is not None), None
        ),
    )


def diagram_index(report: Mapping[str, Any]) -> DiagramIndex:
    """The index of `report`: one pass over its calls, tool runs and findings."""
    by_index = calls_by_index(report)
    runs_asked: dict[int, list[Mapping[str, Any]]] = {}
    runs_carried: dict[int, list[Mapping[str, Any]]] = {}
    for run in report.get("tool_runs") or ():
        asked, carried = run.get("call"), run.get("result_call")
        if asked is not None:
            runs_asked.setdefault(asked, []).append(run)
        if carried is not None:
            runs_carried.setdefault(carried, []).append(run)
    finding_positions: dict[int, list[int]] = {}
    red = {int(c["index"]) for c in report.get("calls") or () if c.get("status") == "error"}
    for position, finding in enumerate(report.get("findings") or ()):
        call = finding.get("call")
        if call is None:
            continue
        finding_positions.setdefault(call, []).append(position)
        if finding.get("severity") == "error":
            red.add(call)
    loops = {
        int(entry["index"]): loop_facts(
            [by_index[i] for i in (int(c) for c in entry.get("calls") or ()) if i in by_index]
        )
        for entry in report.get("loops") or ()
    }
    return DiagramIndex(
        by_index=by_index,
        runs_asked=runs_asked,
        runs_carried=runs_carried,
        finding_positions=finding_positions,
        lane_order=tuple(tool_lane_order(report)),
        loops=loops,
        red_calls=frozenset(red),
    )
