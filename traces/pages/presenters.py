"""Shape stored rows into what the trace page's tables show: grouped loops and tool runs.

The trace screens' other parts have their own modules, re-exported here so the views
need one import: the call page (`call_presenter`), the sequence diagram
(`diagram_presenter`), the token accounting both pages show (`accounting_presenter`) and
the tool-run rows they share (`run_rows`).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Count, Min, Q

from traces import models
from traces.core.analysis.rules.registry import rules
from traces.core.outputs import page_summary
from traces.core.outputs.call_row import call_row_marks
from traces.core.report_types import StoredReport
from traces.pages.accounting_presenter import accounting_context
from traces.pages.call_presenter import call_context
from traces.pages.diagram_presenter import DiagramView, diagram_context, window_move
from traces.pages.page_report import PageReport, whole_report
from traces.pages.run_rows import annotate_runs

__all__ = (
    "DiagramView",
    "LoopView",
    "call_context",
    "diagram_context",
    "trace_context",
    "window_move",
)


@dataclass
class LoopView:
    index: int
    model: str
    calls: list[models.Call] = field(default_factory=list)
    size: int = 0
    label: str = ""
    parent: models.ToolRun | None = None


SIDE_CALLS_SHOWN = page_summary.SIDE_CALLS_SHOWN
RUNS_FILTERED_IN_SQL = 450
"""Up to this many shown calls, their tool runs are selected by the database (two IN
lists stay under SQLite's parameter limit); beyond, all runs are read and filtered."""


def trace_context(
    trace: models.Trace,
    *,
    loop: int | None = None,
    window: tuple[int, int] | None = None,
    page: PageReport | None = None,
) -> dict[str, Any]:
    """The trace page's tables. With `loop` and `window` (first and last call index of the
    diagram's window), the call and tool-run tables show that window only, so a
    2,000-call trace renders as fast as a short one. `page` is where the report is read
    from (traces.pages.page_report; default: the whole report)."""
    rows = trace.calls.defer(
        "appended_digests",
        "system_digest",
        "tools_digest",
        "response_digest",
        "extra_digest",
        "appended_message_digests",
        "response_message_digest",
    )
    loop_sizes, loop_models = _loop_sizes_and_models(trace)
    side_loops = {number for number, size in loop_sizes.items() if size == 1}
    if loop is not None and window is not None:
        shown = rows.filter(loop=loop, index__gte=window[0], index__lte=window[1])
    else:
        shown = rows.exclude(loop__in=side_loops)
    calls = list(shown) + list(rows.filter(loop__in=side_loops)[:SIDE_CALLS_SHOWN])
    shown_indexes = {call.index for call in calls}
    if len(shown_indexes) <= RUNS_FILTERED_IN_SQL:  # a window: read only its runs
        wanted = sorted(shown_indexes)
        runs = list(trace.tool_runs.filter(Q(call__in=wanted) | Q(result_call__in=wanted)))
    else:
        runs = [
            run
            for run in trace.tool_runs.all()
            if run.call in shown_indexes or run.result_call in shown_indexes
        ]
    page = page if page is not None else whole_report(trace)
    facts = page.window_facts(shown_indexes)
    if facts is None:  # not all in the summary and parts: the whole report
        page = whole_report(trace)
        facts = page.window_facts(shown_indexes)
        assert facts is not None
    report: StoredReport = page.report  # type: ignore[assignment]
    annotate_runs(runs, report, facts.run_entries)
    names_by_call: dict[int, list[str]] = defaultdict(list)
    for run in runs:
        if run.call is not None:
            names_by_call[run.call].append(run.name or "?")
    accounting = accounting_context(
        report,
        facts=page.accounting,
        findings=page.findings,
        call_reports=facts.call_reports,
        findings_by_call=facts.findings_by_call,
    )
    loops: dict[int, LoopView] = {}
    for call in calls:
        call.appended_count = call.message_count - call.prefix_len
        # What the row shows beyond the stored call: the same marks a live event carries.
        call.marks = call_row_marks(
            usage_reported=call.usage_reported,
            tool_names=names_by_call.get(call.index, []),
            account=accounting["call_reports"].get(call.index),
            findings=accounting["findings_by_call"].get(call.index, []),
        )
        loops.setdefault(call.loop, LoopView(call.loop, call.model)).calls.append(call)
    agent_loops = sorted(
        (view for number, view in loops.items() if number not in side_loops),
        key=lambda view: (-loop_sizes[view.index], view.index),
    )
    side_calls = sorted(
        (view.calls[0] for number, view in loops.items() if number in side_loops),
        key=lambda call: call.index,
    )
    if not agent_loops and side_calls and len(side_loops) == len(loop_sizes):
        agent_loops, side_calls = [LoopView(0, "", side_calls)], []
    other_loops = sorted(
        (
            (number, size, loop_models.get(number) or "")
            for number, size in loop_sizes.items()
            if number not in side_loops and number != loop
        ),
        key=lambda item: (-item[1], item[0]),
    )
    loop_reports = {entry["index"]: entry for entry in report.get("loops", [])}
    parents = {
        run.tool_call_id: run
        for run in trace.tool_runs.filter(
            tool_call_id__in=[
                e.get("parent_tool_id") for e in loop_reports.values() if e.get("parent_tool_id")
            ]
        )
    }
    for view in agent_loops:
        view.size = loop_sizes[view.index]
        entry = loop_reports.get(view.index)
        view.label = (entry.get("label") if entry else None) or ""
        view.parent = parents.get((entry.get("parent_tool_id") if entry else None) or "")
    return {
        **accounting,
        "trace": trace,
        "report": report,
        "agent_loops": agent_loops,
        "other_loops": other_loops if loop is not None else [],
        "side_calls": side_calls,
        "side_call_count": len(side_loops),
        "tool_runs": runs,
        "runs_not_by_id": page.runs_not_by_id,
        "report_has_calls": page.has_calls,
        "page_report": page,
        "runs_windowed": loop is not None and window is not None,
        "line_errors": list(trace.line_errors.all()[:500]),
        "other_traffic": page.other_traffic,
        "other_traffic_count": page.other_traffic_count,
        "rule_count": len(rules()),
        # The card shows the breakdown's total ("≈" when estimated), so the two agree:
        # the stored columns count reported usage only (0 when no call reported any).
        "total_input": accounting["input_total"]
        or trace.input_tokens + trace.cache_read_tokens + trace.cache_write_tokens,
    }


def _loop_sizes_and_models(trace: models.Trace) -> tuple[dict[int, int], dict[int, str]]:
    """Each loop's size and, for a loop of more than one call, its first call's model:
    counted by the database (reading 20,000 rows to count them took longer than the
    rest of the page)."""
    sizes: dict[int, int] = defaultdict(int)  # a loop the page makes up has none
    firsts: dict[int, int] = {}
    grouped = (
        trace.calls.order_by()
        .values("loop")
        .annotate(size=Count("id"), first=Min("index"))
        .values_list("loop", "size", "first")
    )
    for loop, size, first in grouped:
        sizes[loop] = size
        if size > 1:
            firsts[first] = loop
    found: dict[int, str] = {}
    wanted = sorted(firsts)
    for at in range(0, len(wanted), MODELS_PER_QUERY):
        chunk = wanted[at : at + MODELS_PER_QUERY]
        for index, model in trace.calls.filter(index__in=chunk).values_list("index", "model"):
            found[firsts[index]] = model
    return sizes, found


MODELS_PER_QUERY = 500
"""First calls whose model one query reads (under SQLite's parameter limit)."""

OTHER_TRAFFIC_SHOWN = page_summary.OTHER_TRAFFIC_SHOWN
"""Non-model HTTP interactions listed on the trace page (the report keeps them all)."""
