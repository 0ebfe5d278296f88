"""Where the tokens and dollars went: every call's input split into buckets, per tool
result re-send totals, and cost (actual, uncached, with the stable prefix cached).

Buckets (the seeds' vocabulary): `prefix` (system prompt + tool definitions + the first
user message, re-sent every call), `tool_results` (tool results re-sent), `replayed_output`
(the model's own earlier messages echoed back) and `other` (later user turns, the rest).

Exact when usage is reported: what call k appended is input(k) - input(k-1) - output(k-1),
and the echoed assistant message costs what it cost as output(k-1). This reproduces the
seeds' worked example to the token. Otherwise each unique block is counted with tiktoken
and, where a reported total exists, the estimates are scaled to it (the residual is kept).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from traces.core.records import dataclass, field

from ..model import Block, Call, Message, Trace
from ..report_types import BucketsEntry, CostTotals
from .pricing import Price, PriceTable, call_cost, library_table, refused_by_api
from .tokens import TokenCounter, encoding_name

BUCKETS = ("prefix", "tool_results", "replayed_output", "other")


@dataclass(frozen=True, slots=True)
class Buckets:
    prefix: int = 0
    tool_results: int = 0
    replayed_output: int = 0
    other: int = 0

    @property
    def total(self) -> int:
        return self.prefix + self.tool_results + self.replayed_output + self.other

    def plus(self, **amounts: int) -> Buckets:
        # Spelled out: called once a call, a dict built from BUCKETS costs more than the sum.
        get = amounts.get
        return Buckets(
            self.prefix + get("prefix", 0),
            self.tool_results + get("tool_results", 0),
            self.replayed_output + get("replayed_output", 0),
            self.other + get("other", 0),
        )

    def as_dict(self) -> BucketsEntry:
        return {
            "prefix": self.prefix,
            "tool_results": self.tool_results,
            "replayed_output": self.replayed_output,
            "other": self.other,
        }


@dataclass(frozen=True, slots=True)
class CallAccount:
    index: int
    buckets: Buckets
    input_tokens: int
    """All input of the call: uncached + cache reads + cache writes (or the estimate)."""
    output_tokens: int
    tokens_exact: bool
    residual: int
    """Reported input minus the raw tiktoken estimate, for calls split by estimates."""
    model_priced_as: str | None
    cost_usd: float | None
    cost_uncached_usd: float | None
    cost_prefix_cached_usd: float | None


@dataclass(frozen=True, slots=True)
class ResultAccount:
    position: int
    """Index of the tool run in `Trace.tool_runs`."""
    result_tokens: int
    requests_carrying: int
    resend_tokens: int
    tokens_exact: bool


@dataclass(frozen=True, slots=True)
class Accounting:
    calls: tuple[CallAccount, ...]
    results: dict[int, ResultAccount]
    encoding: str
    prices_taken: str
    prices_source: str
    estimated_calls: int
    unpriced_models: tuple[str, ...]
    table: PriceTable | None = None
    """The prices used, for what-if scenarios and rules that price a part of a call."""

    @property
    def buckets(self) -> Buckets:
        total = Buckets()
        for account in self.calls:
            total = total.plus(**account.buckets.as_dict())
        return total

    def cost_totals(self) -> CostTotals:
        def total(name: str) -> float | None:
            values = [getattr(c, name) for c in self.calls]
            known = [v for v in values if v is not None]
            return round(sum(known), 6) if known else None

        return {
            "actual": total("cost_usd"),
            "uncached": total("cost_uncached_usd"),
            "prefix_cached": total("cost_prefix_cached_usd"),
        }


class _Entry:
    """One message of a loop's running transcript, with its bucket and a lazy estimate.

    Estimates are only computed when a split needs them: an exactly reported loop whose
    calls each append one kind of content never runs the tokenizer.
    """

    __slots__ = (
        "_counter",
        "_estimate",
        "_result_blocks",
        "_results",
        "bucket",
        "message",
        "result_ids",
    )

    def __init__(
        self,
        bucket: str,
        message: Message,
        counter: TokenCounter,
        result_blocks: tuple[Block, ...] = (),
    ) -> None:
        self.bucket = bucket
        self.message = message
        self._counter = counter
        self._estimate: int | None = None
        self._result_blocks = result_blocks
        self._results: list[tuple[str, int]] | None = None
        self.result_ids = tuple([b.tool_id or "" for b in result_blocks]) if result_blocks else ()
        """Tool ids of the results this message carries (read several times a call)."""

    @property
    def estimate(self) -> int:
        if self._estimate is None:
            self._estimate = self._counter.message(self.message)
        return self._estimate

    @property
    def results(self) -> list[tuple[str, int]]:
        """(tool id, estimated tokens) of the tool results this message carries."""
        if self._results is None:
            self._results = [(b.tool_id or "", self._counter.block(b)) for b in self._result_blocks]
        return self._results


@dataclass(slots=True)
class _LoopWalk:
    transcript: list[_Entry] = field(default_factory=list)
    buckets: Buckets | None = None
    previous: Call | None = None
    previous_total: int | None = None
    """`_total_input` of `previous`."""
    active_results: list[tuple[int, int]] = field(default_factory=list)  # (run, message pos)
    system_in_messages: bool = False
    calls_seen: int = 0
    counted: int = 0
    """How many leading transcript entries `sums` holds: estimates are added as the
    transcript grows, so estimating every call of a long loop stays linear."""
    sums: dict[str, int] = field(default_factory=lambda: dict.fromkeys(BUCKETS, 0))

    def advance(self, prefix_len: int, entries: list[_Entry]) -> None:
        """The transcript of the next request: the kept prefix, then what it appended."""
        if prefix_len < len(self.transcript):
            del self.transcript[prefix_len:]
            if self.counted > prefix_len:
                self.counted, self.sums = 0, dict.fromkeys(BUCKETS, 0)
        self.transcript.extend(entries)

    def estimate(self, fixed: int) -> Buckets:
        for entry in self.transcript[self.counted :]:
            self.sums[entry.bucket] += entry.estimate
        self.counted = len(self.transcript)
        return Buckets(**{**self.sums, "prefix": self.sums["prefix"] + fixed})


def account(trace: Trace, prices: PriceTable | None = None) -> Accounting:
    """Account every call of the trace (pure; deterministic)."""
    table = (prices or library_table()).for_one_trace()
    # A call without a time is priced on the date of the trace's first timed call.
    undated_at = next((c.started_at for c in trace.calls if c.started_at is not None), None)
    counter = TokenCounter()
    runs_by_result = {
        (run.loop, run.id, run.result_call): position
        for position, run in enumerate(trace.tool_runs)
        if run.result_call is not None
    }
    # A result is carried by every request of its loop from the one that first sent it
    # until the history drops it: counted as spans, not per request (linear, not n^2).
    carried_from: dict[int, int] = {}
    carrying: dict[int, int] = {}
    result_tokens: dict[int, tuple[int, bool]] = {}
    walks: dict[int, _LoopWalk] = {}
    accounts: list[CallAccount] = []
    unpriced: set[str] = set()
    for call in trace.calls:
        walk = walks.get(call.loop)
        if walk is None:
            walk = walks[call.loop] = _LoopWalk()
        # Chat formats send the system prompt as a message too: count it there only.
        if not walk.system_in_messages:
            for message in call.appended:
                if message.role in ("system", "developer"):
                    walk.system_in_messages = True
                    break
        system_in_messages = walk.system_in_messages

        def fixed(call: Call = call, system_in_messages: bool = system_in_messages) -> int:
            return _fixed_prefix_estimate(counter, call, system_in_messages)

        entries = _entries(counter, call, first_in_loop=walk.previous is None)
        dropped_from = call.prefix_len if call.history_rewritten else None
        previous_buckets = walk.buckets
        walk.advance(call.prefix_len, entries)
        reported = _total_input(call)
        buckets, exact, residual, appended_shares = _split(
            call, reported, walk, previous_buckets, fixed, entries
        )
        # Usage a format marks approximate (aider's rounded "2.3k sent") is not exact.
        exact = exact and not call.tokens_estimated
        # Tool results appended by this call: tokens (share of the exact delta, or estimate).
        position_base = call.prefix_len
        result_count = 0
        for entry in entries:
            result_count += len(entry.result_ids)
        single = None
        for offset, entry in enumerate(entries) if result_count else ():
            shares = appended_shares.get(id(entry), {})
            for tool_id in entry.result_ids:
                run = runs_by_result.get((call.loop, tool_id, call.index))
                if run is None or run in result_tokens:
                    continue
                tokens = shares[tool_id] if tool_id in shares else dict(entry.results)[tool_id]
                if single is None:
                    single = exact and result_count == 1 and _only_results(entries)
                result_tokens[run] = (tokens, single)
                walk.active_results.append((run, position_base + offset))
                carried_from[run] = walk.calls_seen
        if dropped_from is not None:
            kept = []
            for run, position in walk.active_results:
                if position < dropped_from:
                    kept.append((run, position))
                else:  # dropped by this request: carried up to the one before it
                    carrying[run] = walk.calls_seen - carried_from[run]
            walk.active_results = kept
        walk.calls_seen += 1
        walk.buckets = buckets
        walk.previous = call
        walk.previous_total = reported
        accounts.append(_priced(call, buckets, exact, residual, table, unpriced, undated_at))
    for walk in walks.values():
        for run, _ in walk.active_results:
            carrying[run] = walk.calls_seen - carried_from[run]
    results = {
        run: ResultAccount(
            position=run,
            result_tokens=tokens,
            requests_carrying=carrying.get(run, 0),
            resend_tokens=tokens * carrying.get(run, 0),
            tokens_exact=exact,
        )
        for run, (tokens, exact) in result_tokens.items()
    }
    prices_taken, prices_source = table.described()
    return Accounting(
        calls=tuple(accounts),
        results=results,
        encoding=encoding_name(),
        prices_taken=prices_taken,
        prices_source=prices_source,
        estimated_calls=sum(1 for a in accounts if not a.tokens_exact),
        unpriced_models=tuple(sorted(unpriced)),
        table=table,
    )


def _only_results(entries: list[_Entry]) -> bool:
    return all(e.bucket in ("tool_results", "replayed_output") for e in entries)


def _fixed_prefix_estimate(counter: TokenCounter, call: Call, system_in_messages: bool) -> int:
    system = 0 if system_in_messages else counter.json(call.system)
    return system + (counter.json(list(call.tools)) if call.tools else 0)


def _entries(counter: TokenCounter, call: Call, first_in_loop: bool) -> list[_Entry]:
    """Bucket each message the request appended (estimates are made when asked for)."""
    entries = []
    first = first_in_loop and call.prefix_len == 0
    for message in call.appended:
        entries.append(_entry(counter, message, is_first=first))
        first = False
    return entries


def _entry(counter: TokenCounter, message: Message, is_first: bool) -> _Entry:
    role = message.role
    if role == "assistant":
        return _Entry("replayed_output", message, counter)
    if role in ("system", "developer") or (is_first and role == "user"):
        return _Entry("prefix", message, counter)
    results = message.tool_results
    if results:
        return _Entry("tool_results", message, counter, results)
    return _Entry("other", message, counter)


def _split(
    call: Call,
    reported: int | None,
    walk: _LoopWalk,
    previous_buckets: Buckets | None,
    fixed: Callable[[], int],
    entries: list[_Entry],
) -> tuple[Buckets, bool, int, dict[int, dict[str, int]]]:
    """(buckets, exact, residual, exact token shares of appended tool results);
    `reported` is the call's `_total_input`."""
    previous = walk.previous
    previous_total = walk.previous_total
    if (
        reported is not None
        and previous is not None
        and previous_buckets is not None
        and call.extends_previous
        and previous_total is not None
        and previous.usage is not None
    ):
        rest = [e for e in entries if e.bucket != "replayed_output"]
        replayed = previous.usage.output_tokens if len(rest) < len(entries) else 0
        delta = reported - previous_total - replayed
        if delta >= 0:
            shares, amounts = _distribute(delta, rest)
            amounts["replayed_output"] = amounts.get("replayed_output", 0) + replayed
            return previous_buckets.plus(**amounts), True, 0, shares
    if (
        reported is not None
        and walk.previous is None
        and len(entries) == 1
        and entries[0].bucket == "prefix"
    ):
        # The first request is just the prefix: all of its input is prefix, exactly.
        return Buckets(prefix=reported), True, 0, {}
    # Only estimated calls need the fixed prefix counted (the tokenizer may never load).
    estimate = walk.estimate(fixed())
    if reported is None:
        return estimate, False, 0, {}
    return _scaled(estimate, reported), False, reported - estimate.total, {}


