"""Two runs (or two sets of runs) side by side: the arithmetic behind /compare/ and
`manage.py compare`.

A run is compared from its JSON report (`build_report`) and the text of its main loop's
transcript (for where the two first diverge). Calls are aligned by loop position: call k
of loop i in A beside call k of loop i in B, because two runs of one task differ in ids,
timings and often in length, but not in the order their loop advances. Differences are
always B minus A; a call present on one side only counts as zero on the other, so the
per-call differences add up to the totals' difference.
"""

from __future__ import annotations

import difflib
import json
import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from traces.core.records import dataclass, field

from ..analysis.accounting import BUCKETS
from ..model import Message, Trace
from .runstats import rule_counts, tool_totals
from .summary import OUTCOME_LABELS, main_loop

DIFF_CHARS = 20_000
"""Each side's divergent message is cut here before diffing (difflib is quadratic)."""


@dataclass(frozen=True, slots=True)
class Side:
    """What comparing needs of one run: its name, report and main-loop transcript text."""

    name: str
    report: Mapping[str, Any]
    transcript: Sequence[str] = field(default_factory=tuple)


# -- transcripts -----------------------------------------------------------------------------
def message_text(message: Message) -> str:
    """A message as plain text for diffing. Tool call ids are left out: every run draws
    new ones, and they would make two identical steps look different."""
    parts: list[str] = []
    for block in message.blocks:
        if block.kind == "text":
            parts.append(block.text)
        elif block.kind == "tool_use":
            arguments = json.dumps(block.input, ensure_ascii=False, sort_keys=True, default=str)
            parts.append(f"[tool call] {block.name or '?'} {arguments}")
        elif block.kind == "tool_result":
            parts.append(f"[tool result{' error' if block.is_error else ''}] {block.text}")
        elif block.kind in ("thinking", "redacted_thinking"):
            parts.append(f"[thinking] {block.text}")
        else:
            parts.append(f"[{block.kind}] {block.text}".rstrip())
    return f"{message.role}: " + "\n".join(parts)


def loop_messages(trace: Trace, loop_index: int | None = None) -> list[Message]:
    """The transcript of a loop (the main loop by default): its last request's messages,
    rebuilt from the delta chain, then that call's response."""
    loop = main_loop(trace) if loop_index is None else trace.loops[loop_index - 1]
    if loop is None or not loop.calls:
        return []
    last = trace.calls[loop.calls[-1] - 1]
    return [*call_messages(trace, last.index), *([last.response] if last.response else [])]


def call_messages(trace: Trace, index: int) -> list[Message]:
    """A call's request messages, following `base_call` back through its loop."""
    chain = []
    current: int | None = index
    seen: set[int] = set()
    while current is not None and current not in seen:
        seen.add(current)
        call = trace.calls[current - 1]
        chain.append(call)
        current = call.base_call if call.prefix_len > 0 else None
    messages: list[Message] = []
    for call in reversed(chain):
        messages = messages[: call.prefix_len] + list(call.appended)
    return messages


def transcript_of(trace: Trace) -> list[str]:
    return [message_text(m) for m in loop_messages(trace)]


def first_divergence(a: Sequence[str], b: Sequence[str]) -> dict[str, Any] | None:
    """The first message that differs (1-based), both texts and a unified diff; None when
    the transcripts are identical."""
    for position in range(max(len(a), len(b))):
        text_a = a[position] if position < len(a) else None
        text_b = b[position] if position < len(b) else None
        if text_a == text_b:
            continue
        lines_a = (text_a or "")[:DIFF_CHARS].splitlines()
        lines_b = (text_b or "")[:DIFF_CHARS].splitlines()
        diff = list(
            difflib.unified_diff(lines_a, lines_b, fromfile="A", tofile="B", lineterm="", n=2)
        )
        return {
            "message": position + 1,
            "a": text_a,
            "b": text_b,
            "diff": diff,
            "truncated": max(len(text_a or ""), len(text_b or "")) > DIFF_CHARS,
        }
    return None


# -- two runs ---------------------------------------------------------------------------------
def _minus(b: float | None, a: float | None, digits: int = 6) -> float | None:
    if a is None or b is None:
        return None
    return round(b - a, digits)


def _relative(b: float | None, a: float | None) -> float | None:
    """(B - A) / A as a fraction, None when A is zero or unknown."""
    if a in (None, 0) or b is None:
        return None
    return round((b - a) / a, 6)


def _call_side(call: Mapping[str, Any]) -> dict[str, Any]:
    buckets = {name: int((call.get("buckets") or {}).get(name, 0)) for name in BUCKETS}
    return {
        "call": call["index"],
        "buckets": buckets,
        "input": sum(buckets.values()),
        "output": call.get("output_tokens") or 0,
        "cost": call.get("cost_usd"),
        "status": call.get("status"),
        "stop_reason": call.get("stop_reason"),
        "tool_calls": len(call.get("tool_call_ids") or []),
    }


