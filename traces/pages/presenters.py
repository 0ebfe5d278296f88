"""Shape stored rows into what templates show: grouped loops, call cards, tool runs."""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from django.db.models import Q
from django.utils.safestring import SafeString, mark_safe

from traces import models
from traces.core.analysis.failed_generation import attempted_tool_calls, failed_generation
from traces.core.analysis.rules.registry import rules
from traces.core.model import Message
from traces.core.outputs import render
from traces.core.outputs.call_row import call_row_marks
from traces.core.outputs.render import charts as render_charts
from traces.core.report_types import FindingEntry, StoredReport, ToolRunEntry
from traces.pages.links import TraceLinks
from traces.selectors.traces import call_extra, call_messages, call_request, call_response


@dataclass
class LoopView:
    index: int
    model: str
    calls: list[models.Call] = field(default_factory=list)
    size: int = 0
    label: str = ""
    parent: models.ToolRun | None = None

    @property
    def is_side_call(self) -> bool:
        return len(self.calls) == 1


SIDE_CALLS_SHOWN = 200
RUNS_FILTERED_IN_SQL = 450
"""Up to this many shown calls, their tool runs are selected by the database (two IN
lists stay under SQLite's parameter limit); beyond, all runs are read and filtered."""


def trace_context(
    trace: models.Trace, *, loop: int | None = None, window: tuple[int, int] | None = None
) -> dict[str, Any]:
    """The trace page's tables. With `loop` and `window` (first and last call index of the
    diagram's window), the call and tool-run tables show that window only, so a
    2,000-call trace renders as fast as a short one."""
    rows = trace.calls.defer(
        "appended_digests",
        "system_digest",
        "tools_digest",
        "response_digest",
        "extra_digest",
        "appended_message_digests",
        "response_message_digest",
    )
    loop_sizes: dict[int, int] = defaultdict(int)
    loop_models: dict[int, str] = {}
    for call_loop, model in trace.calls.values_list("loop", "model"):
        loop_sizes[call_loop] += 1
        loop_models.setdefault(call_loop, model)
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
    report: StoredReport = trace.report
    _annotate_runs(runs, report)
    names_by_call: dict[int, list[str]] = defaultdict(list)
    for run in runs:
        run.pairing_label = PAIRING_LABELS.get(run.pairing)
        if run.call is not None:
            names_by_call[run.call].append(run.name or "?")
    accounting = accounting_context(report)
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
        "runs_not_by_id": any(r.get("pairing") for r in report_runs(trace)),
        "runs_windowed": loop is not None and window is not None,
        "line_errors": list(trace.line_errors.all()[:500]),
        "other_traffic": report.get("other_traffic", [])[:OTHER_TRAFFIC_SHOWN],
        "other_traffic_count": len(report.get("other_traffic", [])),
        "rule_count": len(rules()),
        "total_input": trace.input_tokens + trace.cache_read_tokens + trace.cache_write_tokens,
    }


OTHER_TRAFFIC_SHOWN = 500
"""Non-model HTTP interactions listed on the trace page (the report keeps them all)."""


def report_runs(trace: models.Trace) -> list[ToolRunEntry]:
    report: StoredReport = trace.report
    runs = report.get("tool_runs")
    return runs if isinstance(runs, list) else []


def _annotate_runs(runs: list[models.ToolRun], report: StoredReport) -> None:
    """Give each row the report's pairing method and where the tool ran (an MCP server);
    rows and report entries share their order (position is 1-based)."""
    listed = report.get("tool_runs")
    entries: list[Any] = listed if isinstance(listed, list) else []
    for run in runs:
        entry = entries[run.position - 1] if 0 < run.position <= len(entries) else {}
        entry = entry if isinstance(entry, dict) else {}
        run.pairing = entry.get("pairing") or "id"
        run.transport = entry.get("transport") if isinstance(entry.get("transport"), dict) else None


PAIRING_LABELS = {
    "name-order": (
        "by name and order",
        "The format records no call ids: paired by tool name, in order, within a turn",
    ),
    "name-input": (
        "by name and arguments",
        "A tool span with no call id, matched to the call with the same tool name and arguments",
    ),
    "text": (
        "by position in text",
        "Calls written as text (Function Name / Function Input / "
        "Function Output), paired by position",
    ),
}
"""How a tool run was paired when not by call id: a short label and its explanation."""


def _hook_events(extra: Any) -> list[dict[str, Any]]:
    """Hook round trips an adapter recorded for a call (Claude Agent SDK control messages)."""
    events = extra.get("hook_events") if isinstance(extra, dict) else None
    return [e for e in events if isinstance(e, dict)] if isinstance(events, list) else []


