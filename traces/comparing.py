"""A stored trace as one side of a comparison: its report and its main loop's transcript,
rebuilt from the stored rows (the arithmetic itself is in traces.core.compare)."""

from __future__ import annotations

from typing import Any

from traces import models, selectors
from traces.core.compare import Side, compare_runs, message_text
from traces.core.formats.registry import get_adapter


def _main_loop_last_call(report: dict[str, Any]) -> int | None:
    loops = report.get("loops") or []
    if not loops:
        return None
    biggest = max(loops, key=lambda loop: (len(loop.get("calls") or []), -loop["index"]))
    return biggest["calls"][-1] if biggest.get("calls") else None


def stored_transcript(trace: models.Trace) -> list[str]:
    """The main loop's last request and its response, as the texts `first_divergence` diffs."""
    index = _main_loop_last_call(trace.report)
    if index is None:
        return []
    try:
        normalize = get_adapter(trace.format).normalize
    except KeyError:
        return []
    call = trace.calls.filter(index=index).first()
    if call is None:
        return []
    request = selectors.call_request(trace=trace, call=call)
    raw = [m for m in request.messages if m is not None]
    response = selectors.call_response(call=call)
    texts = []
    for message in raw:
        try:
            texts.append(message_text(normalize(message)))
        except Exception:
            texts.append(f"(unreadable message) {str(message)[:2000]}")
    if isinstance(response, dict) and call.status == "ok":
        try:
            texts.append(message_text(normalize({"role": "assistant", **response})))
        except Exception:
            texts.append(f"(unreadable response) {str(response)[:2000]}")
    return texts


def stored_side(trace: models.Trace) -> Side:
    return Side(trace.name, trace.report, stored_transcript(trace))


def traces_comparison(a: models.Trace, b: models.Trace) -> dict[str, Any]:
    result = compare_runs(stored_side(a), stored_side(b))
    result["a"]["id"], result["b"]["id"] = str(a.pk), str(b.pk)
    return result
