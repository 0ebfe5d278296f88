"""Rule orphan-tool-result."""

from __future__ import annotations

from collections.abc import Iterator

from ...model import ToolRun
from .base import Finding, LintContext, Rule
from .registry import register


@register
class OrphanToolResult(Rule):
    """A tool result that answers no tool call.

    What it finds
    A `tool_result` whose id matches no `tool_use` the loop asked for (the rebuilt tool
    run has status `orphan`). Ids are compared exactly as written, so a stray space, a
    changed case or a truncated id makes the result an orphan; the message names the
    call id it most likely meant when only whitespace or case differ.

    Why it matters
    The API rejects a result that does not answer a `tool_use` of the previous assistant
    message (`unexpected tool_use_id found in tool_result blocks`), and a client that
    pairs by position instead of id shows the model the wrong result.

    Example
    The loop formats ids with `f"{call.id} "` and sends `tool_use_id: "toolu_01A "`:
    the request fails with HTTP 400, or the matching call is left dangling.

    How to fix
    Copy the id of each `tool_use` verbatim into its `tool_result`; never rebuild,
    strip or re-case ids.
    """

    id = "orphan-tool-result"
    severity = "error"
    message = "tool result {tool_call_id!r} sent in call {call} answers no tool call{hint}"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        asked = _asked_ids_by_loop(ctx)
        reported: set[tuple[int, str]] = set()
        for run in ctx.trace.tool_runs:
            if run.status != "orphan" or run.result_call is None:
                continue  # executions logged without any result sent are not requests
            if (run.loop, run.id) in reported:
                continue  # re-sent after a history rewrite: one finding is enough
            reported.add((run.loop, run.id))
            hint = _near_miss(run, asked.get(run.loop, []))
            yield self.finding(ctx.call(run.result_call), run.id, hint=hint)


def _asked_ids_by_loop(ctx: LintContext) -> dict[int, list[str]]:
    asked: dict[int, list[str]] = {}
    for run in ctx.trace.tool_runs:
        if run.status != "orphan":
            asked.setdefault(run.loop, []).append(run.id)
    return asked


def _near_miss(run: ToolRun, asked: list[str]) -> str:
    """Name the asked id that differs only by whitespace or case, when there is one."""
    wanted = run.id.strip().casefold()
    for candidate in asked:
        if candidate != run.id and candidate.strip().casefold() == wanted:
            how = "whitespace" if candidate.strip() == run.id.strip() else "case"
            return f": tool call {candidate!r} differs only by {how}, copy ids verbatim"
    return ": send results only for ids the previous assistant message asked for"