def _distribute(
    delta: int, entries: list[_Entry]
) -> tuple[dict[int, dict[str, int]], dict[str, int]]:
    """Share an exact token delta among appended messages by their estimates."""
    amounts: dict[str, int] = {}
    shares: dict[int, dict[str, int]] = {}
    if not entries:
        return shares, {"other": delta}
    if len(entries) == 1 and len(entries[0].result_ids) <= 1:
        # One message took the whole delta: no estimate is needed to split it.
        entry = entries[0]
        if entry.result_ids:
            shares[id(entry)] = {entry.result_ids[0]: delta}
        return shares, {entry.bucket: delta}
    # A single message takes the whole delta: only its results need estimates.
    weights = [max(e.estimate, 1) for e in entries] if len(entries) > 1 else [1]
    total_weight = sum(weights)
    given = 0
    for index, (entry, weight) in enumerate(zip(entries, weights, strict=True)):
        part = delta - given if index == len(entries) - 1 else round(delta * weight / total_weight)
        given += part
        amounts[entry.bucket] = amounts.get(entry.bucket, 0) + part
        if entry.results:
            result_weights = [max(t, 1) for _, t in entry.results]
            result_total = sum(result_weights)
            # The message wrapper's few tokens are billed with the results it carries.
            shares[id(entry)] = {
                tool_id: round(part * w / result_total)
                for (tool_id, _), w in zip(entry.results, result_weights, strict=True)
            }
    return shares, amounts


