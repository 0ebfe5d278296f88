"""Scenario 1: cap a tool's results at N tokens and re-price every request that carried them.

A result of r tokens capped to N saves r - N on each request that carried it (the seeds'
Sundry order: 900 tokens carried by 9 requests is 8,100; capped to 340 it is 3,060).
Dollars are each carrying call's own input price per token. The model might have
behaved differently on the shorter result; that is not simulated.
"""

from __future__ import annotations

from collections.abc import Mapping

from .basis import Basis, ResultFacts
from .outcome import Outcome, add_usd
from .params import Params, median_of


def capped_size(result: ResultFacts, caps: Mapping[str, int]) -> int:
    cap = caps.get(result.name)
    return result.tokens if cap is None else min(result.tokens, cap)


def cap_results(basis: Basis, params: Params) -> Outcome:
    outcome = Outcome(
        "cap-results",
        "Cap tool results",
        parameters={
            "caps": dict(sorted(params.caps.items())),
            "oversized_threshold": basis.oversized_threshold,
        },
    )
    if not basis.results:
        outcome.note("no tool result was carried by a request")
    total_usd: float | None = 0.0
    by_tool: dict[str, list[ResultFacts]] = {}
    for result in basis.results:  # one pass, not one a tool
        by_tool.setdefault(result.name, []).append(result)
    for name in sorted(by_tool):
        runs = by_tool[name]
        cap = params.caps.get(name)
        before = sum(r.tokens * r.carrying for r in runs)
        saved_tokens = 0
        saved_usd: float | None = 0.0
        capped = []
        for result in runs:
            cut = result.tokens - capped_size(result, params.caps)
            if cut <= 0:
                continue
            capped.append(result.id)
            saved_tokens += cut * result.carrying
            loop = basis.loops[result.loop]
            rates = loop.usd_per_token(result.start, result.start + result.carrying)
            saved_usd = add_usd(saved_usd, None if rates is None else cut * rates)
            outcome.touch(result.loop, result.start, result.start + result.carrying)
            outcome.exact = outcome.exact and result.exact
        capped_ids = set(capped)
        outcome.items.append(
            {
                "tool": name,
                "cap": cap,
                "median_result": median_of([r.tokens for r in runs]),
                "largest_result": max(r.tokens for r in runs),
                "results": len(runs),
                "results_capped": capped,
                "tokens_before": before,
                "tokens_after": before - saved_tokens,
                "tokens_saved": saved_tokens,
                "usd_saved": None if saved_usd is None else round(saved_usd, 6),
                "exact": all(r.exact for r in runs if r.id in capped_ids),
            }
        )
        outcome.tokens_saved = (outcome.tokens_saved or 0) + saved_tokens
        total_usd = add_usd(total_usd, saved_usd)
    outcome.items.sort(key=lambda item: (-item["tokens_saved"], -item["tokens_before"]))
    outcome.usd_saved = total_usd
    if not outcome.exact:
        outcome.note("≈ some result sizes are tiktoken estimates (shared or unreported usage)")
    if outcome.tokens_saved == 0:
        outcome.status = "none"
        if basis.results and not params.caps:
            outcome.note(
                f"no result is above the {basis.oversized_threshold:,}-token oversized"
                " threshold: set a cap to see what it would save"
            )
        elif basis.results:
            outcome.note("no result is larger than its tool's cap")
    return outcome
