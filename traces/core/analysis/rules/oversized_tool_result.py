"""Rule oversized-tool-result."""

from __future__ import annotations

from collections.abc import Iterator

from ._common import name_of
from .base import Finding, LintContext, Rule
from .registry import register


@register
class OversizedToolResult(Rule):
    """A tool result big enough to dominate the loop's input.

    What it finds
    A tool result of at least `result_tokens` tokens (default 800). The message gives
    its size and what it cost to carry: how many requests re-sent it and the input
    tokens that added up to (from the token accounting; exact when usage was reported,
    estimated with tiktoken otherwise).

    Why it matters
    A result is not consumed and forgotten: it is re-sent on every later call of the
    loop. A 900-token order record arriving on turn 3 of 12 costs 8,100 input tokens,
    and the fields nobody reads crowd the instructions the model should follow.

    Example
    `get_order` returns the raw 6 KB upstream payload (68 fields, status history, risk
    metadata) instead of the 14 fields the agent uses.

    How to fix
    Shape results at the tool boundary: return the answer to the question the tool
    exists for (the fields the model reads), cap lists with an honest "showing 10 of
    340" marker, and page the rest.
    """

    id = "oversized-tool-result"
    severity = "warning"
    message = (
        "result of {name} ({tool_call_id}) is {tokens} tokens, re-sent in {carrying}"
        " request(s) for {resend} input tokens; return only the fields the model needs"
    )
    defaults = {"result_tokens": 800}

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        threshold = int(self.options["result_tokens"])
        for position in sorted(ctx.accounting.results):
            entry = ctx.accounting.results[position]
            if entry.result_tokens < threshold:
                continue
            run = ctx.trace.tool_runs[position]
            if run.result_call is None:
                continue
            yield self.finding(
                ctx.call(run.result_call),
                run.id,
                name=name_of(run),
                tokens=f"{'' if entry.tokens_exact else '~'}{entry.result_tokens:,}",
                carrying=entry.requests_carrying,
                resend=f"{entry.resend_tokens:,}",
            )
