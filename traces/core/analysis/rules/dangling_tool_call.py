"""Rule dangling-tool-call."""

from __future__ import annotations

from collections.abc import Iterator

from .base import Finding, LintContext, Rule
from .registry import register


@register
class DanglingToolCall(Rule):
    """A tool call that never got its result.

    What it finds
    A `tool_use` whose id has no `tool_result` in the next request of the loop, or a loop
    that ends on a response with stop reason `tool_use` (the agent halted mid-task).

    Why it matters
    The next request is rejected as malformed (every `tool_use` needs a `tool_result` in
    the following user message), or the task silently ends with no answer.

    Example
    Tom's calendar times out, the loop catches the exception and skips the result block:
    the next send fails with `tool_use ids were found without tool_result blocks`.

    How to fix
    Always append one result per call id, even on failure: return the error as the
    result's text ("error: calendar service timed out after 5 s") with `is_error: true`.
    """

    id = "dangling-tool-call"
    severity = "error"
    message = "tool call {tool_call_id} ({name}) asked in call {call} {what}"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        for run in ctx.trace.tool_runs:
            if run.call is None or run.status == "orphan":
                continue
            if run.status == "paired" and run.result_call is None:
                continue  # the tool log holds its result; the loop ended right after it
            asked = ctx.call(run.call)
            if run.id in (asked.extra.get("terminal_tool_ids") or ()):
                continue  # a tool that ends the loop by design (OpenHands `finish`)
            following = ctx.next_in_loop(asked)
            if run.status == "pending" and following is None:
                continue  # a live trace: the tool is still running
            if run.status == "dangling" and following is None:
                what = "never got a result: the loop ended on stop reason tool_use"
            elif run.result_call is None or (
                following is not None and run.result_call != following.index
            ):
                late = f" (it came in call {run.result_call})" if run.result_call else ""
                what = f"has no result in the next request{late}"
            else:
                continue
            yield self.finding(asked, run.id, name=run.name or "?", what=what)
