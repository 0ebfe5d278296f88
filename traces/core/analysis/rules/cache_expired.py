"""Rule cache-expired."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import pairwise

from ...model import Call
from ..whatif.lifetimes import expired, gap_text
from ..whatif.params import LIFETIME_LABELS
from .base import Finding, LintContext, Rule
from .registry import register


@register
class CacheExpired(Rule):
    """A call paid to write the prompt cache again because the cache had expired.

    What it finds
    A call whose request extends the previous call of its loop, which used the prompt
    cache (read or wrote it), yet this call read less than that call had cached and
    wrote tokens to the cache instead: the gap between the two requests (start to start)
    was longer than the cache lifetime (5 minutes; 1 hour when either call wrote at the
    1-hour price), so the entry was gone. The message gives the gap and what the write
    cost against reading the same tokens. Calls without timestamps are not judged.

    Why it matters
    A cache write costs 1.25x the input price (2x for the 1-hour lifetime) and a read
    0.1x: an expired cache turns the cheapest tokens of the loop into the dearest ones.
    Long tool runs, human approvals and retries with back-off are the usual gaps.

    Example
    A coding agent waits 7 minutes for the user to approve a command; the next request
    writes its 40,000-token prefix to the cache again instead of reading it.

    How to fix
    Use the 1-hour cache lifetime for loops that pause for people or slow tools (the
    `ttl` of `cache_control`), keep tools that take minutes behind a job handle, or send
    a cheap keep-alive request before the lifetime runs out when a pause is expected.
    """

    id = "cache-expired"
    severity = "info"
    message = (
        "call {call} wrote {tokens} tokens to the prompt cache again {gap} after call"
        " {previous} used it, longer than the {lifetime} cache lifetime: the write cost"
        " {cost}, reading them would have cost {read_cost}"
    )

    def check(self, ctx: LintContext) -> Iterator[Finding]:
        table = ctx.accounting.table
        for calls in ctx.loop_calls.values():
            for previous, call in pairwise(calls):
                rewritten = _rewritten(previous, call)
                if not rewritten or previous.started_at is None or call.started_at is None:
                    continue
                lifetime = "1h" if _wrote_1h(previous) or _wrote_1h(call) else "5m"
                gap = call.started_at - previous.started_at
                if not expired(gap, lifetime):
                    continue
                found = table.lookup(call.model, call.started_at) if table is not None else None
                if found is None:
                    cost = read_cost = "unknown (no price for the model)"
                else:
                    price = found[1]
                    write = price.cache_write
                    if lifetime == "1h" and price.cache_write_1h is not None:
                        write = price.cache_write_1h
                    cost = _money(rewritten * write / 1_000_000)
                    read_cost = _money(rewritten * price.cache_read / 1_000_000)
                yield self.finding(
                    call,
                    tokens=f"{rewritten:,}",
                    gap=gap_text(gap),
                    previous=previous.index,
                    lifetime=LIFETIME_LABELS[lifetime],
                    cost=cost,
                    read_cost=read_cost,
                )


def _rewritten(previous: Call, call: Call) -> int:
    """Tokens the call wrote that the previous call had cached (0: nothing rewritten)."""
    if previous.status != "ok" or call.status != "ok" or not call.extends_previous:
        return 0
    before, now = previous.usage, call.usage
    if before is None or now is None or not now.cache_write_tokens:
        return 0
    cached = before.cache_read_tokens + before.cache_write_tokens
    if not cached or now.cache_read_tokens >= cached:
        return 0
    return min(now.cache_write_tokens, cached - now.cache_read_tokens)


def _wrote_1h(call: Call) -> bool:
    return bool(call.usage is not None and call.usage.cache_write_1h_tokens)


def _money(value: float) -> str:
    return f"${value:.4f}" if value < 0.01 else f"${value:.3f}"
