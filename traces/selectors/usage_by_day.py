"""Spend and tokens per day, week or month of the traces one may read, for the MCP `usage`
tool.

A stand-in, kept small on purpose: issue 27's usage page (`/usage/`) brings its own
selector, with breakdowns by bucket and by finding; the MCP tool is then meant to call
that one instead. This reads only the summary columns kept per trace (never a report),
and dates a trace by when its session started (`started_at`, UTC), or when it was stored
for a trace that records no time.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from traces import models

PERIODS = ("day", "week", "month")
COLUMNS = (
    "started_at",
    "created_at",
    "calls_count",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "cost_usd",
)


@dataclass
class PeriodTotals:
    """One period's totals: `start` is its first day (a Monday for weeks, the 1st for
    months). `cost_usd` sums the priced traces; `unpriced` counts those without a cost."""

    start: dt.date
    traces: int = 0
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0
    unpriced: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "start": self.start.isoformat(),
            "traces": self.traces,
            "calls": self.calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "cost_usd": round(self.cost_usd, 6),
            "unpriced_traces": self.unpriced,
        }


def period_start(day: dt.date, period: str) -> dt.date:
    if period == "week":
        return day - dt.timedelta(days=day.weekday())
    if period == "month":
        return day.replace(day=1)
    return day


def trace_day(started_at: float | None, created_at: dt.datetime) -> dt.date:
    """The UTC day a trace happened on."""
    if started_at is not None:
        try:
            return dt.datetime.fromtimestamp(started_at, tz=dt.UTC).date()
        except (OverflowError, OSError, ValueError):
            pass
    return created_at.astimezone(dt.UTC).date()


def usage_by_period(
    traces: QuerySet[models.Trace],
    *,
    period: str = "day",
    since: dt.date | None = None,
    until: dt.date | None = None,
) -> list[PeriodTotals]:
    """Totals per period of `traces` (already limited to what the caller may read), oldest
    first; `since` and `until` are inclusive days."""
    if period not in PERIODS:
        raise ValueError(f"period must be one of {', '.join(PERIODS)}, not {period!r}")
    found: dict[dt.date, PeriodTotals] = {}
    for started_at, created_at, calls, inp, out, read, write, cost in traces.values_list(
        *COLUMNS
    ).iterator():
        day = trace_day(started_at, created_at)
        if (since is not None and day < since) or (until is not None and day > until):
            continue
        start = period_start(day, period)
        totals = found.get(start)
        if totals is None:
            totals = found[start] = PeriodTotals(start)
        totals.traces += 1
        totals.calls += calls
        totals.input_tokens += inp
        totals.output_tokens += out
        totals.cache_read_tokens += read
        totals.cache_write_tokens += write
        if cost is None:
            totals.unpriced += 1
        else:
            totals.cost_usd += cost
    return [found[start] for start in sorted(found)]
