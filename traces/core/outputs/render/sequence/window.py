"""Which calls of a loop one diagram shows, and where the previous and next windows start."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from traces.core.records import dataclass, field


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
    indexes: tuple[int, ...] = field(default=(), repr=False, compare=False)
    """The loop's call indexes in order, resolved once for the scene and the overview."""

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
    loop_index, call_indexes = loop_calls(report, loop)
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
        indexes=tuple(call_indexes),
    )


def loop_calls(report: Mapping[str, Any], loop: int | None) -> tuple[int | None, list[int]]:
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
