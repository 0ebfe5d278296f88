"""A model's prices per million tokens (with its long-context tiers): what an override
sets and what `library_prices` reads from the library; `pricing` prices a call with it."""

from __future__ import annotations

from typing import Any

from traces.core.records import dataclass


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million tokens."""

    input: float
    output: float
    cache_write: float
    cache_read: float
    cache_write_1h: float | None = None
    tiers: tuple[tuple[int, Price], ...] = ()
    """Long-context tiers: (threshold, prices) for calls whose total input exceeds the
    threshold (the whole call at the tier's prices, as providers bill it)."""

    def for_input(self, total_input: int) -> Price:
        """The prices for a call of `total_input` tokens in, tiers applied."""
        chosen = self
        for start, price in self.tiers:
            if total_input > start:
                chosen = price
        return chosen

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Price:
        input_price = float(raw["input"])
        return cls(
            input=input_price,
            output=float(raw["output"]),
            cache_write=float(raw.get("cache_write", input_price)),
            cache_read=float(raw.get("cache_read", input_price)),
            cache_write_1h=_float_or_none(raw.get("cache_write_1h")),
        )


def _float_or_none(value: Any) -> float | None:
    return None if value is None else float(value)
