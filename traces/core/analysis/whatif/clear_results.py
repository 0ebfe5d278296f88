"""Scenario 5: clear old tool results (context editing) after K requests.

A result is kept by the K requests after it arrives; from the K+1th on it is replaced by
a short placeholder (`PLACEHOLDER`, counted with tiktoken). Each later request that
carried it saves its size minus the placeholder's. Clearing also moves the point where a
prompt cache stops matching; that effect is not simulated.
"""

from __future__ import annotations

from typing import Any

from .basis import Basis, ResultFacts
from .outcome import MAX_ITEMS, Outcome, add_usd
from .params import Params

PLACEHOLDER = "[tool result cleared to save context]"
PLACEHOLDER_TOKENS = 8
"""PLACEHOLDER's cl100k_base count, fixed so that a report needs no tokenizer for it
(tests/core/whatif/test_scenarios.py checks it against tiktoken)."""


def cleared_span(result: ResultFacts, keep: int | None, placeholder: int) -> tuple[int, int]:
    """Positions [start, stop) of the loop's requests that would carry the placeholder."""
    if keep is None or result.tokens <= placeholder or result.carrying <= keep:
        return (0, 0)
    return (result.start + keep, result.start + result.carrying)


def clear_old_results(basis: Basis, params: Params) -> Outcome:
    keep = params.clear_after
    placeholder = basis.placeholder_tokens
    outcome = Outcome(
        "clear-old-results",
        "Clear old tool results",
        parameters={"clear_after": keep, "placeholder_tokens": placeholder},
    )
    if keep is None:
        outcome.note("no K given: results are never cleared")
        outcome.status = "none"
        return outcome
    total_usd: float | None = 0.0
    tokens = 0
    cleared: list[tuple[int, ResultFacts, int, int, float | None]] = []
    for result in basis.results:
        start, stop = cleared_span(result, keep, placeholder)
        if stop <= start:
            continue
        cut = result.tokens - placeholder
        saved = cut * (stop - start)
        rates = basis.loops[result.loop].usd_per_token(start, stop)
        saved_usd = None if rates is None else cut * rates
        cleared.append((saved, result, start, stop, saved_usd))
        outcome.touch(result.loop, start, stop)
        tokens += saved
        total_usd = add_usd(total_usd, saved_usd)
        outcome.exact = outcome.exact and result.exact
    # The largest first; only the items the report keeps are made (a long loop clears
    # thousands of results, and the report keeps MAX_ITEMS of them).
    cleared.sort(key=lambda row: (-row[0], row[1].result_call, row[1].id))
    outcome.items = [_item(basis, *row) for row in cleared[:MAX_ITEMS]]
    outcome.items_beyond = len(cleared) - len(outcome.items)
    outcome.tokens_saved = tokens
    outcome.usd_saved = total_usd
    if not outcome.items:
        outcome.status = "none"
        outcome.note(f"no result was carried by more than {keep} requests")
    if not outcome.exact:
        outcome.note("≈ some result sizes are tiktoken estimates (shared or unreported usage)")
    return outcome


def _item(
    basis: Basis, saved: int, result: ResultFacts, start: int, stop: int, saved_usd: float | None
) -> dict[str, Any]:
    return {
        "id": result.id,
        "tool": result.name,
        "result_call": result.result_call,
        "result_tokens": result.tokens,
        "cleared_from_call": basis.loops[result.loop].calls[start].index,
        "requests_cleared": stop - start,
        "tokens_saved": saved,
        "usd_saved": None if saved_usd is None else round(saved_usd, 6),
        "exact": result.exact,
    }
