"""The trace page's summary figures of one stored trace: its row's counts and its report.

One function for the page's first paint and for the live "state" event
(traces.live.events), so a page that followed a live trace and a reload of it show the
same cards, outcome, token table, findings counts and what-if figures.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from traces import models
from traces.core.analysis.rules.registry import rules
from traces.core.outputs.page_figures import (
    PageFigures,
    ReportDigest,
    TraceCounts,
    page_figures,
)


def trace_counts(trace: models.Trace) -> TraceCounts:
    return {
        "calls": trace.calls_count,
        "failed_calls": trace.failed_calls,
        "tool_runs": trace.tool_runs_count,
        "input_tokens": trace.input_tokens,
        "output_tokens": trace.output_tokens,
        "cache_read_tokens": trace.cache_read_tokens,
        "cache_write_tokens": trace.cache_write_tokens,
        "lines": trace.lines_total,
        "line_errors": trace.line_errors_count,
        "wall_time_s": trace.wall_time_s,
    }


def trace_figures(
    trace: models.Trace,
    small_report: Mapping[str, Any] | None = None,
    digest: ReportDigest | None = None,
) -> PageFigures:
    """The figures of the trace as stored now (a live trace's report may cover fewer lines
    than its row: both are shown as they are, as a reload would); given the small keys
    of its report and their `digest` (a page summary's), the report is not read (the
    figures' findings order is then empty: the page never prints it)."""
    return page_figures(
        small_report if small_report is not None else (trace.report or {}),
        trace_counts(trace),
        running=trace.state == models.Trace.State.LIVE,
        rule_count=len(rules()),
        digest=digest,
    )
