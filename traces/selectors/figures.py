"""The trace page's summary figures of one stored trace: its row's counts and its report.

One function for the page's first paint and for the live "state" event
(traces.live.events), so a page that followed a live trace and a reload of it show the
same cards, outcome, token table, findings counts and what-if figures.
"""

from __future__ import annotations

from traces import models
from traces.core.analysis.rules.registry import rules
from traces.core.outputs.page_figures import PageFigures, TraceCounts, page_figures
from traces.core.outputs.page_summary import PageSummary


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


def trace_figures(trace: models.Trace, summary: PageSummary | None = None) -> PageFigures:
    """The figures of the trace as stored now (a live trace's report may cover fewer lines
    than its row: both are shown as they are, as a reload would); given its page
    `summary`, the report is not read (the figures' findings order is then empty: the
    page never prints it)."""
    return page_figures(
        summary["report"] if summary is not None else (trace.report or {}),
        trace_counts(trace),
        running=trace.state == models.Trace.State.LIVE,
        rule_count=len(rules()),
        digest=summary["digest"] if summary is not None else None,
    )
