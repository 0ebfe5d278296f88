"""Scenario 2: ask the serial independent calls in one batch, so their round trips vanish.

The calls come from the `serial-independent-calls` findings: call k+1 asked tools whose
arguments were known before call k's result, so had call k asked them too, call k+1
would not exist. Its input tokens and their cost disappear; its output (the tool calls)
would have been written by call k instead, so output is not counted as saved. The model
time saved is the call's own duration, when the trace timed it.
"""

from __future__ import annotations

from .basis import Basis
from .outcome import MAX_ITEMS, Outcome, add_usd


def batch_serial_calls(basis: Basis) -> Outcome:
    outcome = Outcome("batch-serial-calls", "Batch the serial independent calls")
    if not basis.serial_pairs:
        outcome.note("no serial-independent-calls finding: every call asked what it had to")
        outcome.status = "none"
        return outcome
    tool_names: dict[int, list[str]] = {}
    for run in basis.runs:
        if run.call is not None:
            tool_names.setdefault(run.call, []).append(run.name)
    seconds: float | None = 0.0
    total_usd: float | None = 0.0
    tokens = 0
    untimed = []
    for pair in basis.serial_pairs:
        call = basis.calls[pair.call]
        cost = call.input_usd
        duration = call.duration_s
        if duration is None:
            untimed.append(call.index)
        if len(outcome.items) < MAX_ITEMS:  # the report keeps these; the rest are counted
            outcome.items.append(
                {
                    "call": call.index,
                    "batched_into": pair.previous,
                    "tools": tool_names.get(call.index, []),
                    "input_tokens": call.input_tokens,
                    "usd_saved": None if cost is None else round(cost, 6),
                    "model_seconds": None if duration is None else round(duration, 3),
                }
            )
        else:
            outcome.items_beyond += 1
        outcome.calls.add(call.index)
        tokens += call.input_tokens
        total_usd = add_usd(total_usd, cost)
        seconds = None if seconds is None or duration is None else seconds + duration
        outcome.exact = outcome.exact and call.reported
    outcome.tokens_saved = tokens
    outcome.usd_saved = total_usd
    outcome.seconds_saved = seconds
    if untimed:
        outcome.note(
            f"model time unknown: {'call' if len(untimed) == 1 else 'calls'} "
            + ", ".join(str(i) for i in untimed)
            + (" carries" if len(untimed) == 1 else " carry")
            + " no timings"
        )
    if not outcome.exact:
        outcome.note("≈ some calls reported no usage: their input is a tiktoken estimate")
    return outcome
