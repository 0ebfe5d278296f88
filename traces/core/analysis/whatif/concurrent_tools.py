"""Scenario 3: run each parallel batch's tools concurrently; wall time saved per batch.

Only recorded tool timings are used (our own event format, Codex exec events, Claude
Code's result lines). The batch took from its first tool's start to its last tool's end;
run concurrently it takes as long as its slowest tool. Tools that already overlapped
save nothing. A batch with any tool untimed is listed as unknown, never estimated.
"""

from __future__ import annotations

from .basis import Basis
from .outcome import Outcome


def concurrent_tools(basis: Basis) -> Outcome:
    outcome = Outcome("concurrent-tools", "Run each batch's tools concurrently")
    outcome.tokens_saved = None
    outcome.usd_saved = None
    runs = {run.id: run for run in basis.runs}
    if not basis.batches:
        outcome.note("no parallel batch: no response asked several tools at once")
        outcome.status = "none"
        return outcome
    seconds = 0.0
    timed = 0
    for call, ids in basis.batches:
        batch = [runs[i] for i in ids if i in runs]
        durations = [
            None
            if r.started_at is None or r.ended_at is None
            else max(0.0, r.ended_at - r.started_at)
            for r in batch
        ]
        item = {
            "call": call,
            "tools": [r.name for r in batch],
            "durations_s": [None if d is None else round(d, 3) for d in durations],
        }
        if not batch or any(d is None for d in durations):
            missing = sum(1 for d in durations if d is None) or len(ids)
            item |= {"timings": "missing", "seconds_saved": None}
            outcome.note(f"call {call}: tool timings missing for {missing} of {len(ids)} tools")
        else:
            known = [d for d in durations if d is not None]
            wall = max(r.ended_at or 0.0 for r in batch) - min(r.started_at or 0.0 for r in batch)
            slowest = max(known)
            saved = max(0.0, wall - slowest)
            item |= {
                "timings": "recorded",
                "sum_s": round(sum(known), 3),
                "wall_s": round(wall, 3),
                "slowest_s": round(slowest, 3),
                "seconds_saved": round(saved, 3),
            }
            seconds += saved
            timed += 1
            if saved > 0:
                outcome.calls.add(call)
        outcome.items.append(item)
    if timed == 0:
        outcome.status = "unknown"
        outcome.seconds_saved = None
        outcome.note("the trace records no tool timings, so the time saved cannot be computed")
    else:
        outcome.seconds_saved = seconds
    return outcome