MESSAGES_INLINE = 150
"""Longer requests are offered as a JSON download instead of one huge folded tree."""


@dataclass
class MessageView:
    position: int
    role: str
    message: Message | None
    raw: Any


def call_context(trace: models.Trace, call: models.Call) -> dict[str, Any]:
    request = call_request(trace=trace, call=call)
    response = call_response(call=call)
    shown = call_messages(call=call)  # None: stored before; raw JSON is shown
    appended_raw = request.messages[call.prefix_len :]
    normalised = shown.appended if shown is not None else []
    appended = [
        MessageView(
            position=call.prefix_len + offset + 1,
            role=str(raw.get("role", "?")) if isinstance(raw, dict) else "?",
            message=normalised[offset] if offset < len(normalised) else None,
            raw=raw,
        )
        for offset, raw in enumerate(appended_raw)
    ]
    failed = call.status == "error"
    attempted = attempted_tool_calls(response) if failed else None
    response_message = shown.response if shown is not None and call.status == "ok" else None
    loop_calls = list(trace.calls.filter(loop=call.loop).values_list("index", flat=True))
    position = loop_calls.index(call.index)
    asked = list(trace.tool_runs.filter(call=call.index))
    answered = list(trace.tool_runs.filter(result_call=call.index))
    report: StoredReport = trace.report
    _annotate_runs(asked + answered, report)
    for run in asked + answered:
        run.pairing_label = PAIRING_LABELS.get(run.pairing)
    accounting = accounting_context(report)
    messages_inline = len(request.messages) <= MESSAGES_INLINE
    return {
        "messages_inline": messages_inline,
        "call_account": accounting["call_reports"].get(call.index, {}),
        "call_findings": accounting["findings_by_call"].get(call.index, []),
        "bucket_labels": BUCKET_LABELS,
        "trace": trace,
        "call": call,
        "request": request,
        "appended": appended,
        "response": response,
        "response_message": response_message,
        "attempted_tool_calls": attempted,
        "failed_generation": failed_generation(response) if failed else None,
        "extra": (extra := call_extra(call=call)),
        "hook_events": _hook_events(extra),
        "session_result": extra.get("session_result") if isinstance(extra, dict) else None,
        "asked_runs": asked,
        "answered_runs": answered,
        "previous_in_loop": loop_calls[position - 1] if position > 0 else None,
        "next_in_loop": loop_calls[position + 1] if position + 1 < len(loop_calls) else None,
        "loop_position": position + 1,
        "loop_size": len(loop_calls),
        "previous_index": call.index - 1 if call.index > 1 else None,
        "next_index": call.index + 1 if call.index < trace.calls_count else None,
    }


BUCKET_LABELS = {
    "prefix": "Prefix (system + tools + first user message), re-sent every call",
    "tool_results": "Tool results, re-sent on every later call",
    "replayed_output": "The model's own earlier messages, replayed",
    "other": "Later user turns and the rest",
}


@dataclass(frozen=True)
class BucketRow:
    """One line of the "where the input went" table: a bucket, its tokens and share."""

    key: str
    label: str
    tokens: int
    share: float


def accounting_context(report: StoredReport) -> dict[str, Any]:
    """Bucket shares, cost lines, heaviest results and findings, from the stored report."""
    # Stored reports come from the database: read defensively, a key may be missing.
    totals: Mapping[str, Any] = report.get("totals") or {}
    buckets: Mapping[str, int] = totals.get("buckets") or {}
    input_total = sum(buckets.values()) or 0
    rows = [
        BucketRow(
            key=key,
            label=BUCKET_LABELS[key],
            tokens=buckets.get(key, 0),
            share=(100 * buckets.get(key, 0) / input_total) if input_total else 0,
        )
        for key in BUCKET_LABELS
    ]
    runs = report.get("tool_runs", [])
    heaviest = heapq.nsmallest(  # = sorted(...)[:10], without sorting every run
        10,
        (r for r in runs if r.get("resend_tokens")),
        key=lambda r: (-r["resend_tokens"], r["id"]),
    )
    by_tool: dict[str, dict[str, int]] = {}
    for run in runs:
        entry = by_tool.setdefault(run.get("name") or "?", {"runs": 0, "resend_tokens": 0})
        entry["runs"] += 1
        entry["resend_tokens"] += run.get("resend_tokens") or 0
    findings = report.get("findings", [])
    counts = {level: 0 for level in ("error", "warning", "info")}
    for finding in findings:
        counts[finding["severity"]] = counts.get(finding["severity"], 0) + 1
    calls = report.get("calls", [])
    accounting = report.get("accounting")
    return {
        "bucket_rows": rows,
        "input_total": input_total,
        "output_total": totals.get("output_tokens", 0),
        "cost": totals.get("cost_usd") or {},
        "accounting": accounting or {},
        "estimated": bool(accounting and accounting.get("estimated_calls")),
        "heaviest_results": heaviest,
        "tools_by_resend": sorted(by_tool.items(), key=lambda item: -item[1]["resend_tokens"])[:10],
        "findings": findings,
        "finding_counts": counts,
        "findings_by_call": _findings_by_call(findings),
        "call_reports": {c["index"]: c for c in calls},
    }


