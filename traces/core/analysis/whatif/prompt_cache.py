"""Scenario 4: prompt caching: actual cost, no caching, and the stable prefix cached with
a 5-minute or 1-hour lifetime applied to the real gaps between calls.

The stable prefix (system prompt, tool definitions, first user message) is written to
the cache by a loop's first call and read by the next ones, unless the gap since the
previous call is longer than the lifetime, or the request did not extend the previous
one: then it is written again. Writes cost the lifetime's write price (1.25x input for
5 minutes, 2x for an hour), reads the read price (0.1x). Seed 002's clinic example:
$0.054 uncached, $0.033 with the 4.5k prefix written once and read twice.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...formatting import plural
from .basis import Basis, CallFacts
from .lifetimes import expired, gap_text
from .outcome import Outcome, unpriced_note, usd
from .params import LIFETIME_LABELS, LIFETIMES, Params


def write_price(call: CallFacts, lifetime: str) -> float | None:
    price = call.price
    if price is None:
        return None
    if lifetime == "1h" and price.cache_write_1h is not None:
        return price.cache_write_1h
    return price.cache_write


def simulate(
    basis: Basis, lifetime: str
) -> tuple[dict[int, float | None], list[dict[str, Any]], int]:
    """(cost of each call with the prefix cached, the calls that wrote it again because
    the cache had expired, gaps that could not be measured)."""
    costs: dict[int, float | None] = {}
    rewrites: list[dict[str, Any]] = []
    unknown_gaps = 0
    for loop in basis.loops.values():
        previous: CallFacts | None = None
        for call in loop.calls:
            write = previous is None or not call.extends_previous
            gap = None
            if not write and previous is not None:
                if call.started_at is None or previous.started_at is None:
                    unknown_gaps += 1
                else:
                    gap = call.started_at - previous.started_at
                    if expired(gap, lifetime):
                        write = True
                        rewrites.append(
                            {
                                "call": call.index,
                                "after_call": previous.index,
                                "gap_s": round(gap, 3),
                                "gap": gap_text(gap),
                                "tokens": call.prefix_tokens,
                            }
                        )
            costs[call.index] = _cost(call, lifetime, write)
            previous = call
    return costs, rewrites, unknown_gaps


def _cost(call: CallFacts, lifetime: str, write: bool) -> float | None:
    price = call.price
    if call.refused:
        return 0.0  # refused by the API: free in every scenario
    if price is None or call.cost_usd is None:
        return None
    prefix_price = write_price(call, lifetime) if write else price.cache_read
    assert prefix_price is not None
    rest = call.input_tokens - call.prefix_tokens
    return (
        call.prefix_tokens * prefix_price + rest * price.input + call.output_tokens * price.output
    ) / 1_000_000


def _uncached(call: CallFacts) -> float | None:
    price = call.price
    if call.refused:
        return 0.0  # refused by the API: free in every scenario
    if price is None or call.cost_usd is None:
        return None
    return (call.input_tokens * price.input + call.output_tokens * price.output) / 1_000_000


def _total(values: Iterable[float | None]) -> float | None:
    listed = list(values)
    known = [v for v in listed if v is not None]
    if not listed or len(known) < len(listed):
        return None
    return sum(known)


def prompt_cache(basis: Basis, params: Params) -> Outcome:
    lifetime = params.cache_lifetime
    outcome = Outcome(
        "prompt-cache",
        "Cache the stable prefix",
        parameters={"cache_lifetime": lifetime, "lifetime_s": LIFETIMES[lifetime]},
    )
    outcome.tokens_saved = 0
    actual = basis.cost_total
    uncached = _total(_uncached(c) for c in basis.calls.values())
    by_lifetime: dict[str, float | None] = {}
    chosen_rewrites: list[dict[str, Any]] = []
    unknown = 0
    for name in LIFETIMES:
        costs, rewrites, unknown = simulate(basis, name)
        total = _total(costs.values()) if not unknown else None
        by_lifetime[name] = usd(total)
        if name == lifetime:
            chosen_rewrites = rewrites
    outcome.extra = {
        "actual_usd": usd(actual),
        "uncached_usd": usd(uncached),
        "prefix_cached_usd": by_lifetime,
        "rewrites": chosen_rewrites,
    }
    outcome.items = [
        {"lifetime": name, "label": LIFETIME_LABELS[name], "usd": by_lifetime[name]}
        for name in LIFETIMES
    ]
    outcome.calls = {r["call"] for r in chosen_rewrites}
    outcome.exact = all(c.split_exact for c in basis.calls.values())
    if not basis.calls:
        outcome.status = "none"
        outcome.usd_saved = None
        return outcome
    if unknown:
        outcome.status = "unknown"
        outcome.usd_saved = None
        outcome.note(
            f"call times not recorded for {unknown} gap(s): whether the cache had expired"
            " cannot be told, so the cached cost is not computed"
        )
    elif actual is None or by_lifetime[lifetime] is None:
        outcome.usd_saved = None
        outcome.status = "unknown"
        outcome.note(unpriced_note(basis))
    else:
        outcome.usd_saved = actual - (by_lifetime[lifetime] or 0.0)
        if outcome.usd_saved <= 0:
            outcome.status = "none"
            outcome.note("the trace already paid no more than caching the prefix would cost")
    if chosen_rewrites:
        outcome.note(
            f"{plural(len(chosen_rewrites), 'call')} came more than the"
            f" {LIFETIME_LABELS[lifetime]} lifetime after the previous one and"
            f" {'writes' if len(chosen_rewrites) == 1 else 'write'} the prefix again"
        )
    if not outcome.exact:
        outcome.note("≈ some prefix sizes are tiktoken estimates")
    return outcome
