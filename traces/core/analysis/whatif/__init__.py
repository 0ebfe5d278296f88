"""What if the loop were shaped? Re-price a trace under each fix, from its own calls.

`build_what_if(report, params)` computes the report's `what_if` section from the report
itself (plus `what_if.inputs`, gathered from the `Trace` by `what_if_inputs` when the
report is built), so the web recomputes it with other parameters without re-reading the
file. One module per scenario:

1. `cap_results`: cap a tool's results at N tokens;
2. `batch_calls`: ask the serial independent calls in one batch;
3. `concurrent_tools`: run each batch's tools concurrently (recorded timings only);
4. `prompt_cache`: cache the stable prefix with a 5-minute or 1-hour lifetime;
5. `clear_results`: clear tool results older than K requests;
6. `unused_tools`: drop tool definitions that were never called.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ...model import Trace
from ...report_types import WhatIfInputs
from ..pricing import PriceTable
from ..tokens import TokenCounter
from .basis import Basis, basis_from_report
from .batch_calls import batch_serial_calls
from .cap_results import cap_results
from .clear_results import PLACEHOLDER_TOKENS, clear_old_results
from .concurrent_tools import concurrent_tools
from .params import Params, default_params, parse_caps, parse_params
from .prompt_cache import prompt_cache
from .savings import money, top_savings
from .series import build_series
from .unused_tools import drop_unused_tools, unused_definitions

OVERSIZED_THRESHOLD = 800
"""The `oversized-tool-result` rule's default: the suggested cap for a tool's results."""

__all__ = [
    "OVERSIZED_THRESHOLD",
    "Basis",
    "Params",
    "basis_from_report",
    "build_series",
    "build_what_if",
    "default_params",
    "money",
    "parse_caps",
    "parse_params",
    "what_if_inputs",
]


def what_if_inputs(trace: Trace, models: Iterable[str | None], table: PriceTable) -> WhatIfInputs:
    """What the report does not otherwise keep: the prices of the models it priced
    (`models`: the price-table names the accounting used), the tool definitions never
    called, and the size of the placeholder a cleared result leaves."""
    counter = TokenCounter()
    prices: dict[str, dict[str, float | None]] = {}
    for name in sorted(n for n in models if n):
        price = table.prices.get(name)
        if price is not None:
            prices[name] = {
                "input": price.input,
                "output": price.output,
                "cache_write": price.cache_write,
                "cache_read": price.cache_read,
                "cache_write_1h": price.cache_write_1h,
            }
    return {
        "prices": prices,
        "unused_tools": unused_definitions(trace, counter),
        "placeholder_tokens": PLACEHOLDER_TOKENS,
        "oversized_threshold": OVERSIZED_THRESHOLD,
    }


def build_what_if(
    report: Mapping[str, Any],
    params: Params | Mapping[str, Any] | None = None,
    basis: Basis | None = None,
) -> dict[str, Any]:
    """The `what_if` section: every scenario under `params` (a `Params`, a query-string
    mapping, or None for the defaults), the three largest savings, and the inputs."""
    basis = basis or basis_from_report(report)
    chosen = params if isinstance(params, Params) else parse_params(basis, params)
    outcomes = [
        cap_results(basis, chosen),
        batch_serial_calls(basis),
        concurrent_tools(basis),
        prompt_cache(basis, chosen),
        clear_old_results(basis, chosen),
        drop_unused_tools(basis),
    ]
    totals = (basis.input_total, basis.cost_total)
    scenarios = [outcome.as_dict(basis, totals) for outcome in outcomes]
    return {
        "parameters": chosen.as_dict(),
        "scenarios": scenarios,
        "top_savings": top_savings(scenarios),
        "inputs": dict((report.get("what_if") or {}).get("inputs") or {}),
    }
