"""Render speed of the sequence diagram and its overview strip on a 2,000-call loop.

Builds a synthetic report dict (the shape `build_report` returns: growing input, a
parallel batch every 7th call, a failed call and findings now and then) directly,
because a real 2,000-call log re-sends its transcript and would take gigabytes. Prints
the render time of one window and of the overview strip, and their element counts, as
ratios against `orjson.dumps` of the same report measured in the same run. Target
(issue "See the loop"): a 60-call window renders in under ~50 ms.

    .venv/bin/python bench/render.py [--calls 2000] [--window 60] [--repeat 5]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from traces.core.outputs.render import charts, sequence  # noqa: E402
from traces.core.outputs.render.links import PrefixLinks  # noqa: E402

TOOLS = ["read_file", "grep", "bash", "edit_file", "list_dir"]


def synthetic_report(calls: int, seed_start: float = 1_790_000_000.0) -> dict[str, Any]:
    """One loop of `calls` calls asking for tools; every 7th call asks for three at once."""
    call_rows: list[dict[str, Any]] = []
    runs: list[dict[str, Any]] = []
    findings: list[dict[str, Any]] = []
    batches: list[dict[str, Any]] = []
    clock = seed_start
    for index in range(1, calls + 1):
        last = index == calls
        width = 3 if index % 7 == 0 else 1
        ids = [] if last else [f"toolu_{index:05d}_{n}" for n in range(width)]
        failed = index % 97 == 0
        input_tokens = 3000 + 600 * index
        call_rows.append(
            {
                "index": index,
                "loop": 1,
                "line": index,
                "model": "claude-sonnet-4-5",
                "stop_reason": "end_turn" if last else "tool_use",
                "status": "error" if failed else "ok",
                "error": "overloaded_error: Overloaded" if failed else None,
                "http_status": 529 if failed else 200,
                "input_tokens": 12,
                "output_tokens": 90,
                "cache_read_tokens": input_tokens - 612,
                "cache_write_tokens": 600,
                "tool_call_ids": ids,
                "started_at": clock,
                "duration_s": 2.5,
                "messages": 2 * index - 1,
                "appended": 2,
                "extends_previous": index > 1,
                "history_rewritten": False,
                "buckets": {
                    "prefix": 3000,
                    "tool_results": input_tokens - 3000 - 90 * (index - 1),
                    "replayed_output": 90 * (index - 1),
                    "other": 0,
                },
                "tokens_exact": True,
                "estimate_residual": 0,
                "cost_usd": round(input_tokens * 0.3e-6 + 90 * 15e-6, 6),
                "cost_uncached_usd": round(input_tokens * 3e-6 + 90 * 15e-6, 6),
                "cost_prefix_cached_usd": round(input_tokens * 1e-6 + 90 * 15e-6, 6),
                "priced_as": "claude-sonnet-4-5",
            }
        )
        if width > 1 and not last:
            batches.append({"call": index, "tool_call_ids": ids})
        for n, tool_id in enumerate(ids):
            runs.append(
                {
                    "id": tool_id,
                    "name": TOOLS[(index + n) % len(TOOLS)],
                    "call": index,
                    "result_call": index + 1,
                    "status": "paired",
                    "is_error": index % 13 == 0,
                    "batch_size": width,
                    "loop": 1,
                    "duration_s": 0.4,
                    "result_tokens": 550,
                    "requests_carrying": calls - index,
                    "resend_tokens": 550 * (calls - index),
                    "result_tokens_exact": True,
                }
            )
        if index % 11 == 0:
            findings.append(
                {
                    "rule": "repeated-tool-call",
                    "severity": "warning",
                    "call": index,
                    "tool_call_id": ids[0] if ids else None,
                    "loop": 1,
                    "message": "the same tool call was made twice",
                }
            )
        if failed:
            findings.append(
                {
                    "rule": "api-error",
                    "severity": "error",
                    "call": index,
                    "tool_call_id": None,
                    "loop": 1,
                    "message": "the call failed: overloaded_error",
                }
            )
        clock += 3.0
    return {
        "schema": "loop-inspector/report/v1",
        "format": "synthetic",
        "loops": [{"index": 1, "calls": list(range(1, calls + 1)), "model": "claude-sonnet-4-5"}],
        "calls": call_rows,
        "tool_runs": runs,
        "parallel_batches": batches,
        "findings": findings,
        "totals": {"calls": calls},
        "accounting": {"unpriced_models": []},
    }


def timed(action: Callable[[], Any], repeat: int) -> float:
    """Best of `repeat` runs of `action`, in seconds (the least disturbed by other load)."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--window", type=int, default=60)
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()

    report = synthetic_report(args.calls)
    middle = max(1, args.calls // 2)
    prefix = "/traces/bench/"

    base = timed(lambda: orjson.dumps(report), args.repeat)
    window = timed(
        lambda: sequence.render_sequence(
            report, links=PrefixLinks(prefix), start=middle, window=args.window
        ),
        args.repeat,
    )
    timed_window = timed(
        lambda: sequence.render_sequence(
            report, links=PrefixLinks(prefix), start=middle, window=args.window, spacing="time"
        ),
        args.repeat,
    )
    overview = timed(
        lambda: sequence.render_overview(report, start=middle, window=args.window),
        args.repeat,
    )
    view = timed(
        lambda: sequence.sequence_view(
            report, links=PrefixLinks(prefix), start=middle, window=args.window
        ),
        args.repeat,
    )
    growth = timed(lambda: charts.figures(report), args.repeat)

    window_tree = sequence.build_sequence(
        report, links=PrefixLinks(prefix), start=middle, window=args.window
    )
    overview_tree = sequence.build_overview(report, start=middle, window=args.window)
    window_bytes = len(window_tree.to_string().encode())
    overview_bytes = len(overview_tree.to_string().encode())
    print(
        f"report: {args.calls:,} calls, {len(report['tool_runs']):,} tool runs, "
        f"{len(orjson.dumps(report)) / 1024:.0f} KiB as JSON"
    )
    print(f"orjson.dumps(report) baseline:    {base * 1000:8.2f} ms (best of {args.repeat})")
    print(
        f"sequence window ({args.window} calls, step): {window * 1000:8.2f} ms "
        f"= {window / base:6.2f}x baseline (target < 50 ms)"
    )
    print(
        f"sequence window ({args.window} calls, time): {timed_window * 1000:8.2f} ms "
        f"= {timed_window / base:6.2f}x baseline"
    )
    print(
        f"overview strip ({args.calls:,} marks):  {overview * 1000:8.2f} ms "
        f"= {overview / base:6.2f}x baseline"
    )
    print(
        f"sequence_view (one window, both):  {view * 1000:8.2f} ms = {view / base:6.2f}x "
        f"baseline (window + overview = {(window + overview) / base:6.2f}x)"
    )
    print(f"all Plotly figure dicts:          {growth * 1000:8.2f} ms = {growth / base:6.2f}x")
    print(
        f"elements: window {window_tree.count():,} ({window_bytes / 1024:.0f} KiB), "
        f"overview {overview_tree.count():,} ({overview_bytes / 1024:.0f} KiB)"
    )


if __name__ == "__main__":
    main()
