"""Rule split-parallel-results."""

from __future__ import annotations

from collections.abc import Iterator

from ._common import SentResult, batch_results, id_list
from .base import Finding, LintContext, Rule
from .registry import register


@register
class SplitParallelResults(Rule):
    """Results of one parallel batch sent back in several messages.

    What it finds
    A response that asked several tools at once whose results did not come back
    together: some in a later request than others, or in separate messages of one
    request (separate `user` messages, or runs of `tool` messages broken by another
    message). A run of consecutive `role: "tool"` messages (OpenAI, one result per
    message by protocol) counts as one.

    Why it matters
    The model asked for the calls together and expects every result in the next
    message. Results spread over several turns cost extra round trips, and Anthropic
    notes that results sent in separate messages teach the model to stop making
    parallel calls.

    Example
    The model asks `check_availability("priya")` and `check_availability("tom")`; the
    loop sends Priya's result, waits for the model, then sends Tom's.

    How to fix
    Run all calls of a response (concurrently when they are side-effect free), then
    append one message holding every result, each tagged with its call's id.
    """

    id = "split-parallel-results"
    severity = "warning"
    message = (
        "results of the {count} parallel calls of call {batch} came back {how}; send all"
        " results of a batch in one message"
    )

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        for batch in batch_results(ctx):
            if batch.groups <= 1:
                continue
            requests = batch.requests
            late = [s for s, turn in zip(batch.sent, batch.turns, strict=True) if turn > 0]
            if len(requests) > 1:
                listed = ", ".join(str(index) for index in requests)
                after = [s for s in batch.sent if s.call.index != requests[0]]
                how = f"across requests {listed} ({id_list([_id(s) for s in after])} late)"
                at = after[0]
            else:
                how = f"in {batch.groups} separate messages of call {requests[0]}"
                at = late[0]
            yield self.finding(
                at.call, at.block.tool_id, count=len(batch.asked), batch=batch.batch_call, how=how
            )


def _id(sent: SentResult) -> str:
    return sent.block.tool_id or ""
