"""A run's small summary from its report: what the list, run sets and comparisons read.

The list page filters and sorts thousands of runs and a set page aggregates hundreds;
neither may load whole reports (a report holds every call). `run_stats` keeps the few
numbers they need (cost, main model, tool names, error results, findings per rule, tool
totals, the heaviest results and slowest tool runs), small enough for a column per run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

TOP_ITEMS = 5
"""Heaviest results and slowest tool runs kept per run (a set page shows the top across runs)."""

OUTCOME_FILTERS = {
    "finished": "finished",
    "halted": "halted_on_tool_use",
    "halted_on_tool_use": "halted_on_tool_use",
    "api_error": "api_error",
    "max_tokens": "max_tokens",
    "interrupted": "interrupted",
    "unknown": "unknown",
}
"""Outcome names accepted in a query string (`halted` is short for halted_on_tool_use);
`live` is a trace state, not an outcome, and is handled beside these."""


def main_model(report: Mapping[str, Any]) -> str:
    """The model of the loop with the most calls (the agent itself, not its side calls)."""
    loops = report.get("loops") or []
    if loops:
        biggest = max(loops, key=lambda loop: (len(loop.get("calls") or []), -loop["index"]))
        if biggest.get("model"):
            return str(biggest["model"])
    for call in report.get("calls") or []:
        if call.get("model"):
            return str(call["model"])
    return ""


def rule_counts(findings: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], int]:
    """Findings per (rule, severity), in the report's order of first appearance."""
    counts: dict[tuple[str, str], int] = {}
    for finding in findings:
        key = (str(finding.get("rule", "")), str(finding.get("severity", "")))
        counts[key] = counts.get(key, 0) + 1
    return counts


def tool_totals(runs: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per tool name: runs, error results, result tokens (total, max) and time (total, max).

    Result tokens are summed over the runs whose size is known; `sized` says how many.
    """
    tools: dict[str, dict[str, Any]] = {}
    for run in runs:
        name = run.get("name") or "(unnamed)"
        entry = tools.setdefault(
            name,
            {
                "runs": 0,
                "errors": 0,
                "result_tokens": 0,
                "max_result_tokens": 0,
                "sized": 0,
                "seconds": 0.0,
                "max_seconds": None,
            },
        )
        entry["runs"] += 1
        entry["errors"] += 1 if run.get("is_error") else 0
        tokens = run.get("result_tokens")
        if tokens is not None:
            entry["result_tokens"] += tokens
            entry["max_result_tokens"] = max(entry["max_result_tokens"], tokens)
            entry["sized"] += 1
        seconds = run.get("duration_s")
        if seconds is not None:
            entry["seconds"] = round(entry["seconds"] + seconds, 6)
            if entry["max_seconds"] is None or seconds > entry["max_seconds"]:
                entry["max_seconds"] = seconds
    return dict(sorted(tools.items()))


def run_stats(report: Mapping[str, Any]) -> dict[str, Any]:
    """The summary kept beside a stored run (see the module docstring)."""
    runs = report.get("tool_runs") or []
    heaviest = sorted(
        (r for r in runs if r.get("result_tokens")),
        key=lambda r: (-r["result_tokens"], r.get("call") or 0),
    )[:TOP_ITEMS]
    slowest = sorted(
        (r for r in runs if r.get("duration_s") is not None),
        key=lambda r: (-r["duration_s"], r.get("call") or 0),
    )[:TOP_ITEMS]
    stats: dict[str, Any] = {
        "tools": tool_totals(runs),
        "heaviest_results": [_run_ref(r, "result_tokens") for r in heaviest],
        "slowest_tools": [_run_ref(r, "duration_s") for r in slowest],
    }
    scores = report.get("scores") or []
    if scores:  # an eval's run: the set page shows each run's scores beside its outcome
        stats["scores"] = [
            {"scorer": s.get("scorer", ""), "value": s.get("value", "")} for s in scores[:TOP_ITEMS]
        ]
    return stats


def _run_ref(run: Mapping[str, Any], measure: str) -> dict[str, Any]:
    return {
        "name": run.get("name") or "(unnamed)",
        "call": run.get("result_call") or run.get("call"),
        "value": run[measure],
    }


def summary_columns(report: Mapping[str, Any]) -> dict[str, Any]:
    """The denormalised columns of a stored run, from its report."""
    runs = report.get("tool_runs") or []
    names = sorted({r.get("name") for r in runs if r.get("name")})
    cost = (report.get("totals") or {}).get("cost_usd") or {}
    return {
        "cost_usd": cost.get("actual"),
        "model": main_model(report)[:200],
        "tool_names": " ".join(names),
        "error_results": sum(1 for r in runs if r.get("is_error")),
        "stats": run_stats(report),
    }
