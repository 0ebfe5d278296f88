"""One way to write each quantity a person reads: money, token counts, durations, percentages.

The pages (template tags), the exports, the SVG diagram, the charts' text and the what-if
tables all format through here, so "$0.012" or "1 min 5 s" reads the same everywhere.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

UNKNOWN_MONEY = "unknown"
"""What a missing price reads as: a cost that could not be computed, not zero."""
MISSING = "—"
"""What any other missing figure reads as."""


def _number(value: Any) -> float | None:
    if value is None or value == "":
        return None
    return float(value)


def money(value: Any) -> str:
    """Dollars with enough digits for a per-call cost: $12.35, $0.123, $0.0042, $0.00042.

    Negative amounts keep a leading "-"; an unknown cost is "unknown", never "$0"; a cost
    too small for five decimals is "<$0.00001", never "$0.00000".
    """
    number = _number(value)
    if number is None:
        return UNKNOWN_MONEY
    if number < 0:
        return f"-{money(-number)}"
    if number == 0:
        return "$0"
    if number >= 1:
        return f"${number:,.2f}"
    if number >= 0.01:
        return f"${number:.3f}"
    if number >= 0.001:
        return f"${number:.4f}"
    if number < 0.000005:  # would print "$0.00000": a cost, but under a thousandth of a cent
        return "<$0.00001"
    return f"${number:.5f}"


def count(value: Any, *, exact: bool = True) -> str:
    """An exact whole number with thousands separators (1,234), "≈" before an estimate."""
    number = _number(value)
    if number is None:
        return MISSING
    return f"{'' if exact or not number else '≈'}{int(number):,}"


def tokens_compact(value: Any) -> str:
    """A token count for a glance: 8.8e9 -> '8.80 G', 1234567 -> '1.23 M', 12345 -> '12.3 k',
    999 -> '999' (live_rows.js `tokens` says the same in the browser)."""
    number = _number(value)
    if number is None:
        return MISSING
    if abs(number) >= 1_000_000_000:
        return f"{number / 1_000_000_000:.2f} G"
    if abs(number) >= 1_000_000:
        return f"{number / 1_000_000:.2f} M"
    if abs(number) >= 10_000:
        return f"{number / 1000:.1f} k"
    return f"{int(number):,}"


def duration(value: Any) -> str:
    """Seconds as people say them: 250 ms, 12.5 s, 1 min 5 s, 2 h 3 min."""
    number = _number(value)
    if number is None:
        return MISSING
    if number < 0:
        return f"-{duration(-number)}"
    if number >= 3600:
        hours, rest = divmod(int(number), 3600)
        return f"{hours} h {rest // 60} min"
    if number >= 60:
        return f"{int(number // 60)} min {int(number % 60)} s"
    if number >= 1 or number == 0:
        return f"{number:.1f} s"
    return f"{number * 1000:.0f} ms"


def percent(value: Any, *, scale: float = 100.0, digits: int = 1) -> str:
    """A fraction as a percentage (12.3%; `digits=0` for a share shown whole, 12%); pass
    scale=1 for a value that is already in percent."""
    number = _number(value)
    if number is None:
        return MISSING
    return f"{number * scale:.{digits}f}%"


def plotly_money(field: str) -> str:
    """Dollars in a Plotly hover template ("$%{y:,.4f}"): d3-format runs in the browser, so
    the charts' hovers keep four decimals, enough for a cumulative per-call cost."""
    return f"$%{{{field}:,.4f}}"


def mean_count(value: Any) -> str:
    """A mean of counts (calls per run, findings per run): one decimal below 100, whole
    above, never a trailing ".0" (12.4, 3, 1,235): a count has no cents."""
    number = _number(value)
    if number is None:
        return MISSING
    if abs(number) >= 100:
        return f"{number:,.0f}"
    text = f"{number:.1f}"
    return text[:-2] if text.endswith(".0") else text


def saving(usd_saved: Any, percent_saved: Any = None) -> str:
    """A what-if's dollars saved, in words when the fix costs more: "$9.92" saved, or
    "costs $9.92 more (+117.7%)" rather than "-$9.92" under "dollars saved".

    `percent_saved` is already in percent (of the actual cost), as the what-if gives it.
    """
    number = _number(usd_saved)
    if number is None:
        return UNKNOWN_MONEY
    if number >= 0:
        return money(number)
    more = _number(percent_saved)
    share = "" if more is None else f" (+{percent(-more, scale=1)})"
    return f"costs {money(-number)} more{share}"


def plural(number: Any, singular: str, plural_form: str = "") -> str:
    """A count and its noun: "1 call", "10,000 calls" (`plural_form` for irregular ones)."""
    many = plural_form or f"{singular}s"
    whole = _number(number)
    return f"{count(whole)} {singular if whole == 1 else many}"


SCORE_LETTERS = MappingProxyType(
    {"C": "correct", "I": "incorrect", "P": "partial", "N": "no answer"}
)
"""Inspect AI's letter grades (`inspect_ai.scorer.CORRECT`, `INCORRECT`, `PARTIAL`, `NOANSWER`)."""


def score_value(value: Any, depth: int = 0) -> str:
    """An eval score as people read it: "C (correct)", "0.75", "accuracy: 1, f1: 0.5"
    (nested past three levels: "…"; a score is trace text, its depth is not ours)."""
    if depth > 3:
        return "…"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return f"{value:,.4g}" if isinstance(value, float) else f"{value:,}"
    if isinstance(value, str):
        meaning = SCORE_LETTERS.get(value)
        return f"{value} ({meaning})" if meaning else value
    if isinstance(value, dict):
        return ", ".join(f"{key}: {score_value(item, depth + 1)}" for key, item in value.items())
    if isinstance(value, list):
        return ", ".join(score_value(item, depth + 1) for item in value)
    return MISSING
