"""One-sentence outcome of a trace and its headline numbers."""

from __future__ import annotations

from traces.core.records import dataclass

from ..model import Call, Loop, Trace
from ..report_types import OutcomeEntry

OUTCOME_LABELS = {
    "finished": "Finished",
    "halted_on_tool_use": "Halted on tool_use",
    "api_error": "API error",
    "max_tokens": "Hit max_tokens",
    "interrupted": "Interrupted",
    "unknown": "Unknown",
}

OUTCOME_TEXT = {
    "finished": "Finished: the model ended its turn.",
    "halted_on_tool_use": "Halted on tool_use: the model asked for a tool and no request followed.",
    "api_error": "API error: the last request was rejected.",
    "max_tokens": "Stopped at max_tokens: the response was cut off.",
    "interrupted": "Interrupted by the user: the run was stopped or a tool use was rejected.",
    "unknown": "Outcome unknown: the last response was not recorded.",
}


@dataclass(frozen=True, slots=True)
class Outcome:
    kind: str
    text: str
    loop: int | None
    call: int | None

    def as_dict(self) -> OutcomeEntry:
        return {"kind": self.kind, "text": self.text, "loop": self.loop, "call": self.call}


def main_loop(trace: Trace) -> Loop | None:
    """The loop with the most calls (the agent's own conversation, not side calls)."""
    if not trace.loops:
        return None
    return max(trace.loops, key=lambda loop: (len(loop.calls), -loop.index))


def outcome_of(trace: Trace) -> Outcome:
    loop = main_loop(trace)
    if loop is None or not loop.calls:
        return Outcome("unknown", OUTCOME_TEXT["unknown"], None, None)
    last = trace.calls[loop.calls[-1] - 1]
    if last.status == "error":
        kind = "api_error"
        text = f"API error: the last request was rejected ({last.error})."
        return Outcome(kind, text, loop.index, last.index)
    if last.extra.get("interrupted"):
        kind = "interrupted"
    elif last.stop_reason == "tool_use" and not _ends_by_design(last):
        kind = "halted_on_tool_use"
    elif last.stop_reason == "max_tokens":
        kind = "max_tokens"
    elif last.response is None:
        kind = "unknown"
    else:
        kind = "finished"
    return Outcome(kind, OUTCOME_TEXT[kind], loop.index, last.index)


def _ends_by_design(call: Call) -> bool:
    """Every tool the last response asked for ends the loop (OpenHands `finish`): the
    agent finished, it did not halt."""
    terminal = set(call.extra.get("terminal_tool_ids") or ())
    return bool(terminal) and set(call.tool_call_ids) <= terminal
