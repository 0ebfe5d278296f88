"""Shape one stored call into what the call page shows: its request delta, response,
tool runs, findings and neighbours in its loop."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from traces import models
from traces.core.analysis.failed_generation import attempted_tool_calls, failed_generation
from traces.core.model import Message
from traces.core.reading.capture import OUTCOME_KEY, OUTCOME_LABELS
from traces.core.report_types import StoredReport
from traces.pages.accounting_presenter import BUCKET_LABELS, accounting_context
from traces.pages.run_rows import annotate_runs
from traces.selectors.traces import call_extra, call_messages, call_request, call_response


def _hook_events(extra: Any) -> list[dict[str, Any]]:
    """Hook round trips an adapter recorded for a call (Claude Agent SDK control messages)."""
    events = extra.get("hook_events") if isinstance(extra, dict) else None
    return [e for e in events if isinstance(e, dict)] if isinstance(events, list) else []


def _outcome(extra: Any) -> dict[str, str] | None:
    """How a proxied call that did not complete ended: its key, label and the proxy's
    own words (`call_outcome`, `proxy_error` in the recorded line)."""
    key = extra.get(OUTCOME_KEY) if isinstance(extra, dict) else None
    if not isinstance(key, str) or key not in OUTCOME_LABELS:
        return None
    problem = extra.get("proxy_error")
    return {"key": key, "label": OUTCOME_LABELS[key], "problem": str(problem or "")}


MESSAGES_INLINE = 150
"""Longer requests are offered as a JSON download instead of one huge folded tree."""


@dataclass
class MessageView:
    position: int
    role: str
    message: Message | None
    raw: Any


def message_role(raw: Any, message: Message | None) -> str:
    """The role a message is shown under: the wire's own `role`, else the one its format's
    reader gave it (a Codex `function_call_output` item has no `role`; its reader knows it
    is a tool result), else "" (the page then says "message 83", never "? message 83")."""
    wire = raw.get("role") if isinstance(raw, dict) else None
    if isinstance(wire, str) and wire:
        return wire
    return message.role if message is not None and message.role else ""


def call_context(trace: models.Trace, call: models.Call) -> dict[str, Any]:
    request = call_request(trace=trace, call=call, whole_up_to=MESSAGES_INLINE)
    response = call_response(call=call)
    shown = call_messages(call=call)  # None: stored before; raw JSON is shown
    appended_raw = request.messages[call.prefix_len - request.first_message :]
    normalised = shown.appended if shown is not None else []
    appended = []
    for offset, raw in enumerate(appended_raw):
        message = normalised[offset] if offset < len(normalised) else None
        appended.append(
            MessageView(
                position=call.prefix_len + offset + 1,
                role=message_role(raw, message),
                message=message,
                raw=raw,
            )
        )
    failed = call.status == "error"
    attempted = attempted_tool_calls(response) if failed else None
    response_message = shown.response if shown is not None and call.status == "ok" else None
    loop_calls = list(trace.calls.filter(loop=call.loop).values_list("index", flat=True))
    position = loop_calls.index(call.index)
    asked = list(trace.tool_runs.filter(call=call.index))
    answered = list(trace.tool_runs.filter(result_call=call.index))
    report: StoredReport = trace.report
    annotate_runs(asked + answered, report)
    accounting = accounting_context(report)
    messages_inline = request.message_count <= MESSAGES_INLINE
    return {
        "messages_inline": messages_inline,
        "call_account": accounting["call_reports"].get(call.index, {}),
        "call_findings": accounting["findings_by_call"].get(call.index, []),
        "bucket_labels": BUCKET_LABELS,
        "trace": trace,
        "call": call,
        "call_models": [call.model] if call.model else [],
        "request": request,
        "appended": appended,
        "response": response,
        "response_message": response_message,
        "attempted_tool_calls": attempted,
        "failed_generation": failed_generation(response) if failed else None,
        "extra": (extra := call_extra(call=call)),
        "hook_events": _hook_events(extra),
        "session_result": extra.get("session_result") if isinstance(extra, dict) else None,
        "outcome": _outcome(extra),
        "asked_runs": asked,
        "answered_runs": answered,
        "previous_in_loop": loop_calls[position - 1] if position > 0 else None,
        "next_in_loop": loop_calls[position + 1] if position + 1 < len(loop_calls) else None,
        "loop_position": position + 1,
        "loop_size": len(loop_calls),
        "previous_index": call.index - 1 if call.index > 1 else None,
        "next_index": call.index + 1 if call.index < trace.calls_count else None,
    }
