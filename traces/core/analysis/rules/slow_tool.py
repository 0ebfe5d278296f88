"""Rule slow-tool."""

from __future__ import annotations

from collections.abc import Iterator

from ...model import ToolRun
from ._common import asked_runs
from .base import Finding, LintContext, Rule
from .registry import register


@register
class SlowTool(Rule):
    """A tool that took long to answer.

    What it finds
    A tool run longer than `seconds` (default 30) when the trace records when it ran
    (our own format, Codex exec events, Claude Code's result lines). When only the
    model calls are timed, the gap between the end of the call that asked the tools and
    the start of the call that carried their results is an upper bound on the tools'
    time (it also holds the loop's own work and any human approval); the message says
    so, once per asking call.

    Why it matters
    The user waits for every tool between two model calls, and nothing in the model's
    latency budget can absorb a slow upstream. Long tools also hit request timeouts
    and turn into retries.

    Example
    `track_parcel` calls a carrier API that takes 45 s; the support agent's first
    useful message arrives a minute after the question.

    How to fix
    Set a tool timeout well below the request timeout and return a timeout as an
    error result; for slow jobs return a handle at once (`{"status": "running",
    "job_id": ...}`) with a tool to check on it; run independent tools concurrently.
    """

    id = "slow-tool"
    severity = "info"
    message = "{what}; time out slow tools, or return a job handle and poll"
    defaults = {"seconds": 30}

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        limit = float(self.options["seconds"])
        for run in ctx.trace.tool_runs:
            duration = run.duration_s
            if duration is not None and duration > limit and run.call is not None:
                what = f"{run.name or '?'} ({run.id}) ran {duration:,.1f} s"
                yield self.finding(ctx.call(run.call), run.id, what=what)
        for index, runs in sorted(asked_runs(ctx).items()):
            if any(run.started_at is not None or run.ended_at is not None for run in runs):
                continue  # tool timings exist: reported above when slow
            gap = _gap(ctx, index, runs)
            if gap is None or gap <= limit:
                continue
            result_call = min(r.result_call for r in runs if r.result_call is not None)
            names = ", ".join(dict.fromkeys(run.name or "?" for run in runs))
            what = (
                f"tools asked in call {index} ({names}) took up to {gap:,.1f} s: call"
                f" {result_call} started that long after call {index} ended (only model"
                " calls are timed, so this is an upper bound)"
            )
            yield self.finding(ctx.call(index), runs[0].id, what=what)


def _gap(ctx: LintContext, index: int, runs: list[ToolRun]) -> float | None:
    """Seconds from the asking call's end to the first call that carried a result."""
    carried = [run.result_call for run in runs if run.result_call is not None]
    asking = ctx.call(index)
    if not carried or asking.ended_at is None:
        return None
    started = ctx.call(min(carried)).started_at
    if started is None:
        return None
    return started - asking.ended_at
