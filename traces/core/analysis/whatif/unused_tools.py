"""Scenario 6: drop tool definitions the trace never called: their tokens x the calls
that carried them.

Definition sizes are tiktoken counts of each definition's JSON (providers add a little
framing of their own), so this saving is always marked as an estimate. The inputs are
gathered from the `Trace` when the report is built (`definitions`): the report alone
does not keep the tool lists.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...model import Trace
from ..tokens import TokenCounter
from .basis import Basis
from .outcome import Outcome, add_usd


def definition_name(tool: Any) -> str | None:
    if not isinstance(tool, dict):
        return None
    nested = tool.get("function")
    function = nested if isinstance(nested, dict) else tool
    name = function.get("name")
    return name if isinstance(name, str) else None


def unused_definitions(trace: Trace, counter: TokenCounter) -> list[dict[str, Any]]:
    """Tools offered but never called: name, tokens and the calls that carried them."""
    called = {run.name for run in trace.tool_runs if run.name}
    for call in trace.calls:
        if call.response is not None:
            called.update(b.name for b in call.response.tool_uses if b.name)
    found: dict[str, dict[str, Any]] = {}
    for call in trace.calls:
        for tool in call.tools:
            name = definition_name(tool)
            if name is None or name in called:
                continue
            if name not in found:
                found[name] = {"tokens": counter.json(tool), "c": []}
            found[name]["c"].append(call.index)
    return [
        {"name": name, "tokens": entry["tokens"], "calls": _ranges(entry["c"])}
        for name, entry in sorted(found.items())
    ]


def _ranges(indexes: Iterable[int]) -> list[list[int]]:
    ranges: list[list[int]] = []
    for index in sorted(set(indexes)):
        if ranges and ranges[-1][1] == index - 1:
            ranges[-1][1] = index
        else:
            ranges.append([index, index])
    return ranges


def drop_unused_tools(basis: Basis) -> Outcome:
    outcome = Outcome("unused-tools", "Drop tool definitions never called", exact=False)
    total_usd: float | None = 0.0
    tokens = 0
    for tool in basis.unused_tools:
        carried = [basis.calls[i] for i in tool.call_indexes() if i in basis.calls]
        saved = tool.tokens * len(carried)
        saved_usd: float | None = 0.0
        for call in carried:
            rate = call.input_usd_per_token
            saved_usd = add_usd(saved_usd, None if rate is None else tool.tokens * rate)
        outcome.items.append(
            {
                "tool": tool.name,
                "tokens": tool.tokens,
                "calls_carrying": len(carried),
                "tokens_saved": saved,
                "usd_saved": None if saved_usd is None else round(saved_usd, 6),
            }
        )
        outcome.calls.update(c.index for c in carried)
        tokens += saved
        total_usd = add_usd(total_usd, saved_usd)
    outcome.items.sort(key=lambda item: (-item["tokens_saved"], item["tool"]))
    outcome.tokens_saved = tokens
    outcome.usd_saved = total_usd
    if outcome.items:
        outcome.note("≈ definition sizes are tiktoken estimates of each definition's JSON")
    else:
        outcome.status = "none"
        outcome.note("every tool offered was called at least once (or none was offered)")
    return outcome
