"""Shape stored rows into what templates show: grouped loops, call cards, tool runs."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from traces import models, selectors
from traces.core.model import Message
from traces.core.rules.registry import rules


@dataclass
class LoopView:
    index: int
    model: str
    calls: list[models.Call] = field(default_factory=list)

    @property
    def is_side_call(self) -> bool:
        return len(self.calls) == 1


def trace_context(trace: models.Trace) -> dict[str, Any]:
    calls = list(
        trace.calls.only(
            "index", "loop", "line", "model", "stop_reason", "status", "error", "http_status",
            "usage_reported", "input_tokens", "output_tokens", "cache_read_tokens",
            "cache_write_tokens", "started_at", "ended_at", "message_count", "prefix_len",
            "extends_previous", "history_rewritten", "tool_call_ids", "base_call",
        )
    )  # fmt: skip
    runs = list(trace.tool_runs.all())
    names_by_call: dict[int, list[str]] = defaultdict(list)
    for run in runs:
        if run.call is not None:
            names_by_call[run.call].append(run.name or "?")
    loops: dict[int, LoopView] = {}
    for call in calls:
        view = loops.setdefault(call.loop, LoopView(call.loop, call.model))
        view.calls.append(call)
        call.tool_names = names_by_call.get(call.index, [])
        call.appended_count = call.message_count - call.prefix_len
    ordered = sorted(loops.values(), key=lambda loop: (-len(loop.calls), loop.index))
    agent_loops = [loop for loop in ordered if not loop.is_side_call]
    side_calls = [loop.calls[0] for loop in ordered if loop.is_side_call]
    if not agent_loops and side_calls:
        agent_loops, side_calls = [LoopView(0, "", side_calls)], []
    accounting = accounting_context(trace.report)
    for call in calls:
        call.flags = accounting["findings_by_call"].get(call.index, [])
        call.account = accounting["call_reports"].get(call.index, {})
    return {
        **accounting,
        "trace": trace,
        "report": trace.report,
        "agent_loops": agent_loops,
        "side_calls": sorted(side_calls, key=lambda c: c.index),
        "tool_runs": runs,
        "line_errors": list(trace.line_errors.all()[:500]),
        "rule_count": len(rules()),
        "total_input": trace.input_tokens + trace.cache_read_tokens + trace.cache_write_tokens,
    }


@dataclass
class MessageView:
    position: int
    role: str
    message: Message | None
    raw: Any


def call_context(
    trace: models.Trace, call: models.Call, normalize: Callable[[Any], Message] | None
) -> dict[str, Any]:
    request = selectors.call_request(trace=trace, call=call)
    response = selectors.call_response(call=call)
    appended = [
        MessageView(
            position=call.prefix_len + offset + 1,
            role=str(raw.get("role", "?")) if isinstance(raw, dict) else "?",
            message=_safe_normalize(normalize, raw),
            raw=raw,
        )
        for offset, raw in enumerate(request.messages[call.prefix_len :])
    ]
    response_message = None
    if isinstance(response, dict) and normalize is not None and call.status == "ok":
        response_message = _safe_normalize(normalize, {"role": "assistant", **response})
    loop_calls = list(trace.calls.filter(loop=call.loop).values_list("index", flat=True))
    position = loop_calls.index(call.index)
    asked = list(trace.tool_runs.filter(call=call.index))
    answered = list(trace.tool_runs.filter(result_call=call.index))
    accounting = accounting_context(trace.report)
    return {
        "call_account": accounting["call_reports"].get(call.index, {}),
        "call_findings": accounting["findings_by_call"].get(call.index, []),
        "bucket_labels": BUCKET_LABELS,
        "trace": trace,
        "call": call,
        "request": request,
        "appended": appended,
        "response": response,
        "response_message": response_message,
        "extra": selectors.call_extra(call=call),
        "asked_runs": asked,
        "answered_runs": answered,
        "previous_in_loop": loop_calls[position - 1] if position > 0 else None,
        "next_in_loop": loop_calls[position + 1] if position + 1 < len(loop_calls) else None,
        "loop_position": position + 1,
        "loop_size": len(loop_calls),
        "previous_index": call.index - 1 if call.index > 1 else None,
        "next_index": call.index + 1 if call.index < trace.calls_count else None,
    }


def _safe_normalize(normalize: Callable[[Any], Message] | None, raw: Any) -> Message | None:
    if normalize is None:
        return None
    try:
        return normalize(raw)
    except Exception:  # a display helper must not turn odd input into a 500
        return None


BUCKET_LABELS = {
    "prefix": "Prefix (system + tools + first user message), re-sent every call",
    "tool_results": "Tool results, re-sent on every later call",
    "replayed_output": "The model's own earlier messages, replayed",
    "other": "Later user turns and the rest",
}


def accounting_context(report: dict[str, Any]) -> dict[str, Any]:
    """Bucket shares, cost lines, heaviest results and findings, from the stored report."""
    totals = report.get("totals", {})
    buckets = totals.get("buckets") or {}
    input_total = sum(buckets.values()) or 0
    rows = [
        {
            "key": key,
            "label": BUCKET_LABELS[key],
            "tokens": buckets.get(key, 0),
            "share": (100 * buckets.get(key, 0) / input_total) if input_total else 0,
        }
        for key in BUCKET_LABELS
    ]
    runs = report.get("tool_runs", [])
    heaviest = sorted(
        (r for r in runs if r.get("resend_tokens")),
        key=lambda r: (-r["resend_tokens"], r["id"]),
    )[:10]
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
    return {
        "bucket_rows": rows,
        "input_total": input_total,
        "output_total": totals.get("output_tokens", 0),
        "cost": totals.get("cost_usd") or {},
        "accounting": report.get("accounting") or {},
        "estimated": bool((report.get("accounting") or {}).get("estimated_calls")),
        "heaviest_results": heaviest,
        "tools_by_resend": sorted(by_tool.items(), key=lambda item: -item[1]["resend_tokens"])[:10],
        "findings": findings,
        "finding_counts": counts,
        "findings_by_call": _findings_by_call(findings),
        "call_reports": {c["index"]: c for c in calls},
    }


def _findings_by_call(findings: list[dict[str, Any]]) -> dict[int, list[dict[str, Any]]]:
    """Findings per call, each with its position in the report (its permalink number)."""
    grouped: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for number, finding in enumerate(findings, start=1):
        if finding.get("call") is not None:
            grouped[finding["call"]].append({**finding, "number": number})
    return dict(grouped)
