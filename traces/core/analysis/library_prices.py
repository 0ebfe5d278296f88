"""Prices from the `genai-prices` library, at the date of each call.

The library keeps the published prices of thousands of models with their history
(a price that changed on a date is a new entry from that date) and long-context tiers.
Pricing runs per call on loops of 20,000 calls, so the library is asked once per model
name (which model it is) and once per model and day (the prices that day); the cost
itself is computed here in floats from those prices, the way the library defines them
(`tests/core/test_library_prices.py` checks both agree with `calc_price`).

The library is imported on first need, not with this module: importing it costs 0.6-1.8 s
(pydantic models, its httpx updater, importlib.metadata), more than reporting a few hundred
calls, and a trace whose models are all priced by overrides never asks it
(`tests/core/test_lazy_loads.py`, `bench/lazy_prices.py`). What it answered is kept on
disk (`price_memo`): a later process prices the same models from there, without it.
"""

from __future__ import annotations

import time
from datetime import UTC, date, datetime
from functools import cache
from typing import TYPE_CHECKING

from traces.core.records import dataclass, field

from .price import Price
from .price_memo import Known, Schedule, memo

if TYPE_CHECKING:
    from decimal import Decimal

    from genai_prices import types as gp

SOURCE = "genai-prices"


@dataclass(slots=True)
class LibraryPrices:
    """The library's prices, remembered per model name and per model and day."""

    _models: dict[str, tuple[str, Schedule | gp.ModelInfo, int] | None] = field(
        default_factory=dict
    )
    """Per name: the library's model id, its prices (a `Schedule` when they change by date
    alone, else the library's model) and how long one price holds, in seconds."""
    _prices: dict[tuple[str, int], Price] = field(default_factory=dict)

    def lookup(self, names: tuple[str, ...], at: float | None) -> tuple[str, Price] | None:
        """The first of `names` the library knows, priced on the day of `at` (epoch
        seconds; None: today). The name returned is the library's model id."""
        found = self._model(names)
        if found is None:
            return None
        model_id, prices, step = found
        moment = time.time() if at is None else at
        key = (model_id, int(moment // step))
        price = self._prices.get(key)
        if price is None:
            if len(self._prices) >= MAX_REMEMBERED:
                self._prices.clear()
            if isinstance(prices, Schedule):
                price = prices.on_day(key[1])
            else:
                price = _price(prices.get_prices(datetime.fromtimestamp(moment, tz=UTC)))
            self._prices[key] = price
        return model_id, price

    def _model(self, names: tuple[str, ...]) -> tuple[str, Schedule | gp.ModelInfo, int] | None:
        key = names[0] if names else ""
        if key in self._models:
            return self._models[key]
        found = _remembered(names)
        if found is _ASK:
            found = _ask_library(names)
        if len(self._models) >= MAX_REMEMBERED:  # a process lives long; names are input
            self._models.clear()
        self._models[key] = found
        return found


_ASK = ("", Schedule(()), 0)
"""The memo has no answer for these names: the library is asked."""


def _remembered(names: tuple[str, ...]) -> tuple[str, Schedule | gp.ModelInfo, int] | None:
    """The memo's answer for `names`, or `_ASK`."""
    remembered, key = memo(), "\x1f".join(names)
    if not remembered.knows(key):
        return _ASK
    try:
        known = remembered.answer(key)
    except LookupError:
        return _ASK
    return None if known is None else (known[0], known[1], DAY)


def _ask_library(names: tuple[str, ...]) -> tuple[str, Schedule | gp.ModelInfo, int] | None:
    """The first of `names` the library knows (imported here), told to the memo when its
    prices change by date alone (an off-peak model's are looked up each time)."""
    from genai_prices import data_snapshot

    snapshot = data_snapshot.get_snapshot()
    found: tuple[str, Schedule | gp.ModelInfo, int] | None = None
    known: Known = None
    for name in names:
        try:
            provider, info = snapshot.find_provider_model(name, None, None, None)
        except LookupError:
            continue
        plain = provider.id in _PLAIN_PROVIDERS
        model_id = info.id if plain else f"{provider.id}/{info.id}"
        schedule = schedule_of(info)
        if schedule is None:
            return model_id, info, _step(info)
        found, known = (model_id, schedule, DAY), (model_id, schedule)
        break
    memo().remember("\x1f".join(names), known)
    return found


_EPOCH = date(1970, 1, 1)


def schedule_of(info: gp.ModelInfo) -> Schedule | None:
    """The model's prices as a `Schedule` when they change by start date alone; None when
    some other condition (off-peak hours) picks them."""
    from genai_prices import types as gp

    if isinstance(info.prices, gp.ModelPrice):
        return Schedule(((None, _price(info.prices)),))
    entries: list[tuple[int | None, Price]] = []
    for conditional in info.prices:
        constraint = conditional.constraint
        if constraint is None:
            entries.append((None, _price(conditional.prices)))
        elif isinstance(constraint, gp.StartDateConstraint):
            entries.append(((constraint.start_date - _EPOCH).days, _price(conditional.prices)))
        else:
            return None
    return Schedule(tuple(entries)) if entries else None


_PLAIN_PROVIDERS = frozenset({"anthropic", "openai", "google"})
"""Providers whose models are named without a provider prefix (the names users know)."""
DAY = 86_400
MAX_REMEMBERED = 20_000
"""Model names and (model, day) prices kept at most: trace text names models, so a long
process must not keep every name it ever read."""


def _step(info: gp.ModelInfo) -> int:
    """How long one price holds, in seconds: prices change by day (a UTC start date); a
    few models also by time of day (off-peak hours): those are remembered per minute."""
    from genai_prices import types as gp

    if isinstance(info.prices, list) and any(
        isinstance(p.constraint, gp.TimeOfDateConstraint) for p in info.prices
    ):
        return 60
    return DAY


def _price(model_price: gp.ModelPrice) -> Price:
    """The library's text-token prices as a `Price`: a missing cache price is the input
    price (as the library bills it), and each long-context tier a `Price` of its own."""
    from genai_prices import types as gp

    keys = (
        "input_mtok",
        "output_mtok",
        "cache_write_mtok",
        "cache_read_mtok",
        "cache_write_1h_mtok",
    )
    raw = {key: getattr(model_price, key, None) for key in keys}
    starts = sorted(
        {
            tier.start
            for value in raw.values()
            if isinstance(value, gp.TieredPrices)
            for tier in value.tiers
        }
    )

    def at_tier(start: int | None) -> Price:
        values = {key: _tier_value(value, start) for key, value in raw.items()}
        input_price = values["input_mtok"] or 0.0
        write = values["cache_write_mtok"]
        read = values["cache_read_mtok"]
        return Price(
            input=input_price,
            output=values["output_mtok"] or 0.0,
            cache_write=input_price if write is None else write,
            cache_read=input_price if read is None else read,
            cache_write_1h=values["cache_write_1h_mtok"],
        )

    base = at_tier(None)
    if not starts:
        return base
    tiers = tuple((start, at_tier(start)) for start in starts)
    return Price(
        base.input, base.output, base.cache_write, base.cache_read, base.cache_write_1h, tiers
    )


def _tier_value(value: Decimal | gp.TieredPrices | None, start: int | None) -> float | None:
    if value is None:
        return None
    from decimal import Decimal  # the library's, loaded with it (not at start-up)

    if isinstance(value, Decimal):
        return float(value)
    chosen = value.base
    for tier in value.tiers:
        if start is not None and tier.start <= start:
            chosen = tier.price
    return float(chosen)


@cache
def described() -> tuple[str, str]:
    """(taken, source) for reports: the library's version and its newest price date
    (kept in the memo, as the library's prices are)."""
    remembered = memo().described()
    if remembered is not None:
        return remembered
    from importlib.metadata import version

    from genai_prices import data_snapshot
    from genai_prices import types as gp

    newest = date.min
    for provider in data_snapshot.get_snapshot().providers:
        for model in provider.models:
            for conditional in model.prices if isinstance(model.prices, list) else ():
                if isinstance(conditional.constraint, gp.StartDateConstraint):
                    newest = max(newest, conditional.constraint.start_date)
    name = f"{SOURCE} {version('genai-prices')}"
    taken = f"{name}, price history to {newest.isoformat()}"
    source = f"{name} (offline data with price history), each call priced on its own date"
    memo().remember_described(taken, source)
    return taken, source
