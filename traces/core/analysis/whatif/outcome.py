"""The shape every scenario reports, so the page, the exports and the CLI read them alike.

Before/after figures are for the whole trace (input tokens, dollars, seconds); each
scenario's `items` say which tool, call or result the saving comes from. A figure that
cannot be computed is None and a note says why: no scenario guesses.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from traces.core.records import dataclass, field

from .basis import Basis

MAX_ITEMS = 50
"""Items kept per scenario (the largest first); the rest are counted in `items_omitted`."""


def usd(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


@dataclass(slots=True)
class Outcome:
    id: str
    title: str
    parameters: dict[str, Any] = field(default_factory=dict)
    tokens_saved: int | None = 0
    usd_saved: float | None = 0.0
    seconds_saved: float | None = None
    exact: bool = True
    calls: set[int] = field(default_factory=set)
    items: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    status: str = "ok"
    """ok; none (nothing to change in this trace); unknown (the saving cannot be computed)."""
    extra: dict[str, Any] = field(default_factory=dict)
    items_beyond: int = 0
    """Items a scenario left out of `items` itself (it sorted them and kept the first
    MAX_ITEMS without making the rest): counted in `items_omitted` too."""
    spans: list[tuple[int, int, int]] = field(default_factory=list)
    """(loop, start, stop) positions of touched calls, merged once at the end: a result
    carried by 1,000 requests is one span, not 1,000 set insertions."""

    def touch(self, loop: int, start: int, stop: int) -> None:
        if stop > start:
            self.spans.append((loop, start, stop))

    def touched(self, basis: Basis) -> list[int]:
        found = set(self.calls)
        by_loop: dict[int, list[tuple[int, int]]] = {}
        for loop, start, stop in self.spans:
            by_loop.setdefault(loop, []).append((start, stop))
        for loop, spans in by_loop.items():
            calls = basis.loops[loop].calls
            reached = 0
            for start, stop in sorted(spans):
                for position in range(max(start, reached), min(stop, len(calls))):
                    found.add(calls[position].index)
                reached = max(reached, stop)
        return sorted(found)

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def as_dict(
        self, basis: Basis, totals: tuple[int, float | None] | None = None
    ) -> dict[str, Any]:
        """The scenario for the report; `totals` is the basis's (input_total, cost_total)
        when the caller has it (summing every call once for all six scenarios)."""
        input_total, cost_total = totals or (basis.input_total, basis.cost_total)
        tokens_saved = self.tokens_saved
        usd_saved = usd(self.usd_saved)
        # A saving over priced calls stands even when another call's model has no price;
        # only the whole-trace before/after (and the share) are then unknown.
        if usd_saved is None and tokens_saved and basis.unpriced_models:
            self.note(unpriced_note(basis))
        status = self.status
        if status == "ok" and not self.items:
            status = "none"
        return {
            "id": self.id,
            "title": self.title,
            "status": status,
            "parameters": self.parameters,
            "tokens_before": input_total if tokens_saved is not None else None,
            "tokens_after": input_total - tokens_saved if tokens_saved is not None else None,
            "tokens_saved": tokens_saved,
            "usd_before": usd(cost_total) if usd_saved is not None else None,
            "usd_after": usd(cost_total - usd_saved)
            if usd_saved is not None and cost_total is not None
            else None,
            "usd_saved": usd_saved,
            "seconds_saved": None if self.seconds_saved is None else round(self.seconds_saved, 3),
            "percent_tokens": _percent(tokens_saved, input_total),
            "percent_usd": _percent(usd_saved, cost_total),
            "exact": self.exact,
            "calls": self.touched(basis),
            "items": self.items[:MAX_ITEMS],
            "items_omitted": max(0, len(self.items) - MAX_ITEMS) + self.items_beyond,
            "notes": self.notes,
            **self.extra,
        }


def _percent(part: float | None, whole: float | None) -> float | None:
    if part is None or not whole:
        return None
    return round(100 * part / whole, 2)


def unpriced_note(basis: Basis) -> str:
    models = ", ".join(basis.unpriced_models[:3]) or "some calls' models"
    return f"dollars unknown: no price for {models}"


def add_usd(total: float | None, part: float | None) -> float | None:
    """Sum of dollar figures where one unknown part makes the whole unknown."""
    if total is None or part is None:
        return None
    return total + part


def names(values: Iterable[str], limit: int = 4) -> str:
    items = list(dict.fromkeys(values))
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")
