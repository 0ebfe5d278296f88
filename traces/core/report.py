"""The JSON report (`loop-inspector/report/v1`): the stable, documented view of a trace.

Later versions add keys; none are renamed. See docs/report-schema.md.
"""

from __future__ import annotations

from typing import Any

from .model import Call, Trace
from .summary import outcome_of

SCHEMA = "loop-inspector/report/v1"


def build_report(trace: Trace) -> dict[str, Any]:
    calls = [_call(call) for call in trace.calls]
    runs = [
        {
            "id": run.id,
            "name": run.name,
            "call": run.call,
            "result_call": run.result_call,
            "status": run.status,
            "is_error": run.is_error,
            "batch_size": run.batch_size,
            "loop": run.loop,
        }
        for run in trace.tool_runs
    ]
    usage_sum = {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0}
    usage_sum["cache_write_tokens"] = 0
    for call in trace.calls:
        if call.usage is not None:
            usage_sum["input_tokens"] += call.usage.input_tokens
            usage_sum["output_tokens"] += call.usage.output_tokens
            usage_sum["cache_read_tokens"] += call.usage.cache_read_tokens
            usage_sum["cache_write_tokens"] += call.usage.cache_write_tokens
    return {
        "schema": SCHEMA,
        "format": trace.format,
        "detection": trace.detection_reason,
        "outcome": outcome_of(trace).as_dict(),
        "lines": {
            "total": trace.lines_total,
            "ingested": trace.records_ingested,
            "errors": [{"line": e.line, "message": e.message} for e in trace.line_errors],
        },
        "loops": [
            {"index": loop.index, "calls": list(loop.calls), "model": loop.model}
            for loop in trace.loops
        ],
        "calls": calls,
        "tool_runs": runs,
        "parallel_batches": [
            {"call": batch.call, "tool_call_ids": list(batch.tool_call_ids)}
            for batch in trace.batches
        ],
        "totals": {
            "calls": len(trace.calls),
            "failed_calls": sum(1 for c in trace.calls if c.status == "error"),
            "loops": len(trace.loops),
            "tool_runs": len(trace.tool_runs),
            **usage_sum,
        },
    }


def _call(call: Call) -> dict[str, Any]:
    usage = call.usage
    return {
        "index": call.index,
        "loop": call.loop,
        "line": call.line,
        "model": call.model,
        "stop_reason": call.stop_reason,
        "status": call.status,
        "error": call.error,
        "http_status": call.http_status,
        "input_tokens": usage.input_tokens if usage else None,
        "output_tokens": usage.output_tokens if usage else None,
        "cache_read_tokens": usage.cache_read_tokens if usage else None,
        "cache_write_tokens": usage.cache_write_tokens if usage else None,
        "tool_call_ids": list(call.tool_call_ids),
        "started_at": call.started_at,
        "duration_s": call.duration_s,
        "messages": call.message_count,
        "appended": len(call.appended),
        "extends_previous": call.extends_previous,
        "history_rewritten": call.history_rewritten,
    }
