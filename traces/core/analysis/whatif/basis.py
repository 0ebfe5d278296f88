"""The facts every what-if scenario reads, taken from the stored report (not a `Trace`).

Working from the report lets the web recompute a scenario with other parameters without
re-reading the file: the report keeps each call's tokens, cost and times, each tool
result's size and how many requests carried it, and `what_if.inputs` adds what the
report does not otherwise hold (the prices used, the unused tool definitions).

A result is carried by a contiguous run of its loop's calls (from the request that first
sent it, for `requests_carrying` requests), so spans are kept as (loop, start, stop)
positions and summed with prefix sums: a 2,000-call loop stays linear.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from itertools import accumulate
from typing import Any

from traces.core.records import dataclass, field

from ..pricing import Price, refused_by_api


@dataclass(frozen=True, slots=True)
class CallFacts:
    index: int
    loop: int
    position: int
    """Position of the call in its loop (0-based)."""
    input_tokens: int
    """All input of the call: uncached + cache reads + cache writes (or the estimate)."""
    output_tokens: int
    prefix_tokens: int
    reported: bool
    """The provider reported usage (input totals are exact)."""
    split_exact: bool
    cache_read_tokens: int
    cache_write_tokens: int
    started_at: float | None
    duration_s: float | None
    extends_previous: bool
    cost_usd: float | None
    price: Price | None
    model: str | None
    refused: bool = False
    """The API refused the request (HTTP 4xx): it cost nothing, and would cost nothing in
    any scenario (`pricing.refused_by_api`)."""

    @property
    def input_usd_per_token(self) -> float | None:
        """What one input token cost on this call, on average (cache reads included).

        Exact for a call that used no cache (the input price); a call that read or wrote
        the cache paid several prices, and a removed token is priced at their mean.
        """
        if self.refused:
            return 0.0
        if self.price is None or self.cost_usd is None:
            return None
        if not self.cache_read_tokens and not self.cache_write_tokens:
            return self.price.input / 1_000_000
        if self.input_tokens <= 0:
            return self.price.input / 1_000_000
        input_cost = self.cost_usd - self.output_tokens * self.price.output / 1_000_000
        return max(0.0, input_cost) / self.input_tokens

    @property
    def input_usd(self) -> float | None:
        rate = self.input_usd_per_token
        return None if rate is None else rate * self.input_tokens


@dataclass(frozen=True, slots=True)
class ResultFacts:
    """One tool result that at least one request carried."""

    id: str
    name: str
    loop: int
    call: int | None
    result_call: int
    tokens: int
    exact: bool
    start: int
    """Position in the loop of the first request that carried it."""
    carrying: int
    """How many consecutive requests of the loop carried it."""


@dataclass(frozen=True, slots=True)
class RunFacts:
    """A tool run as timed by the tool log (for concurrency)."""

    id: str
    name: str
    call: int | None
    started_at: float | None
    ended_at: float | None


@dataclass(slots=True)
class LoopFacts:
    index: int
    calls: list[CallFacts] = field(default_factory=list)
    _rate_sums: list[float] = field(default_factory=list)
    _unknown_sums: list[int] = field(default_factory=list)

    def index_rates(self) -> None:
        rates = [c.input_usd_per_token for c in self.calls]
        self._rate_sums = [0.0, *accumulate(r or 0.0 for r in rates)]
        self._unknown_sums = [0, *accumulate(1 if r is None else 0 for r in rates)]

    def usd_per_token(self, start: int, stop: int) -> float | None:
        """Sum of the calls' per-token input prices over [start, stop); None if unpriced."""
        start, stop = max(0, start), min(len(self.calls), stop)
        if stop <= start:
            return 0.0
        if self._unknown_sums[stop] - self._unknown_sums[start]:
            return None
        return self._rate_sums[stop] - self._rate_sums[start]


@dataclass(frozen=True, slots=True)
class SerialPair:
    """A call that one parallel batch with the call before it would have made unneeded."""

    call: int
    previous: int | None
    tool_call_id: str | None


@dataclass(frozen=True, slots=True)
class UnusedTool:
    name: str
    tokens: int
    calls: tuple[tuple[int, int], ...]
    """Inclusive ranges of call indexes whose request carried the definition."""

    def call_indexes(self) -> list[int]:
        return [i for first, last in self.calls for i in range(first, last + 1)]


@dataclass(frozen=True, slots=True)
class Basis:
    calls: dict[int, CallFacts]
    loops: dict[int, LoopFacts]
    results: tuple[ResultFacts, ...]
    runs: tuple[RunFacts, ...]
    batches: tuple[tuple[int, tuple[str, ...]], ...]
    serial_pairs: tuple[SerialPair, ...]
    unused_tools: tuple[UnusedTool, ...]
    placeholder_tokens: int
    oversized_threshold: int
    unpriced_models: tuple[str, ...]

    @property
    def input_total(self) -> int:
        return sum(c.input_tokens for c in self.calls.values())

    @property
    def cost_total(self) -> float | None:
        costs = [c.cost_usd for c in self.calls.values()]
        if not costs or any(c is None for c in costs):
            return None
        return sum(c for c in costs if c is not None)


