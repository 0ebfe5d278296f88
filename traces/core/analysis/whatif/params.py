"""The adjustable parameters of the what-if scenarios, their defaults and their parsing.

One parser serves the trace page's query string, the JSON endpoint and the command line,
so `?cap:get_order=340&clear_after=3&cache_lifetime=1h` and
`whatif FILE --cap get_order=340 --clear-after 3 --cache-lifetime 1h` mean the same thing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from traces.core.records import dataclass, field

from .basis import Basis

LIFETIMES: dict[str, int] = {"5m": 300, "1h": 3600}
"""Anthropic's prompt-cache lifetimes in seconds: an entry not used for this long is gone."""
LIFETIME_LABELS = {"5m": "5-minute", "1h": "1-hour"}
DEFAULT_LIFETIME = "5m"
DEFAULT_CLEAR_AFTER = 3
"""Keep a tool result for the 3 requests after it arrives, then replace it."""
CAP_PREFIX = "cap:"
MAX_PARAM_TOKENS = 10_000_000
"""The largest token count a what-if parameter accepts (a larger one is read as this)."""


@dataclass(frozen=True, slots=True)
class Params:
    caps: Mapping[str, int] = field(default_factory=dict)
    """Tool name -> the most tokens one of its results may keep."""
    clear_after: int | None = DEFAULT_CLEAR_AFTER
    """Requests a result is kept for before it is cleared (None: never cleared)."""
    cache_lifetime: str = DEFAULT_LIFETIME
    drop_unused_tools: bool = True
    batch_serial_calls: bool = True

    def as_dict(self) -> dict[str, Any]:
        return {
            "caps": dict(sorted(self.caps.items())),
            "clear_after": self.clear_after,
            "cache_lifetime": self.cache_lifetime,
            "drop_unused_tools": self.drop_unused_tools,
            "batch_serial_calls": self.batch_serial_calls,
        }

    def query(self) -> list[tuple[str, str]]:
        """The parameters as query-string pairs (the trace page's form fields)."""
        pairs = [(f"{CAP_PREFIX}{name}", str(cap)) for name, cap in sorted(self.caps.items())]
        pairs.append(("clear_after", "" if self.clear_after is None else str(self.clear_after)))
        pairs.append(("cache_lifetime", self.cache_lifetime))
        pairs.append(("drop_unused", "1" if self.drop_unused_tools else "0"))
        pairs.append(("batch", "1" if self.batch_serial_calls else "0"))
        return pairs


def median_result(basis: Basis, tool: str) -> int | None:
    return median_of([r.tokens for r in basis.results if r.name == tool])


def median_of(sizes: list[int]) -> int | None:
    """The median result size (None for none), as `median_result` gives it."""
    if not sizes:
        return None
    # statistics.median's answer, without importing it (fractions, decimal, random: ~4 ms
    # of the console script's start).
    ordered = sorted(sizes)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return int(ordered[middle])
    return int((ordered[middle - 1] + ordered[middle]) / 2)


def tool_names(basis: Basis) -> list[str]:
    """Tools with at least one carried result, largest re-send first."""
    resent: dict[str, int] = {}
    for result in basis.results:
        resent[result.name] = resent.get(result.name, 0) + result.tokens * result.carrying
    return sorted(resent, key=lambda name: (-resent[name], name))


def default_params(basis: Basis) -> Params:
    """Cap every tool at the oversized-result threshold (results above it are the ones
    the `oversized-tool-result` rule flags), clear after 3 requests, 5-minute cache."""
    threshold = basis.oversized_threshold
    oversized = {r.name for r in basis.results if r.tokens > threshold}
    caps = {name: threshold for name in tool_names(basis) if name in oversized}
    return Params(caps=caps)


def parse_params(basis: Basis, values: Mapping[str, Any] | None) -> Params:
    """Parameters from a query string (or any mapping); missing ones take the defaults.

    `cap:TOOL` fields name a cap (blank: no cap for that tool); once any cap field is
    present, tools without one are not capped (the form always sends them all).
    """
    defaults = default_params(basis)
    if not values:
        return defaults
    caps: dict[str, int] = dict(defaults.caps)
    cap_fields = [key for key in values if str(key).startswith(CAP_PREFIX)]
    if cap_fields:
        caps = {}
        for key in cap_fields:
            tokens = _int(_last(values, key), low=0)
            if tokens is not None:
                caps[str(key)[len(CAP_PREFIX) :]] = tokens
    clear_after = defaults.clear_after
    if "clear_after" in values:
        clear_after = _int(_last(values, "clear_after"), low=1)
    lifetime = str(_last(values, "cache_lifetime") or defaults.cache_lifetime)
    if lifetime not in LIFETIMES:
        lifetime = defaults.cache_lifetime
    return Params(
        caps=caps,
        clear_after=clear_after,
        cache_lifetime=lifetime,
        drop_unused_tools=_flag(values, "drop_unused", defaults.drop_unused_tools),
        batch_serial_calls=_flag(values, "batch", defaults.batch_serial_calls),
    )


def parse_caps(items: Iterable[str]) -> dict[str, int]:
    """`TOOL=N` strings (the command line's --cap) as a mapping; ValueError says which."""
    caps: dict[str, int] = {}
    for item in items:
        name, sep, value = item.rpartition("=")
        tokens = _int(value, low=0) if sep else None
        if not name or tokens is None:
            raise ValueError(f"--cap wants TOOL=N (N a number of tokens), got {item!r}")
        caps[name] = tokens
    return caps


def _last(values: Mapping[str, Any], key: str) -> Any:
    getlist = getattr(values, "getlist", None)
    if getlist is not None:
        found = getlist(key)
        return found[-1] if found else None
    return values.get(key)


def _int(value: Any, *, low: int) -> int | None:
    try:
        number = int(str(value).strip().replace(",", "").replace("_", ""))
    except (TypeError, ValueError):
        return None
    return max(low, min(MAX_PARAM_TOKENS, number))


def _flag(values: Mapping[str, Any], key: str, default: bool) -> bool:
    if key not in values:
        return default
    return str(_last(values, key)).lower() in ("1", "on", "true", "yes")
