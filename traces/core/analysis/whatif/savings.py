"""The largest savings as concrete instructions ("cap get_order at 340 tokens: saves 5,040
input tokens, $0.015 on this run"), for the post-mortem and the Markdown export.

Ranked by dollars; only savings that could be computed and are above zero are listed.
When no price is known the ranking falls back to tokens and the sentence says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ... import formatting
from .outcome import names
from .params import LIFETIME_LABELS

TOP = 3


def money(value: float) -> str:
    """Dollars as everywhere else (`formatting.money`); the sentences are stored in reports."""
    return formatting.money(value)


def _sentence(
    action: str, tokens: int | None, usd: float | None, exact: bool, seconds: float | None = None
) -> str:
    parts = []
    if tokens:
        parts.append(f"{'' if exact else '≈'}{tokens:,} input tokens")
    if usd is not None and usd > 0:
        parts.append(money(usd))
    elif tokens:
        parts.append("dollars unknown (no price for the model)")
    text = ", ".join(parts)
    if seconds:
        text += f" and {seconds:,.1f} s of model time"
    return f"saves {text} on this run"


def candidates(scenarios: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Every single fix with a saving: one per capped tool, one per other scenario."""
    by_id = {s["id"]: s for s in scenarios}
    found: list[dict[str, Any]] = []

    def add(
        scenario: str,
        action: str,
        tokens: int | None,
        usd: float | None,
        exact: bool,
        seconds: float | None = None,
    ) -> None:
        if not tokens and not (usd and usd > 0):
            return
        found.append(
            {
                "scenario": scenario,
                "instruction": action,
                "tokens_saved": tokens,
                "usd_saved": usd,
                "seconds_saved": seconds,
                "exact": exact,
                "saving": _sentence(action, tokens, usd, exact, seconds),
                "text": f"{action}: {_sentence(action, tokens, usd, exact, seconds)}",
            }
        )

    cap = by_id.get("cap-results")
    for item in (cap or {}).get("items", []):
        if item["tokens_saved"] > 0 and item["cap"] is not None:
            action = f"cap {item['tool']} at {item['cap']:,} tokens"
            add("cap-results", action, item["tokens_saved"], item["usd_saved"], item["exact"])
    clear = by_id.get("clear-old-results")
    if clear and clear.get("items"):
        keep = clear["parameters"]["clear_after"]
        action = (
            f"clear tool results older than {keep} request{'s' if keep != 1 else ''}"
            " (replace them with a short placeholder)"
        )
        add("clear-old-results", action, clear["tokens_saved"], clear["usd_saved"], clear["exact"])
    unused = by_id.get("unused-tools")
    if unused and unused.get("items"):
        tools = [item["tool"] for item in unused["items"]]
        plural = "s" if len(tools) != 1 else ""
        action = f"drop the {len(tools)} tool definition{plural} never called ({names(tools)})"
        add("unused-tools", action, unused["tokens_saved"], unused["usd_saved"], False)
    batch = by_id.get("batch-serial-calls")
    if batch and batch.get("items"):
        asked = names(t for item in batch["items"] for t in item["tools"])
        calls = [str(item["call"]) for item in batch["items"]]
        action = (
            f"ask {asked} in the same response as the call before, as one parallel batch"
            f" (call{'s' if len(calls) != 1 else ''} {', '.join(calls)} would not be needed)"
        )
        add(
            "batch-serial-calls",
            action,
            batch["tokens_saved"],
            batch["usd_saved"],
            batch["exact"],
            batch.get("seconds_saved"),
        )
    cache = by_id.get("prompt-cache")
    if cache and cache.get("usd_saved") and cache["usd_saved"] > 0:
        lifetime = LIFETIME_LABELS[cache["parameters"]["cache_lifetime"]]
        action = (
            "cache the stable prefix (system prompt, tool definitions, first message)"
            f" with the {lifetime} lifetime"
        )
        add("prompt-cache", action, None, cache["usd_saved"], cache["exact"])
    return found


def top_savings(scenarios: Sequence[Mapping[str, Any]], limit: int = TOP) -> list[dict[str, Any]]:
    found = candidates(scenarios)
    priced = [c for c in found if c["usd_saved"] is not None and c["usd_saved"] > 0]
    if priced:
        return sorted(priced, key=lambda c: (-c["usd_saved"], c["instruction"]))[:limit]
    return sorted(
        (c for c in found if c["tokens_saved"]),
        key=lambda c: (-(c["tokens_saved"] or 0), c["instruction"]),
    )[:limit]