def _findings_by_call(findings: Sequence[FindingEntry]) -> dict[int, list[dict[str, Any]]]:
    """Findings per call, each with its position in the report (its permalink number)."""
    grouped: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for number, finding in enumerate(findings, start=1):
        call = finding.get("call")
        if call is not None:
            grouped[call].append({**finding, "number": number})
    return dict(grouped)


SPACINGS = ("step", "time")
CHART_KEYS = ("growth", "cost", "timeline", "resend_results", "resend_by_tool")
WINDOW_SIZES = (30, 60, 120)


def _int_param(params: Any, name: str, default: int, low: int, high: int) -> int:
    try:
        value = int(params.get(name, default))
    except (TypeError, ValueError):
        return default
    return max(low, min(high, value))


@dataclass(frozen=True)
class DiagramView:
    """The sequence diagram window of the trace page: the SVG, the overview strip, and
    the links and choices around it (previous/next window, loop, spacing, size)."""

    svg: SafeString
    overview: SafeString
    window: dict[str, Any]
    """The window `render.sequence_view` drew: loop, first and last call, neighbours."""
    loop: int
    spacing: str
    window_size: int
    previous_href: str | None
    next_href: str | None
    loop_choices: list[tuple[int, int]]
    """(loop, calls) for the loop picker: the 30 largest loops with more than one call."""
    spacings: tuple[str, ...] = SPACINGS
    window_sizes: tuple[int, ...] = WINDOW_SIZES


def diagram_context(trace: models.Trace, params: Any) -> dict[str, Any]:
    """The sequence diagram window, overview strip and chart figures for the trace page.

    The loop defaults to the one the outcome names (the agent's own loop); the window,
    spacing and loop come from the query string so every view has a shareable URL.
    """
    report: StoredReport = trace.report
    loops = [loop["index"] for loop in report.get("loops", [])]
    if not loops:
        return {
            "diagram": None,
            "figures": {},
            "chart_keys": CHART_KEYS,
            "chart_themes": render_charts.THEMES,
        }
    outcome = report.get("outcome")
    default_loop = (outcome.get("loop") if outcome else None) or loops[0]
    loop = _int_param(params, "loop", default_loop, min(loops), max(loops))
    if loop not in loops:
        loop = default_loop
    window = _int_param(params, "window", 60, 10, 200)
    start = _int_param(params, "start", 1, 1, 1_000_000)
    spacing: Literal["step", "time"] = "time" if params.get("spacing") == "time" else "step"

    def href(window_start: int) -> str:
        return f"?loop={loop}&start={window_start}&window={window}&spacing={spacing}#sequence"

    view = render.sequence_view(
        report,
        links=TraceLinks(trace.pk),
        loop=loop,
        start=start,
        window=window,
        spacing=spacing,
        window_href=href,
    )
    meta = view["window"]
    loop_sizes = {entry["index"]: len(entry["calls"]) for entry in report.get("loops", [])}
    return {
        "diagram": DiagramView(
            svg=mark_safe(view["svg"]),
            overview=mark_safe(view["overview"]),
            window=meta,
            loop=loop,
            spacing=spacing,
            window_size=window,
            previous_href=href(meta["previous_start"]) if meta["previous_start"] else None,
            next_href=href(meta["next_start"]) if meta["next_start"] else None,
            loop_choices=sorted(
                ((index, size) for index, size in loop_sizes.items() if size > 1 or index == loop),
                key=lambda item: (-item[1], item[0]),
            )[:30],
        ),
        "figures": render.figures(report, theme="light", loop=loop),
        "chart_keys": CHART_KEYS,
        "chart_themes": render_charts.THEMES,
    }
