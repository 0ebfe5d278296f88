"""Pricing a 20,000-call loop with genai-prices, each call on its own date.

Times `PriceTable.lookup` + `call_cost` for 20,000 calls spread over 90 days and four
models (the library path: one model lookup per name, one price resolution per model and
day, then floats), against the same loop priced from overrides only (a dict lookup: the
cost of the old bundled table), measured in the same run; and the library's own
`calc_price` per call, to show why the core does not call it per call.

    PYTHONPYCACHEPREFIX=/tmp/pycache .venv/bin/python bench/pricing.py [--calls 20000]
"""

from __future__ import annotations

import argparse
import time
from datetime import UTC, datetime

from genai_prices import Usage as LibraryUsage
from genai_prices import calc_price

from traces.core.analysis.pricing import call_cost, library_table, load_overrides
from traces.core.model import Usage

MODELS = ("claude-sonnet-4-5-20250929", "gpt-4o-2024-08-06", "gemini-2.5-pro", "o3")
START = datetime(2025, 5, 1, tzinfo=UTC).timestamp()


def calls(n: int) -> list[tuple[str, float, Usage]]:
    return [
        (MODELS[i % 4], START + (i * 90 * 86400) / n, Usage(1000 + i % 5000, 200, 3000, 100))
        for i in range(n)
    ]


def priced(table, loop) -> tuple[float, float]:
    began = time.perf_counter()
    total = 0.0
    for model, at, usage in loop:
        found = table.lookup(model, at)
        if found is not None:
            total += call_cost(usage, found[1])
    return time.perf_counter() - began, total


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=20_000)
    args = parser.parse_args()
    loop = calls(args.calls)
    overrides = load_overrides(
        b'{"claude-sonnet-4-5": {"input": 3, "output": 15}, "gpt-4o": {"input": 2.5,'
        b' "output": 10}, "gemini-2.5-pro": {"input": 1.25, "output": 10},'
        b' "o3": {"input": 2, "output": 8}}'
    )
    baseline_table = library_table().merged(overrides)
    priced(baseline_table, loop[:200])  # warm the name cache
    baseline, _ = priced(baseline_table, loop)
    cold_table = library_table()
    cold, total = priced(cold_table, loop)
    warm, _ = priced(cold_table.for_one_trace(), loop)
    sample = loop[:: max(1, len(loop) // 500)]
    began = time.perf_counter()
    for model, at, usage in sample:
        calc_price(
            LibraryUsage(
                input_tokens=usage.total_input_tokens,
                output_tokens=usage.output_tokens,
                cache_read_tokens=usage.cache_read_tokens,
                cache_write_tokens=usage.cache_write_tokens,
            ),
            model,
            genai_request_timestamp=datetime.fromtimestamp(at, tz=UTC),
        )
    per_call_library = (time.perf_counter() - began) / len(sample)
    print(f"{args.calls:,} calls, 4 models, 90 days; total ${total:,.2f}")
    print(f"baseline (overrides only, dict lookup): {baseline * 1e3:.1f} ms = 1.00x")
    print(f"genai-prices, first trace (cold caches): {cold * 1e3:.1f} ms = {cold / baseline:.2f}x")
    print(f"genai-prices, next trace (warm caches):  {warm * 1e3:.1f} ms = {warm / baseline:.2f}x")
    print(
        f"calc_price per call (not used): {per_call_library * args.calls * 1e3:.0f} ms for the loop"
        f" = {per_call_library * args.calls / baseline:.0f}x"
    )


if __name__ == "__main__":
    main()
