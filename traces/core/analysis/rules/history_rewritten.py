"""Rule history-rewritten."""

from __future__ import annotations

from collections.abc import Iterator

from .base import Finding, LintContext, Rule
from .registry import register


@register
class HistoryRewritten(Rule):
    """A request that does not extend the previous one of its loop.

    What it finds
    A call whose transcript is not the previous call's transcript plus new messages: it
    keeps the first N messages and replaces or drops the rest (the rebuilt call is
    marked `history_rewritten`). Compaction, summarising, editing or dropping old turns
    all look like this.

    Why it matters
    Often deliberate (compaction keeps a long loop inside the context window), but it
    discards the cached prefix after message N, so the next call pays full price for
    everything after it, and anything the model learned in the dropped turns is gone.

    Example
    Claude Code compacts a 167,000-token session: the next request keeps the system
    prompt and one summary message.

    How to fix
    Nothing, when the rewrite is intended. Otherwise only append to the transcript;
    when compacting, do it rarely and keep the stable prefix (system, tools, first
    message) untouched so the cache survives.
    """

    id = "history-rewritten"
    severity = "info"
    message = "call {call} does not extend call {previous}: {change}"

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        for call in ctx.trace.calls:
            if not call.history_rewritten or call.base_call is None:
                continue
            previous = ctx.call(call.base_call)
            why = " (a compaction)" if "compaction" in call.extra else ""
            if call.prefix_len == 0:
                change = (
                    f"it replaces all {previous.message_count} of its messages{why}, so only the"
                    " system prompt and tools can still be read from the cache"
                )
            else:
                change = (
                    f"it keeps the first {call.prefix_len} of its {previous.message_count}"
                    f" messages and replaces the rest{why}, so the cached prefix after them is"
                    " lost"
                )
            yield self.finding(call, previous=previous.index, change=change)
