"""Per-call chart series held to a fixed point budget: calls grouped into buckets.

At 20,000 calls a chart that draws every call holds 80,000 bars and freezes the browser
for seconds, while its plot is about 1,000 px wide: no reader sees more than a point a
pixel. Every per-call series of the charts goes through here, so each holds at most
`POINT_BUDGET` points: exact (one point a call) when the loop is shorter, else one point
per bucket of consecutive calls, with "calls a-b" (an en dash) in the hover. The exact per-call
figures stay in the page's tables and the JSON report.

How a bucket sums up its calls is the series' choice: `total` (what adds up, such as
seconds), `mean` (a per-call quantity: bars as wide as their bucket keep their area
equal to the bucket's total), `peak` (the largest call), `last` (a running total, exact
at each bucket's end).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from traces.core.records import dataclass

POINT_BUDGET = 2000
"""Points per series at most: twice the pixels of a wide chart, a fraction of a second
for Plotly to draw."""

Item = TypeVar("Item")
Number = int | float


@dataclass(frozen=True, slots=True)
class Bucket:
    """Consecutive positions `start`..`end` (inclusive, 0-based) of a series, and the
    call numbers they hold (`first`..`last`)."""

    start: int
    end: int
    first: int
    last: int

    @property
    def size(self) -> int:
        return self.end - self.start + 1

    @property
    def middle(self) -> float:
        """Where the bucket's point sits on a call axis: halfway between its calls."""
        return (self.first + self.last) / 2

    @property
    def label(self) -> str:
        """What the hover names: "call 7", or "calls 7" to "12" joined by an en dash."""
        return (
            f"call {self.first}" if self.first == self.last else f"calls {self.first}–{self.last}"
        )


def buckets(calls: Sequence[int], budget: int = POINT_BUDGET) -> list[Bucket]:
    """`calls` (each position's call number, in order) cut into at most `budget` runs of
    consecutive positions, as even as can be: one a position when there are few enough."""
    total = len(calls)
    if budget < 1:
        raise ValueError("a point budget holds at least one point")
    count = min(total, budget)
    out: list[Bucket] = []
    for n in range(count):
        start = n * total // count
        end = (n + 1) * total // count - 1
        out.append(Bucket(start, end, calls[start], calls[end]))
    return out


def is_exact(groups: Sequence[Bucket]) -> bool:
    """True when every bucket holds one call (the series is drawn as it is)."""
    return all(group.size == 1 for group in groups)


def reduce(
    groups: Sequence[Bucket],
    values: Sequence[Item],
    how: Callable[[Sequence[Item]], Number | None],
) -> list[Number | None]:
    """One value per bucket: `how` applied to the bucket's slice of `values`."""
    return [how(values[group.start : group.end + 1]) for group in groups]


def _known(values: Sequence[Number | None]) -> list[Number]:
    return [v for v in values if v is not None]


def total(values: Sequence[Number | None]) -> Number | None:
    """The sum of the known values; None when none is known (unknown, not zero)."""
    known = _known(values)
    return sum(known) if known else None


def mean(values: Sequence[Number | None]) -> Number | None:
    """The mean of the known values, rounded to a whole number when they are whole."""
    known = _known(values)
    if not known:
        return None
    average = sum(known) / len(known)
    return round(average) if all(isinstance(v, int) for v in known) else round(average, 6)


def peak(values: Sequence[Number | None]) -> Number | None:
    known = _known(values)
    return max(known) if known else None


def last(values: Sequence[Number | None]) -> Number | None:
    """The bucket's last value (a running total at its last call; None stays unknown)."""
    return values[-1] if values else None
