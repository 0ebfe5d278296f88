"""A trace's usage summary rows, from its report: what the usage page and `usage` command
add up across sessions without reading a single report again.

Three kinds of row, written with the trace (traces.storage.usage):

- a slot per (UTC hour, model): calls, tokens per kind and the dollars split two ways,
  by kind (uncached input, cache reads, cache writes, output) and, for the input, by
  what it carried (the accounting's buckets: prefix, tool results re-sent, replayed
  output, other). A call belongs to the hour of its own timestamp (as ccusage buckets
  each message by its date); the hour, not the day, so a reader folds hours into the
  days of any time zone (`usage_periods`). A call with no timestamp takes the trace's
  first known one, else `fallback_at` (when the trace was stored).
- a finding row per (rule, hour): how many findings, and the dollars they point at (a
  finding on a tool result: what re-sending that result cost; on a call: the call's cost).
- a saving row per what-if lever: the dollars and tokens the fix would have saved.

The parts of a call's cost are priced with the model's prices from the report
(`what_if.inputs.prices`) and then scaled so they add up to the call's own `cost_usd`,
whatever the accounting priced it with (tiers, prices at the call's time).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from traces.core.records import dataclass, field

from ..analysis.whatif.savings import candidates

HOUR = 3600
KINDS = ("uncached_input", "cache_read", "cache_write", "output")
"""Dollars by kind of token: they add up to the cost."""
BUCKETS = ("prefix", "tool_results", "replayed_output", "other")
"""The input's dollars by what it carried (the accounting's buckets)."""
_PRICE_OF_KIND = {"uncached_input": "input", "cache_read": "cache_read",
                  "cache_write": "cache_write", "output": "output"}  # fmt: skip


@dataclass(slots=True)
class Slot:
    """One (hour, model) of a trace: calls, tokens per kind, dollars per kind and bucket."""

    hour: int
    """Start of the UTC hour, in epoch seconds."""
    model: str
    calls: int = 0
    priced_calls: int = 0
    input_tokens: int = 0
    """Uncached input (the Anthropic convention, as the report's calls)."""
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0
    kinds_usd: dict[str, float] = field(default_factory=lambda: dict.fromkeys(KINDS, 0.0))
    buckets_usd: dict[str, float] = field(default_factory=lambda: dict.fromkeys(BUCKETS, 0.0))


@dataclass(slots=True)
class FindingCost:
    rule: str
    hour: int
    count: int = 0
    cost_usd: float = 0.0


@dataclass(frozen=True, slots=True)
class Saving:
    lever: str
    """The fix in words every trace shares ("cap Read at 800 tokens")."""
    scenario: str
    hour: int
    usd_saved: float | None
    tokens_saved: int


@dataclass(frozen=True, slots=True)
class UsageRows:
    slots: tuple[Slot, ...]
    findings: tuple[FindingCost, ...]
    savings: tuple[Saving, ...]


def hour_of(at: float) -> int:
    return int(at // HOUR) * HOUR


def usage_rows(report: Mapping[str, Any], *, fallback_at: float) -> UsageRows:
    """The rows of one report (an empty report gives none)."""
    calls: Sequence[Mapping[str, Any]] = report.get("calls") or []
    known = [c["started_at"] for c in calls if c.get("started_at") is not None]
    default_at = min(known) if known else fallback_at
    prices = ((report.get("what_if") or {}).get("inputs") or {}).get("prices") or {}
    slots: dict[tuple[int, str], Slot] = {}
    call_hour: dict[int, int] = {}
    call_cost: dict[int, float] = {}
    input_usd_per_token: dict[int, float] = {}
    for call in calls:
        at = call.get("started_at")
        hour = hour_of(default_at if at is None else at)
        call_hour[call["index"]] = hour
        model = (call.get("model") or "")[:200]
        slot = slots.get((hour, model))
        if slot is None:
            slot = slots[(hour, model)] = Slot(hour=hour, model=model)
        tokens = {
            "uncached_input": call.get("input_tokens") or 0,
            "cache_read": call.get("cache_read_tokens") or 0,
            "cache_write": call.get("cache_write_tokens") or 0,
            "output": call.get("output_tokens") or 0,
        }
        slot.calls += 1
        slot.input_tokens += tokens["uncached_input"]
        slot.cache_read_tokens += tokens["cache_read"]
        slot.cache_write_tokens += tokens["cache_write"]
        slot.output_tokens += tokens["output"]
        cost = call.get("cost_usd")
        if cost is None:
            continue
        slot.priced_calls += 1
        slot.cost_usd += cost
        call_cost[call["index"]] = cost
        kinds = _kinds_usd(tokens, prices.get(call.get("priced_as") or ""), cost)
        for kind, usd in kinds.items():
            slot.kinds_usd[kind] += usd
        input_usd = cost - kinds["output"]
        buckets = call.get("buckets") or {}
        carried = sum(buckets.get(name, 0) for name in BUCKETS)
        input_tokens = tokens["uncached_input"] + tokens["cache_read"] + tokens["cache_write"]
        if input_tokens:
            input_usd_per_token[call["index"]] = input_usd / input_tokens
        for name in BUCKETS:
            share = buckets.get(name, 0) / carried if carried else (name == "other")
            slot.buckets_usd[name] += input_usd * share
    return UsageRows(
        tuple(slots.values()),
        _finding_costs(report, call_hour, call_cost, input_usd_per_token, hour_of(default_at)),
        _savings(report, hour_of(default_at)),
    )


def _kinds_usd(
    tokens: Mapping[str, int], price: Mapping[str, float | None] | None, cost: float
) -> dict[str, float]:
    """The call's cost split by kind of token, in proportion to each kind's list price;
    without a price, in proportion to the tokens."""
    weights = {
        kind: tokens[kind] * ((price.get(_PRICE_OF_KIND[kind]) or 0.0) if price else 1.0)
        for kind in KINDS
    }
    total = sum(weights.values())
    if not total:
        return {kind: (cost if kind == "uncached_input" else 0.0) for kind in KINDS}
    return {kind: cost * weight / total for kind, weight in weights.items()}


def _finding_costs(
    report: Mapping[str, Any],
    call_hour: Mapping[int, int],
    call_cost: Mapping[int, float],
    input_usd_per_token: Mapping[int, float],
    default_hour: int,
) -> tuple[FindingCost, ...]:
    """Per (rule, hour): the findings and the dollars they point at. A finding on a tool
    result costs what re-sending that result cost (its re-sent tokens at the input price
    of the request that first carried it); on a call, the call's cost, each call counted
    once per rule."""
    runs = {r["id"]: r for r in report.get("tool_runs") or [] if r.get("id")}
    rows: dict[tuple[str, int], FindingCost] = {}
    seen_calls: set[tuple[str, int]] = set()
    for finding in report.get("findings") or []:
        rule = str(finding.get("rule") or "")[:60]
        call = finding.get("call")
        run = runs.get(finding.get("tool_call_id") or "")
        hour = call_hour.get(call, default_hour) if isinstance(call, int) else default_hour
        row = rows.get((rule, hour))
        if row is None:
            row = rows[(rule, hour)] = FindingCost(rule=rule, hour=hour)
        row.count += 1
        if run is not None and run.get("resend_tokens"):
            carrier = run.get("result_call")
            price = input_usd_per_token.get(carrier) if isinstance(carrier, int) else None
            if price is not None:
                row.cost_usd += run["resend_tokens"] * price
        elif isinstance(call, int) and (rule, call) not in seen_calls:
            seen_calls.add((rule, call))
            row.cost_usd += call_cost.get(call, 0.0)
    return tuple(rows.values())


_LEVERS = {
    "unused-tools": "drop the tool definitions never called",
    "batch-serial-calls": "ask serial independent calls as one parallel batch",
}


def _savings(report: Mapping[str, Any], hour: int) -> tuple[Saving, ...]:
    """Every single fix the what-if found with a saving, named the same in every trace."""
    scenarios = (report.get("what_if") or {}).get("scenarios") or []
    found: dict[str, Saving] = {}
    for candidate in candidates(scenarios):
        scenario = candidate["scenario"]
        lever = _LEVERS.get(scenario, candidate["instruction"])[:300]
        usd = candidate["usd_saved"]
        previous = found.get(lever)
        if previous is not None:  # the same words twice: add them up
            usd = None if usd is None and previous.usd_saved is None else (
                (usd or 0.0) + (previous.usd_saved or 0.0)
            )  # fmt: skip
            tokens = (candidate["tokens_saved"] or 0) + previous.tokens_saved
        else:
            tokens = candidate["tokens_saved"] or 0
        found[lever] = Saving(lever, scenario, hour, usd, tokens)
    return tuple(found.values())
