"""Rule max-tokens-stop."""

from __future__ import annotations

from collections.abc import Iterator

from .base import Finding, LintContext, Rule
from .registry import register


@register
class MaxTokensStop(Rule):
    """A response cut off by the output token limit.

    What it finds
    A call whose stop reason is `max_tokens` (OpenAI's `length` and the Responses API's
    `max_output_tokens` are read as the same). When the response's last block is a
    `tool_use`, the message says so: the call's arguments were cut mid-way.

    Why it matters
    The answer is incomplete. Inside a tool call it is worse: the arguments are
    truncated JSON that cannot run, or (when a client repairs them) run with missing
    fields. Deliberate one-token probes (quota checks) show up here too.

    Example
    `Write(path, content)` with a 9,000-token file stops at `max_tokens: 8192`: the
    `content` string ends mid-line.

    How to fix
    Raise `max_tokens` for calls that write large arguments, ask the model to write in
    smaller pieces (several edits instead of one whole file), and treat a cut tool call
    as an error result instead of running it.
    """

    id = "max-tokens-stop"
    severity = "warning"
    message = (
        "call {call} stopped at the output token limit{where}; raise max_tokens or ask for less"
    )

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        for call in ctx.trace.calls:
            if call.stop_reason != "max_tokens":
                continue
            output = call.usage.output_tokens if call.usage else None
            plural = "" if output == 1 else "s"
            after = f" after {output:,} output token{plural}" if output else ""
            blocks = call.response.blocks if call.response else ()
            last = blocks[-1] if blocks else None
            if last is not None and last.kind == "tool_use":
                where = f"{after}, inside a tool_use: the arguments of {last.name or '?'} are cut"
                yield self.finding(call, last.tool_id, where=where)
            else:
                yield self.finding(call, where=after)
