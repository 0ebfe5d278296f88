"""The diagram's rows (request, response, tool fan, results, compaction) and their y, by
step or by real time."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from traces.core.records import dataclass, field

from .scene import Scene
from .style import FAN_SPREAD_MAX, FAN_STEP, HEADER_HEIGHT, ROW_HEIGHT, ROW_MIN_HEIGHT, Spacing


@dataclass(slots=True)
class Row:
    """One horizontal band of the diagram: a request, a response, or a fan of tool arrows."""

    kind: str
    call: Mapping[str, Any]
    runs: list[Mapping[str, Any]] = field(default_factory=list)
    time: float | None = None
    y: float = 0.0

    def spread(self) -> float:
        return fan_step(len(self.runs)) * max(0, len(self.runs) - 1)

    def height(self) -> float:
        return ROW_HEIGHT[self.kind] + self.spread()

    def min_height(self) -> float:
        return ROW_MIN_HEIGHT[self.kind] + self.spread()


def fan_step(count: int) -> float:
    if count <= 1:
        return 0.0
    return min(FAN_STEP, FAN_SPREAD_MAX / (count - 1))


def layout_rows(scene: Scene) -> list[Row]:
    rows: list[Row] = []
    for call in scene.calls:
        index = int(call["index"])
        started = call.get("started_at")
        ended = started + (call.get("duration_s") or 0.0) if started is not None else None
        if call.get("compaction"):
            rows.append(Row("compaction", call, time=started))
        arriving = scene.results_for.get(index)
        if arriving:
            rows.append(Row("results", call, arriving, _arrival_time(scene, arriving, started)))
        rows.append(Row("request", call, time=started))
        rows.append(Row("response", call, time=ended))
        asked = scene.asked_by.get(index)
        if asked:
            rows.append(Row("tool-calls", call, asked, time=ended))
        logged = scene.logged_results.get(index)
        if logged:
            durations = [r.get("duration_s") or 0.0 for r in logged]
            done = ended + max(durations) if ended is not None else None
            rows.append(Row("results", call, logged, time=done))
    return rows


def _arrival_time(
    scene: Scene, runs: list[Mapping[str, Any]], request_time: float | None
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


def place_rows(rows: list[Row], spacing: Spacing, extra: float = 0.0) -> tuple[float, Spacing]:
    """Give every row its y (`extra` below a taller legend); returns the body's bottom and
    the spacing actually used."""
    top = HEADER_HEIGHT + extra + 18.0
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


def fan_ys(row: Row) -> list[float]:
    step = fan_step(len(row.runs))
    base = row.y + 12
    return [base + step * n for n in range(len(row.runs))]
