"""Per-call series with the chosen fixes applied, for the growth and cost charts.

The token fixes (caps, clearing, dropping unused definitions, batching) are combined
call by call: a result both capped and cleared is carried at the smaller of the two
sizes. A batched-away call has no simulated input (it is not sent) and keeps only its
output's cost (its tool calls are written by the call before). The cached series is the
prompt-cache scenario's per-call cost at the chosen lifetime.
"""

from __future__ import annotations

from typing import Any

from traces.core.records import dataclass

from .basis import Basis
from .cap_results import capped_size
from .clear_results import cleared_span
from .params import Params
from .prompt_cache import simulate


@dataclass(frozen=True, slots=True)
class Series:
    calls: list[int]
    input_actual: list[int]
    input_simulated: list[int | None]
    cost_actual: list[float | None]
    cost_simulated: list[float | None]
    cost_cached: list[float | None]

    def as_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "input_actual": self.input_actual,
            "input_simulated": self.input_simulated,
            "cost_actual": self.cost_actual,
            "cost_simulated": self.cost_simulated,
            "cost_cached": self.cost_cached,
        }


def token_savings(basis: Basis, params: Params) -> dict[int, int]:
    """Input tokens each call would not have carried with the caps, clearing and unused
    definitions dropped (batching is applied separately: it removes whole calls)."""
    saved: dict[int, int] = {}
    for loop in basis.loops.values():
        diff = [0] * (len(loop.calls) + 1)
        for result in (r for r in basis.results if r.loop == loop.index):
            stop = min(result.start + result.carrying, len(loop.calls))
            capped = result.tokens - capped_size(result, params.caps)
            diff[result.start] += capped
            diff[stop] -= capped
            first, last = cleared_span(result, params.clear_after, basis.placeholder_tokens)
            last = min(last, len(loop.calls))
            extra = max(capped, result.tokens - basis.placeholder_tokens) - capped
            if last > first and extra:
                diff[first] += extra
                diff[last] -= extra
        running = 0
        for position, call in enumerate(loop.calls):
            running += diff[position]
            if running:
                saved[call.index] = running
    if params.drop_unused_tools:
        for tool in basis.unused_tools:
            for index in tool.call_indexes():
                if index in basis.calls:
                    saved[index] = saved.get(index, 0) + tool.tokens
    return saved


def build_series(basis: Basis, params: Params, loop: int | None = None) -> Series:
    saved = token_savings(basis, params)
    removed = {p.call for p in basis.serial_pairs} if params.batch_serial_calls else set()
    cached, _, unknown = simulate(basis, params.cache_lifetime)
    chosen = [basis.loops[loop]] if loop in basis.loops else list(basis.loops.values())
    calls = sorted((c for facts in chosen for c in facts.calls), key=lambda c: c.index)
    out = Series([], [], [], [], [], [])
    running = {"actual": 0.0, "simulated": 0.0, "cached": 0.0}
    known = {"actual": True, "simulated": True, "cached": not unknown}
    for call in calls:
        cut = min(saved.get(call.index, 0), call.input_tokens)
        rate = call.input_usd_per_token
        if call.index in removed:
            simulated_input = None
            simulated_cost = (
                None if call.price is None else call.output_tokens * call.price.output / 1_000_000
            )
        else:
            simulated_input = call.input_tokens - cut
            simulated_cost = (
                None if call.cost_usd is None or rate is None else call.cost_usd - cut * rate
            )
        out.calls.append(call.index)
        out.input_actual.append(call.input_tokens)
        out.input_simulated.append(simulated_input)
        for key, value, target in (
            ("actual", call.cost_usd, out.cost_actual),
            ("simulated", simulated_cost, out.cost_simulated),
            ("cached", cached.get(call.index), out.cost_cached),
        ):
            if value is None:
                known[key] = False
            running[key] += value or 0.0
            target.append(round(running[key], 6) if known[key] else None)
    return out
