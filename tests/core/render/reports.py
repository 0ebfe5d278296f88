"""Hand-written report dicts (the shape `build_report` returns) for the render tests.

Only the keys the renderers read are filled in; `call(...)` and `run(...)` take
overrides so each test states just what it is about.
"""

from __future__ import annotations

from typing import Any

MODEL = "claude-sonnet-4-5"


def call(index: int, loop: int = 1, **overrides: Any) -> dict[str, Any]:
    """A successful call whose input grows by 500 tokens per step."""
    input_tokens = 800 + 500 * (index - 1)
    base: dict[str, Any] = {
        "index": index,
        "loop": loop,
        "line": index,
        "model": MODEL,
        "stop_reason": "tool_use",
        "status": "ok",
        "error": None,
        "http_status": 200,
        "input_tokens": input_tokens,
        "output_tokens": 60,
        "cache_read_tokens": 0,
        "cache_write_tokens": 0,
        "tool_call_ids": [],
        "started_at": None,
        "duration_s": None,
        "messages": 2 * index - 1,
        "appended": 1 if index == 1 else 2,
        "extends_previous": index > 1,
        "history_rewritten": False,
        "buckets": {
            "prefix": 800,
            "tool_results": input_tokens - 800 - 60 * (index - 1),
            "replayed_output": 60 * (index - 1),
            "other": 0,
        },
        "tokens_exact": True,
        "estimate_residual": 0,
        "cost_usd": round(input_tokens * 3e-6 + 60 * 15e-6, 6),
        "cost_uncached_usd": round(input_tokens * 3e-6 + 60 * 15e-6, 6),
        "cost_prefix_cached_usd": round(input_tokens * 2e-6 + 60 * 15e-6, 6),
        "priced_as": MODEL,
    }
    base.update(overrides)
    return base


def run(
    tool_id: str,
    name: str | None,
    asked: int | None,
    carried: int | None,
    status: str = "paired",
    **overrides: Any,
) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": tool_id,
        "name": name,
        "call": asked,
        "result_call": carried,
        "status": status,
        "is_error": False,
        "batch_size": 1,
        "loop": 1,
        "duration_s": None,
        "result_tokens": 300 if carried is not None else None,
        "requests_carrying": 1 if carried is not None else 0,
        "resend_tokens": 300 if carried is not None else 0,
        "result_tokens_exact": True,
    }
    base.update(overrides)
    return base


def finding(rule: str, call_index: int, severity: str = "warning", **overrides: Any):
    base = {
        "rule": rule,
        "severity": severity,
        "call": call_index,
        "tool_call_id": None,
        "loop": 1,
        "message": f"{rule} on call {call_index}",
    }
    base.update(overrides)
    return base


def report(
    calls: list[dict[str, Any]],
    runs: list[dict[str, Any]] | None = None,
    findings: list[dict[str, Any]] | None = None,
    batches: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A report around the given calls; loops are derived from the calls' `loop`."""
    loops: dict[int, list[int]] = {}
    for entry in calls:
        loops.setdefault(entry["loop"], []).append(entry["index"])
    return {
        "schema": "loop-inspector/report/v1",
        "format": "test",
        "loops": [
            {"index": index, "calls": indexes, "model": MODEL}
            for index, indexes in sorted(loops.items())
        ],
        "calls": calls,
        "tool_runs": runs or [],
        "parallel_batches": batches or [],
        "findings": findings or [],
        "totals": {"calls": len(calls)},
        "accounting": {"unpriced_models": []},
    }


def linear_loop(count: int, **call_overrides: Any) -> dict[str, Any]:
    """`count` calls, each asking for one `read_file` whose result the next call carries."""
    calls = [call(n, **call_overrides) for n in range(1, count + 1)]
    runs = [run(f"toolu_{n:05d}", "read_file", n, n + 1) for n in range(1, count)]
    calls[-1]["stop_reason"] = "end_turn"
    for n, entry in enumerate(calls[:-1], start=1):
        entry["tool_call_ids"] = [f"toolu_{n:05d}"]
    return report(calls, runs)
