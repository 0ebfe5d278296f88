"""Scenario 5: clear old tool results (context editing) after K requests.

A result is kept by the K requests after it arrives; from the K+1th on it is replaced by
a short placeholder (`PLACEHOLDER`, counted with tiktoken). Each later request that
carried it saves its size minus the placeholder's. Clearing also moves the point where a
prompt cache stops matching; that effect is not simulated.
"""

from __future__ import annotations

from .basis import Basis, ResultFacts
from .outcome import Outcome, add_usd
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
    for result in basis.results:
        start, stop = cleared_span(result, keep, placeholder)
        if stop <= start:
            continue
        loop = basis.loops[result.loop]
        cut = result.tokens - placeholder
        saved = cut * (stop - start)
        rates = loop.usd_per_token(start, stop)
        saved_usd = None if rates is None else cut * rates
        outcome.items.append(
            {
                "id": result.id,
                "tool": result.name,
                "result_call": result.result_call,
                "result_tokens": result.tokens,
                "cleared_from_call": loop.calls[start].index,
                "requests_cleared": stop - start,
                "tokens_saved": saved,
                "usd_saved": None if saved_usd is None else round(saved_usd, 6),
                "exact": result.exact,
            }
        )
        outcome.touch(result.loop, start, stop)
        tokens += saved
        total_usd = add_usd(total_usd, saved_usd)
        outcome.exact = outcome.exact and result.exact
    outcome.items.sort(key=lambda item: (-item["tokens_saved"], item["result_call"], item["id"]))
    outcome.tokens_saved = tokens
    outcome.usd_saved = total_usd
    if not outcome.items:
        outcome.status = "none"
        outcome.note(f"no result was carried by more than {keep} requests")
    if not outcome.exact:
        outcome.note("≈ some result sizes are tiktoken estimates (shared or unreported usage)")
    return outcome
