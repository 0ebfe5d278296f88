"""What a call's row in the trace page's call table shows beyond the call's own facts.

The trace page paints its rows from the stored report; a live page adds rows from live
events sent before that report covers the call. Both take their marks from here, so a
row reads the same whichever way it reached the page (the page's script builds the same
markup from a live event as the template does from the marks).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..analysis.pricing import PriceTable, call_cost
from ..model import Call
from ..report_types import CallRowMarks, FindingEntry


def call_row_marks(
    *,
    usage_reported: bool,
    tool_names: Sequence[str],
    account: Mapping[str, Any] | None,
    findings: Sequence[FindingEntry] = (),
    cost_usd: float | None = None,
) -> CallRowMarks:
    """A row's marks. `account`: the call's entry in the stored report (read defensively:
    a report written by an earlier version may lack a key), or None before the report
    covers the call; then `cost_usd` (the cost from the call's own usage, see
    `usage_cost`) stands for the report's, and the input of a call that reported no usage
    is not estimated yet."""
    estimated = None
    if account is not None:
        cost_usd = account.get("cost_usd")
        buckets = account.get("buckets")
        if not usage_reported and isinstance(buckets, Mapping):
            estimated = sum(buckets.values())
    return {
        "tool_names": list(tool_names),
        "cost_usd": cost_usd,
        "estimated_input": estimated,
        "findings": list(findings),
    }


def usage_cost(call: Call, prices: PriceTable) -> float | None:
    """A call's cost from its own usage, rounded as the report rounds it (the report adds
    the estimates for calls that reported none); None when unknown or unpriced."""
    if call.usage is None:
        return None
    price = prices.lookup(call.model, call.started_at)
    return None if price is None else round(call_cost(call.usage, price[1]), 6)