_ZERO_CALL: dict[str, Any] = {
    "buckets": dict.fromkeys(BUCKETS, 0),
    "input": 0,
    "output": 0,
    "cost": 0.0,
}


def aligned_calls(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Rows of (loop, position): each side's call there (or None) and B minus A."""
    calls_a, calls_b = a.get("calls") or [], b.get("calls") or []
    loops_a = [loop["calls"] for loop in a.get("loops") or []]
    loops_b = [loop["calls"] for loop in b.get("loops") or []]
    rows = []
    for loop in range(max(len(loops_a), len(loops_b))):
        in_a = loops_a[loop] if loop < len(loops_a) else []
        in_b = loops_b[loop] if loop < len(loops_b) else []
        for position in range(max(len(in_a), len(in_b))):
            side_a = _call_side(calls_a[in_a[position] - 1]) if position < len(in_a) else None
            side_b = _call_side(calls_b[in_b[position] - 1]) if position < len(in_b) else None
            left, right = side_a or _ZERO_CALL, side_b or _ZERO_CALL
            delta = {name: right["buckets"][name] - left["buckets"][name] for name in BUCKETS}
            delta["input"] = right["input"] - left["input"]
            delta["output"] = right["output"] - left["output"]
            delta["cost"] = _minus(right["cost"], left["cost"])
            rows.append(
                {
                    "loop": loop + 1,
                    "position": position + 1,
                    "a": side_a,
                    "b": side_b,
                    "delta": delta,
                }
            )
    return rows


def run_totals(report: Mapping[str, Any]) -> dict[str, Any]:
    totals = report.get("totals") or {}
    buckets = {name: int((totals.get("buckets") or {}).get(name, 0)) for name in BUCKETS}
    cost = totals.get("cost_usd") or {}
    return {
        "outcome": (report.get("outcome") or {}).get("kind", "unknown"),
        "calls": totals.get("calls", 0),
        "failed_calls": totals.get("failed_calls", 0),
        "loops": totals.get("loops", 0),
        "tool_runs": totals.get("tool_runs", 0),
        "buckets": buckets,
        "input": sum(buckets.values()),
        "output": totals.get("output_tokens", 0),
        "cost": cost.get("actual"),
        "cost_uncached": cost.get("uncached"),
        "findings": len(report.get("findings") or []),
    }


NUMERIC_TOTALS = ("calls", "failed_calls", "loops", "tool_runs", "input", "output", "findings")


def totals_delta(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    delta: dict[str, Any] = {name: b[name] - a[name] for name in NUMERIC_TOTALS}
    delta["buckets"] = {name: b["buckets"][name] - a["buckets"][name] for name in BUCKETS}
    delta["cost"] = _minus(b["cost"], a["cost"])
    delta["cost_uncached"] = _minus(b["cost_uncached"], a["cost_uncached"])
    delta["relative"] = {
        name: _relative(b[name], a[name]) for name in ("calls", "input", "output", "cost")
    }
    return delta


def findings_split(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Rules that fired only in A, only in B, and in both, with how often in each."""
    counts_a = _by_rule(a.get("findings") or [])
    counts_b = _by_rule(b.get("findings") or [])
    out: dict[str, list[dict[str, Any]]] = {"only_a": [], "only_b": [], "both": []}
    for rule in sorted(set(counts_a) | set(counts_b)):
        severity = (counts_a.get(rule) or counts_b[rule])[0]
        row = {
            "rule": rule,
            "severity": severity,
            "a": counts_a.get(rule, ("", 0))[1],
            "b": counts_b.get(rule, ("", 0))[1],
        }
        key = "both" if row["a"] and row["b"] else ("only_a" if row["a"] else "only_b")
        out[key].append(row)
    return out


def _by_rule(findings: Iterable[Mapping[str, Any]]) -> dict[str, tuple[str, int]]:
    out: dict[str, tuple[str, int]] = {}
    for (rule, severity), count in rule_counts(findings).items():
        previous = out.get(rule, (severity, 0))
        out[rule] = (previous[0], previous[1] + count)
    return out


def tools_side_by_side(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per tool name: runs, error results, error rate and result tokens on each side."""
    tools_a = tool_totals(a.get("tool_runs") or [])
    tools_b = tool_totals(b.get("tool_runs") or [])
    rows = []
    for name in sorted(set(tools_a) | set(tools_b)):
        sides: dict[str, dict[str, Any] | None] = {}
        for key, tools in (("a", tools_a), ("b", tools_b)):
            entry = tools.get(name)
            if entry is None:
                sides[key] = None
                continue
            sides[key] = {
                "runs": entry["runs"],
                "errors": entry["errors"],
                "error_rate": round(entry["errors"] / entry["runs"], 6),
                "result_tokens": entry["result_tokens"],
                "mean_result_tokens": (
                    round(entry["result_tokens"] / entry["sized"], 1) if entry["sized"] else None
                ),
            }
        runs_a = sides["a"]["runs"] if sides["a"] else 0
        runs_b = sides["b"]["runs"] if sides["b"] else 0
        tokens_a = sides["a"]["result_tokens"] if sides["a"] else 0
        tokens_b = sides["b"]["result_tokens"] if sides["b"] else 0
        rows.append(
            {
                "name": name,
                **sides,
                "delta": {"runs": runs_b - runs_a, "result_tokens": tokens_b - tokens_a},
            }
        )
    return rows


def _unpriced(report: Mapping[str, Any]) -> list[str]:
    """The models of a run no price knew (their calls' cost is unknown)."""
    return [str(m) for m in (report.get("accounting") or {}).get("unpriced_models") or []]


def compare_runs(a: Side, b: Side) -> dict[str, Any]:
    """Everything /compare/<a>/<b>/ and `manage.py compare --json` show."""
    totals_a, totals_b = run_totals(a.report), run_totals(b.report)
    return {
        "schema": "loop-inspector/compare/v1",
        "a": {"name": a.name, "totals": totals_a, "unpriced_models": _unpriced(a.report)},
        "b": {"name": b.name, "totals": totals_b, "unpriced_models": _unpriced(b.report)},
        "delta": totals_delta(totals_a, totals_b),
        "calls": aligned_calls(a.report, b.report),
        "findings": findings_split(a.report, b.report),
        "tools": tools_side_by_side(a.report, b.report),
        "divergence": first_divergence(a.transcript, b.transcript),
    }


# -- two sets ---------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class RunPoint:
    """One run of a set, as set comparisons need it (from the stored summary columns)."""

    outcome: str
    calls: int
    input_tokens: int
    output_tokens: int
    cost: float | None
    rules: frozenset[str] = frozenset()


SET_METRICS = (
    ("cost", "Cost (USD)"),
    ("calls", "Calls"),
    ("input_tokens", "Input tokens"),
    ("output_tokens", "Output tokens"),
)


def _stat(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"n": 0, "mean": None, "median": None}
    return {
        "n": len(values),
        "mean": round(statistics.fmean(values), 6),
        "median": round(float(statistics.median(values)), 6),
    }


def compare_sets(a: Sequence[RunPoint], b: Sequence[RunPoint]) -> dict[str, Any]:
    """Outcome rates, mean and median cost, calls and tokens per run, and each rule's
    firing rate (share of runs it fired in), each with B minus A and the runs behind it.
    Costs are averaged over the runs whose cost is known (`n` says how many)."""
    metrics = []
    for key, label in SET_METRICS:
        values_a = [getattr(p, key) for p in a if getattr(p, key) is not None]
        values_b = [getattr(p, key) for p in b if getattr(p, key) is not None]
        stat_a, stat_b = _stat(values_a), _stat(values_b)
        metrics.append(
            {
                "metric": key,
                "label": label,
                "a": stat_a,
                "b": stat_b,
                "delta_mean": _minus(stat_b["mean"], stat_a["mean"]),
                "delta_median": _minus(stat_b["median"], stat_a["median"]),
                "relative_mean": _relative(stat_b["mean"], stat_a["mean"]),
            }
        )
    outcomes = []
    kinds = sorted(
        {p.outcome for p in [*a, *b]},
        key=lambda k: list(OUTCOME_LABELS).index(k) if k in OUTCOME_LABELS else 99,
    )
    for kind in kinds:
        outcomes.append(
            _rate_row(kind, [p.outcome == kind for p in a], [p.outcome == kind for p in b])
        )
    rules = [
        _rate_row(rule, [rule in p.rules for p in a], [rule in p.rules for p in b])
        for rule in sorted({rule for p in [*a, *b] for rule in p.rules})
    ]
    return {
        "schema": "loop-inspector/compare-sets/v1",
        "runs": {"a": len(a), "b": len(b)},
        "metrics": metrics,
        "outcomes": outcomes,
        "rules": rules,
    }


def _rate_row(key: str, hits_a: list[bool], hits_b: list[bool]) -> dict[str, Any]:
    rate_a = round(sum(hits_a) / len(hits_a), 6) if hits_a else None
    rate_b = round(sum(hits_b) / len(hits_b), 6) if hits_b else None
    return {
        "key": key,
        "a": {"runs": sum(hits_a), "of": len(hits_a), "rate": rate_a},
        "b": {"runs": sum(hits_b), "of": len(hits_b), "rate": rate_b},
        "delta_rate": _minus(rate_b, rate_a),
        "relative": _relative(rate_b, rate_a),
    }
