"""The hover titles and aria labels of the diagram: each arrow's numbers in words."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ....analysis.failed_generation import describe
from ....formatting import duration, money
from ..svg import truncate
from .index import lane_name
from .style import DASH_RANGE
from .window import SequenceWindow


def diagram_title(meta: SequenceWindow) -> str:
    if not meta.total:
        return "Sequence diagram: no calls"
    loop = f"loop {meta.loop}, " if meta.loop is not None else ""
    return (
        f"Sequence diagram of {loop}calls {meta.start}{DASH_RANGE}{meta.end} of {meta.total:,}: "
        "solid arrows touch the model and are billed; dashed arrows are tool runs in "
        "your code, not billed."
    )


def request_title(call: Mapping[str, Any], tokens: int, exact: bool) -> str:
    index = call["index"]
    lines = [f"Call {index} · request to the model (billed)"]
    if call.get("model"):
        lines.append(f"model: {call['model']}")
    approx = "" if exact else "≈ "
    lines.append(f"input: {approx}{tokens:,} tokens")
    if call.get("input_tokens") is not None:
        lines.append(
            f"  uncached {call['input_tokens']:,} · cache read "
            f"{call.get('cache_read_tokens') or 0:,} · cache write "
            f"{call.get('cache_write_tokens') or 0:,}"
        )
    buckets = call.get("buckets") or {}
    if buckets:
        split = "" if call.get("tokens_exact", True) else "≈ "
        lines.append(
            f"  {split}prefix {buckets.get('prefix', 0):,} · tool results "
            f"{buckets.get('tool_results', 0):,} · replayed output "
            f"{buckets.get('replayed_output', 0):,} · other {buckets.get('other', 0):,}"
        )
    if call.get("cost_usd") is not None:
        lines.append(f"cost: {money(call['cost_usd'])}")
    if call.get("messages") is not None:
        lines.append(f"messages sent: {call['messages']} ({call.get('appended', 0)} new)")
    return "\n".join(lines)


def response_title(call: Mapping[str, Any]) -> str:
    lines = [f"Call {call['index']} · response from the model (billed)"]
    if call.get("status") == "error":
        lines.append(f"failed: {call.get('error') or 'no error text'}")
        if call.get("http_status"):
            lines.append(f"HTTP status: {call['http_status']}")
        tried = call.get("attempted_tool_calls")
        if tried:
            lines.append(f"the model tried to call {truncate(describe(tried), 200)}")
    else:
        output = call.get("output_tokens")
        lines.append(f"output: {output:,} tokens" if output is not None else "output: unknown")
        lines.append(f"stop reason: {call.get('stop_reason') or 'none'}")
    if call.get("duration_s") is not None:
        lines.append(f"duration: {duration(call['duration_s'])}")
    ids = call.get("tool_call_ids") or []
    if ids:
        lines.append(f"asked for {len(ids)} tool call{'s' if len(ids) != 1 else ''}")
    return "\n".join(lines)


def tool_call_title(run: Mapping[str, Any]) -> str:
    lines = [
        f"Tool call {lane_name(run)} · id {run.get('id')}",
        "run by your code: no model call, not billed",
        f"asked in call {run.get('call')}",
        f"status: {run.get('status')}",
    ]
    if (run.get("batch_size") or 1) > 1:
        lines.append(f"parallel batch of {run['batch_size']}")
    if run.get("duration_s") is not None:
        lines.append(f"ran for {duration(run['duration_s'])}")
    if run.get("result_call") is not None:
        lines.append(f"result carried by call {run['result_call']}")
    return "\n".join(lines)


def result_size(run: Mapping[str, Any]) -> str:
    tokens = run.get("result_tokens")
    if tokens is None:
        return ""
    approx = "" if run.get("result_tokens_exact", True) else "≈"
    return f" · {approx}{tokens:,} tok"


def result_title(run: Mapping[str, Any]) -> str:
    status = run.get("status")
    if status == "orphan":
        head = f"Orphan result · id {run.get('id')}: no call in this loop asked for it"
    else:
        head = f"Result of {lane_name(run)} · id {run.get('id')}"
    lines = [head, "returned to your code: not billed here"]
    tokens = run.get("result_tokens")
    if tokens is not None:
        approx = "" if run.get("result_tokens_exact", True) else "≈ "
        carrying = run.get("requests_carrying") or 0
        lines.append(
            f"{approx}{tokens:,} tokens, billed as input in {carrying} request"
            f"{'s' if carrying != 1 else ''} ({approx}{run.get('resend_tokens') or 0:,} tokens)"
        )
    if run.get("is_error"):
        lines.append("the tool reported an error")
    elif run.get("error_inferred"):
        lines.append(f"reads as an error, though not flagged: {run['error_inferred']}")
    if run.get("call") is None and status != "orphan":
        lines.append("asked before the trace began")
    if run.get("result_call") is not None:
        lines.append(f"carried by call {run['result_call']}")
    return "\n".join(lines)


def result_aria(run: Mapping[str, Any], call: int) -> str:
    if run.get("status") == "orphan":
        return f"Orphan tool result {run.get('id')} arriving in call {call}"
    return f"Result of tool {lane_name(run)} returned for call {call}, not billed"


def finding_line(finding: Mapping[str, Any]) -> str:
    return f"{finding.get('severity')} · {finding.get('rule')}: {finding.get('message')}"