def _scaled(estimate: Buckets, reported: int) -> Buckets:
    if estimate.total <= 0:
        return Buckets(other=reported)
    factor = reported / estimate.total
    scaled = {name: round(getattr(estimate, name) * factor) for name in BUCKETS}
    scaled["other"] += reported - sum(scaled.values())
    return Buckets(**scaled)


def _total_input(call: Call) -> int | None:
    if call.usage is None or call.status != "ok":
        return None
    return call.usage.total_input_tokens


def _priced(
    call: Call,
    buckets: Buckets,
    exact: bool,
    residual: int,
    table: PriceTable,
    unpriced: set[str],
    undated_at: float | None = None,
) -> CallAccount:
    at = call.started_at if call.started_at is not None else undated_at
    found = table.lookup(call.model, at)
    if found is None and call.model:
        unpriced.add(call.model)
    name, price = found if found else (None, None)
    usage = call.usage if call.status == "ok" else None
    input_total = usage.total_input_tokens if usage else buckets.total
    output = usage.output_tokens if usage else 0
    if refused_by_api(call.http_status):
        # Refused before the model ran: nothing was billed. An unpriced model stays
        # unknown, so a trace of unpriced calls never totals a made-up $0.
        free = None if price is None else 0.0
        return CallAccount(
            index=call.index,
            buckets=buckets,
            input_tokens=input_total,
            output_tokens=output,
            tokens_exact=exact,
            residual=residual,
            model_priced_as=name,
            cost_usd=free,
            cost_uncached_usd=free,
            cost_prefix_cached_usd=free,
        )
    return CallAccount(
        index=call.index,
        buckets=buckets,
        input_tokens=input_total,
        output_tokens=output,
        tokens_exact=exact,
        residual=residual,
        model_priced_as=name,
        cost_usd=_actual(usage, buckets, price),
        cost_uncached_usd=_uncached(input_total, output, price),
        cost_prefix_cached_usd=_prefix_cached(call, buckets, input_total, output, price),
    )


def _actual(usage: Any, buckets: Buckets, price: Price | None) -> float | None:
    if price is None:
        return None
    if usage is None:
        return _uncached(buckets.total, 0, price)
    return call_cost(usage, price)


def _uncached(input_total: int, output: int, price: Price | None) -> float | None:
    if price is None:
        return None
    return (input_total * price.input + output * price.output) / 1_000_000


def _prefix_cached(
    call: Call, buckets: Buckets, input_total: int, output: int, price: Price | None
) -> float | None:
    """The stable prefix written to the cache on a loop's first call, read after."""
    if price is None:
        return None
    prefix = min(buckets.prefix, input_total)
    first = call.base_call is None
    prefix_price = price.cache_write if first else price.cache_read
    rest = input_total - prefix
    return (prefix * prefix_price + rest * price.input + output * price.output) / 1_000_000
