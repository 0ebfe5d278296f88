"""Rule results-out-of-order."""

from __future__ import annotations

from collections.abc import Iterator

from ._common import batch_results, id_list
from .base import Finding, LintContext, Rule
from .registry import register


@register
class ResultsOutOfOrder(Rule):
    """Results of a parallel batch returned in a different order than asked.

    What it finds
    A batch whose results came back together (see split-parallel-results for the other
    case) but not in the order the response asked the calls.

    Why it matters
    Pairing is by id, so the model reads the right result either way; but an order
    that depends on which tool finished first makes two identical runs produce
    different transcripts, which defeats caching of later turns and makes runs harder
    to compare and replay. A loop that pairs by position instead of id breaks outright.

    Example
    The model asks `get_order` then `track_parcel`; the parcel API answers first and
    its result is appended first.

    How to fix
    Run the calls concurrently but append the results in the order of the calls, each
    tagged with its call's id.
    """

    id = "results-out-of-order"
    severity = "info"
    message = (
        "results of the parallel calls of call {batch} came back as {got}, not in the"
        " order asked ({asked}); append results in call order"
    )

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        for batch in batch_results(ctx):
            if batch.groups > 1:
                continue
            got = [sent.block.tool_id or "" for sent in batch.sent]
            present = set(got)
            asked = [i for i in dict.fromkeys(batch.asked) if i in present]
            if got == asked:
                continue
            moved = [s for s, a in zip(batch.sent, asked, strict=False) if s.block.tool_id != a]
            if not moved:
                continue
            first_moved = moved[0]
            yield self.finding(
                first_moved.call,
                first_moved.block.tool_id,
                batch=batch.batch_call,
                got=id_list(got),
                asked=id_list(asked),
            )