def basis_from_report(report: Mapping[str, Any]) -> Basis:
    """Everything the scenarios need, from a report (`build_report`'s dict, or stored)."""
    inputs = (report.get("what_if") or {}).get("inputs") or {}
    prices = {name: Price.from_json(raw) for name, raw in (inputs.get("prices") or {}).items()}
    loops: dict[int, LoopFacts] = {}
    calls: dict[int, CallFacts] = {}
    raw_calls = {c["index"]: c for c in report.get("calls") or []}
    for loop in report.get("loops") or []:
        facts = LoopFacts(loop["index"])
        for position, index in enumerate(loop.get("calls") or []):
            raw = raw_calls.get(index)
            if raw is None:
                continue
            call = _call_facts(raw, position, prices)
            facts.calls.append(call)
            calls[index] = call
        facts.index_rates()
        loops[facts.index] = facts
    results = tuple(_results(report.get("tool_runs") or [], calls))
    runs = tuple(
        RunFacts(
            id=str(run.get("id")),
            name=str(run.get("name") or "?"),
            call=run.get("call"),
            started_at=run.get("started_at"),
            ended_at=run.get("ended_at"),
        )
        for run in report.get("tool_runs") or []
    )
    batches = tuple(
        (batch["call"], tuple(batch.get("tool_call_ids") or []))
        for batch in report.get("parallel_batches") or []
    )
    serial = []
    for finding in report.get("findings") or []:
        if finding.get("rule") != "serial-independent-calls" or finding.get("call") not in calls:
            continue
        call = calls[finding["call"]]
        loop = loops[call.loop]
        previous = loop.calls[call.position - 1].index if call.position > 0 else None
        serial.append(SerialPair(call.index, previous, finding.get("tool_call_id")))
    unused = tuple(
        UnusedTool(
            name=str(entry["name"]),
            tokens=int(entry["tokens"]),
            calls=tuple((int(a), int(b)) for a, b in entry.get("calls") or []),
        )
        for entry in inputs.get("unused_tools") or []
    )
    unpriced = (report.get("accounting") or {}).get("unpriced_models") or []
    return Basis(
        calls=calls,
        loops=loops,
        results=results,
        runs=runs,
        batches=batches,
        serial_pairs=tuple(serial),
        unused_tools=unused,
        placeholder_tokens=int(inputs.get("placeholder_tokens") or 0),
        oversized_threshold=int(inputs.get("oversized_threshold") or 800),
        unpriced_models=tuple(unpriced),
    )


def _call_facts(raw: Mapping[str, Any], position: int, prices: Mapping[str, Price]) -> CallFacts:
    buckets = raw.get("buckets") or {}
    reported = raw.get("input_tokens") is not None and raw.get("status") == "ok"
    http_status = raw.get("http_status")
    refused = refused_by_api(http_status if isinstance(http_status, int) else None)
    if reported:
        input_tokens = (
            int(raw.get("input_tokens") or 0)
            + int(raw.get("cache_read_tokens") or 0)
            + int(raw.get("cache_write_tokens") or 0)
        )
    else:
        input_tokens = sum(int(v or 0) for v in buckets.values())
    priced_as = raw.get("priced_as")
    return CallFacts(
        index=raw["index"],
        loop=raw.get("loop", 0),
        position=position,
        input_tokens=input_tokens,
        output_tokens=int(raw.get("output_tokens") or 0) if reported else 0,
        prefix_tokens=min(int(buckets.get("prefix") or 0), input_tokens),
        reported=reported,
        split_exact=bool(raw.get("tokens_exact", False)),
        cache_read_tokens=int(raw.get("cache_read_tokens") or 0) if reported else 0,
        cache_write_tokens=int(raw.get("cache_write_tokens") or 0) if reported else 0,
        started_at=raw.get("started_at"),
        duration_s=raw.get("duration_s"),
        extends_previous=bool(raw.get("extends_previous")),
        cost_usd=raw.get("cost_usd"),
        price=prices.get(priced_as) if priced_as else None,
        model=raw.get("model"),
        refused=refused,
    )


def _results(
    runs: Sequence[Mapping[str, Any]], calls: Mapping[int, CallFacts]
) -> Iterator[ResultFacts]:
    for run in runs:
        result_call = run.get("result_call")
        tokens = run.get("result_tokens")
        carrying = int(run.get("requests_carrying") or 0)
        if not isinstance(result_call, int) or result_call not in calls:
            continue
        if tokens is None or carrying <= 0:
            continue
        first = calls[result_call]
        yield ResultFacts(
            id=str(run.get("id")),
            name=str(run.get("name") or "?"),
            loop=first.loop,
            call=run.get("call"),
            result_call=result_call,
            tokens=int(tokens),
            exact=bool(run.get("result_tokens_exact", False)),
            start=first.position,
            carrying=carrying,
        )
