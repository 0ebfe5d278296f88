"""Comparisons as plain text for the terminal (`manage.py compare`)."""

from __future__ import annotations

from typing import Any

from ..analysis.accounting import BUCKETS
from ..formatting import mean_count
from ..formatting import money as _money


def _signed(value: Any, money: bool = False) -> str:
    if value is None:
        return "—"
    if money:
        return f"{'+' if value > 0 else '-' if value < 0 else '±'}{_money(abs(value))}"
    if isinstance(value, float) and not value.is_integer():  # a mean of counts
        return f"{'+' if value > 0 else '-'}{mean_count(abs(value))}"
    return f"{int(value):+,}"


def render_runs(result: dict[str, Any]) -> str:
    a, b, delta = result["a"]["totals"], result["b"]["totals"], result["delta"]
    out = [f"A  {result['a']['name']}", f"B  {result['b']['name']}", ""]
    out.append(f"{'':24}{'A':>12}{'B':>12}{'B - A':>12}")
    out.append(f"{'outcome':24}{a['outcome']:>12}{b['outcome']:>12}")
    for label, key in (
        ("calls", "calls"),
        ("failed calls", "failed_calls"),
        ("tool runs", "tool_runs"),
        ("input tokens", "input"),
    ):
        out.append(f"{label:24}{a[key]:>12,}{b[key]:>12,}{_signed(delta[key]):>12}")
    for name in BUCKETS:
        label = f"  {name.replace('_', ' ')}"
        out.append(
            f"{label:24}{a['buckets'][name]:>12,}{b['buckets'][name]:>12,}"
            f"{_signed(delta['buckets'][name]):>12}"
        )
    out.append(
        f"{'output tokens':24}{a['output']:>12,}{b['output']:>12,}{_signed(delta['output']):>12}"
    )
    out.append(
        f"{'cost':24}{_money(a['cost']):>12}{_money(b['cost']):>12}"
        f"{_signed(delta['cost'], money=True):>12}"
    )
    out.append(
        f"{'findings':24}{a['findings']:>12}{b['findings']:>12}{_signed(delta['findings']):>12}"
    )
    for side in ("a", "b"):
        unpriced = result[side].get("unpriced_models") or []
        if unpriced:
            out.append(f"{side.upper()}: cost unknown for {', '.join(unpriced)} (no price known)")
    out += ["", "calls by loop position (input tokens; B - A):"]
    for row in result["calls"]:
        left = f"#{row['a']['call']} {row['a']['input']:,}" if row["a"] else "—"
        right = f"#{row['b']['call']} {row['b']['input']:,}" if row["b"] else "—"
        parts = ", ".join(
            f"{name.replace('_', ' ')} {_signed(row['delta'][name])}" for name in BUCKETS
        )
        out.append(
            f"  loop {row['loop']} step {row['position']:<4} A {left:<16} B {right:<16} "
            f"{_signed(row['delta']['input'])} ({parts})"
        )
    findings = result["findings"]
    out += ["", "findings:"]
    for key, title in (("only_a", "only in A"), ("only_b", "only in B"), ("both", "in both")):
        rules = ", ".join(f"{f['rule']} ({f['a']}/{f['b']})" for f in findings[key]) or "none"
        out.append(f"  {title:10} {rules}")
    if result["tools"]:
        out += ["", "tools (runs, errors, result tokens; A / B):"]
        for tool in result["tools"]:
            sides = []
            for side in ("a", "b"):
                entry = tool[side]
                sides.append(
                    f"{entry['runs']} run, {entry['errors']} err, {entry['result_tokens']:,} tok"
                    if entry
                    else "—"
                )
            out.append(f"  {tool['name']}: {sides[0]} / {sides[1]}")
    divergence = result["divergence"]
    out.append("")
    if divergence is None:
        out.append("transcripts: identical (tool call ids aside)")
    else:
        out.append(f"transcripts first diverge at message {divergence['message']}:")
        out.extend(f"  {line}" for line in divergence["diff"])
    return "\n".join(out) + "\n"


def render_sets(result: dict[str, Any], name_a: str, name_b: str) -> str:
    runs = result["runs"]
    out = [f"A  {name_a} ({runs['a']} runs)", f"B  {name_b} ({runs['b']} runs)", ""]
    out.append(
        f"{'per run':16}{'mean A':>12}{'mean B':>12}{'B - A':>12}{'change':>9}  median A / B"
    )
    for metric in result["metrics"]:
        a, b = metric["a"], metric["b"]
        money = metric["metric"] == "cost"
        fmt = _money if money else mean_count
        change = "—" if metric["relative_mean"] is None else f"{metric['relative_mean']:+.1%}"
        out.append(
            f"{metric['label']:16}{fmt(a['mean']):>12}{fmt(b['mean']):>12}"
            f"{_signed(metric['delta_mean'], money=money):>12}{change:>9}  "
            f"{fmt(a['median'])} / {fmt(b['median'])}  (n {a['n']} / {b['n']})"
        )
    for title, rows in (
        ("outcome rates", result["outcomes"]),
        ("rule firing rates", result["rules"]),
    ):
        out += ["", f"{title}:"]
        for row in rows:
            rate_a = "—" if row["a"]["rate"] is None else f"{row['a']['rate']:.1%}"
            rate_b = "—" if row["b"]["rate"] is None else f"{row['b']['rate']:.1%}"
            delta = "—" if row["delta_rate"] is None else f"{row['delta_rate'] * 100:+.1f} pp"
            out.append(
                f"  {row['key']:30} A {rate_a:>6} ({row['a']['runs']}/{row['a']['of']})  "
                f"B {rate_b:>6} ({row['b']['runs']}/{row['b']['of']})  {delta}"
            )
        if not rows:
            out.append("  none")
    return "\n".join(out) + "\n"
