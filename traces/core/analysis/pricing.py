"""Prices per million tokens and the cost of a call: overrides, then `genai-prices`.

A price set by the user (a price file, or a price set in the UI and stored per project)
wins; otherwise the `genai-prices` library prices the call on the date it was made
(`library_prices`). Unknown models get no price: their cost is "unknown", never a guess.
"""

from __future__ import annotations

import re
from functools import lru_cache

import orjson

from traces.core.records import dataclass, field

from ..model import Usage
from .library_prices import SOURCE, LibraryPrices, described
from .price import Price

__all__ = ["Price", "PriceTable", "call_cost", "library_table", "load_overrides", "refused_by_api"]

_BEDROCK_REGIONS = frozenset({"us", "eu", "apac", "jp", "global", "us-gov", "ca", "au"})
_BEDROCK_VENDORS = frozenset(
    {"anthropic", "moonshot", "moonshotai", "meta", "mistral", "amazon", "cohere", "ai21"}
    | {"deepseek", "qwen", "openai", "writer", "minimax", "zai"}
)
_DATE_SUFFIX = re.compile(r"(-\d{8}|-\d{4}-\d{2}-\d{2}|@\d{8}|-v\d+(:\d+)?|-latest)$")


@dataclass(frozen=True, slots=True)
class PriceTable:
    """Overrides (by model name) over the library; `overrides_source` says where they came
    from (a file, the project's prices) for the report's price note. `taken` and `source`
    empty: the library describes itself, and only if this table asked it (`described`)."""

    overrides: dict[str, Price]
    taken: str = ""
    source: str = ""
    library: LibraryPrices | None = field(default_factory=LibraryPrices)
    overrides_source: str = ""
    _given: dict[str, Price] = field(default_factory=dict)
    _asked_library: set[str] = field(default_factory=set)
    """The first name this table asked the library about (one at most: it only tells
    whether the library was needed, and a table may live as long as the process)."""

    @property
    def prices(self) -> dict[str, Price]:
        """Every price this table has given out or holds as an override, by the name it
        was priced as (the latest one given for a name whose price changed over time)."""
        return {**self._given, **self.overrides}

    def lookup(self, model: str | None, at: float | None = None) -> tuple[str, Price] | None:
        """The price of a model at `at` (epoch seconds; None: today), matching dated and
        provider-prefixed names to the family.

        `claude-sonnet-4-20250514`, `anthropic/claude-sonnet-4` and Bedrock's
        `anthropic.claude-sonnet-4-20250514-v1:0` all price as `claude-sonnet-4` when
        that is an override; the library has its own names (`claude-sonnet-4-0`).
        """
        if not model:
            return None
        candidates = _candidates(model)
        for candidate in candidates:
            if candidate in self.overrides:
                return candidate, self.overrides[candidate]
        if self.library is None:
            return None
        if not self._asked_library:
            self._asked_library.add(candidates[0])
        found = self.library.lookup(candidates, at)
        if found is not None:
            self._given[found[0]] = found[1]
        return found

    def described(self) -> tuple[str, str]:
        """(taken, source) for the report's price note. When the overrides priced every
        call, the library was never needed and is not imported just to name itself."""
        overridden = self.overrides_source or "the prices set"
        if self.overrides and not self._asked_library and not self.taken:
            return overridden, f"every model overridden by {overridden} ({SOURCE} not needed)"
        taken, source = (self.taken, self.source) if self.taken else described()
        if self.overrides_source:
            source = f"{source}; overridden by {self.overrides_source}"
        return taken, source

    def for_one_trace(self) -> PriceTable:
        """This table with nothing given out yet (the library's lookups still shared)."""
        return PriceTable(
            self.overrides, self.taken, self.source, self.library, self.overrides_source
        )

    def merged(self, overrides: dict[str, Price], source: str = "") -> PriceTable:
        """This table with `overrides` winning over it (and over earlier overrides)."""
        named = "; ".join(s for s in (self.overrides_source, source) if s)
        return PriceTable(
            {**self.overrides, **overrides}, self.taken, self.source, self.library, named
        )


@lru_cache(maxsize=1024)
def _candidates(model: str) -> tuple[str, ...]:
    """The names a model may be priced under, most specific first (remembered: every
    call of a trace names one of a few models)."""
    name = model.strip().lower()
    names = [name]
    for separator in ("/", ":"):
        if separator in name and not name.endswith(":0"):
            names.append(name.rsplit(separator, 1)[-1])
    tail = name.rsplit("/", 1)[-1]
    # Bedrock: an optional region (`us.`), then the vendor (`anthropic.`, `moonshot.`).
    parts = tail.split(".")
    if len(parts) > 1 and parts[0] in _BEDROCK_REGIONS:
        parts = parts[1:]
    if len(parts) > 1 and parts[0] in _BEDROCK_VENDORS:
        parts = parts[1:]
    names.append(".".join(parts))
    out: list[str] = []
    for item in names:
        stripped = item
        while True:
            shorter = _DATE_SUFFIX.sub("", stripped)
            if shorter == stripped:
                break
            stripped = shorter
        out.extend([item, stripped])
    return tuple(dict.fromkeys(out))


def library_table() -> PriceTable:
    """The `genai-prices` prices with no override (a new table: it remembers the prices
    it gave out, so each analysis starts its own). Building it imports nothing: the
    library loads on the first lookup that reaches it."""
    return PriceTable({})


def load_overrides(data: bytes) -> dict[str, Price]:
    """A user price file: `{"model": {"input": 3.0, "output": 15.0, ...}}`."""
    raw = orjson.loads(data)
    if not isinstance(raw, dict):
        raise ValueError("a price file is a JSON object of model -> prices")
    models = raw.get("models", raw) if isinstance(raw.get("models"), dict) else raw
    table: dict[str, Price] = {}
    for name, entry in models.items():
        if not isinstance(entry, dict) or "input" not in entry or "output" not in entry:
            raise ValueError(f"price for {name!r} needs at least 'input' and 'output'")
        table[name.lower()] = Price.from_json(entry)
    return table


def call_cost(usage: Usage, price: Price) -> float:
    """What a call cost, with cache writes at their TTL's price when the split is known."""
    price = price.for_input(usage.total_input_tokens)
    write_1h = usage.cache_write_1h_tokens or 0
    write_5m = usage.cache_write_tokens - write_1h
    one_hour_price = price.cache_write_1h if price.cache_write_1h is not None else price.cache_write
    return (
        usage.input_tokens * price.input
        + write_5m * price.cache_write
        + write_1h * one_hour_price
        + usage.cache_read_tokens * price.cache_read
        + usage.output_tokens * price.output
    ) / 1_000_000


def refused_by_api(http_status: int | None) -> bool:
    """The API refused the request (HTTP 4xx: bad request, auth, rate limit, too large).

    Providers bill the tokens a model processed; a refused request is turned away before
    the model reads it, so it costs nothing, whatever its input would have cost. A 5xx or a
    stream cut short is not this: the model may have run, and the call keeps its price.
    """
    return http_status is not None and 400 <= http_status < 500
