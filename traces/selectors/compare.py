"""A stored trace as one side of a comparison: its report and its main loop's transcript,
rebuilt from the stored rows (the arithmetic itself is in traces.core.outputs.compare)."""

from __future__ import annotations

from typing import Any

from traces import models
from traces.core.outputs.compare import Side, compare_runs, message_text
from traces.selectors.traces import call_messages, request_messages


def _main_loop_last_call(report: dict[str, Any]) -> int | None:
    loops = report.get("loops") or []
    if not loops:
        return None
    biggest = max(loops, key=lambda loop: (len(loop.get("calls") or []), -loop["index"]))
    return biggest["calls"][-1] if biggest.get("calls") else None


def stored_transcript(trace: models.Trace) -> list[str]:
    """The main loop's last request and its response, as the texts `first_divergence` diffs
    (the messages ingest normalised; empty for a trace stored before they were kept)."""
    index = _main_loop_last_call(trace.report)
    if index is None:
        return []
    call = trace.calls.filter(index=index).first()
    if call is None:
        return []
    messages = request_messages(trace=trace, call=call)
    if messages is None:
        return []
    if call.status == "ok":
        shown = call_messages(call=call)
        messages.append(shown.response if shown is not None else None)
    return [message_text(message) for message in messages if message is not None]


def stored_side(trace: models.Trace) -> Side:
    return Side(trace.name, trace.report, stored_transcript(trace))


def traces_comparison(a: models.Trace, b: models.Trace) -> dict[str, Any]:
    result = compare_runs(stored_side(a), stored_side(b))
    result["a"]["id"], result["b"]["id"] = str(a.pk), str(b.pk)
    return result
