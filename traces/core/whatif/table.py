"""The what-if section as a plain-text table, for `manage.py whatif` and the terminal."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .params import LIFETIME_LABELS
from .savings import money


def _tokens(value: Any, exact: bool = True) -> str:
    if value is None:
        return "—"
    return f"{'' if exact or not value else '≈'}{int(value):,}"


def _usd(value: Any) -> str:
    if value is None:
        return "unknown"
    if value < 0:
        return f"-{money(-value)}"
    return money(value) if value else "$0"


def _percent(value: Any) -> str:
    return "—" if value is None else f"{value:.1f}%"


def _seconds(value: Any) -> str:
    return "—" if value is None else f"{value:,.1f} s"


def render_table(name: str, what_if: Mapping[str, Any]) -> str:
    params = what_if.get("parameters") or {}
    caps = ", ".join(f"{tool}={cap}" for tool, cap in (params.get("caps") or {}).items())
    clear = params.get("clear_after")
    lifetime = LIFETIME_LABELS.get(params.get("cache_lifetime", "5m"), "5-minute")
    lines = [
        f"{name}: what if",
        f"  caps {caps or 'none'} · clear after {clear if clear else 'never'} · "
        f"{lifetime} cache lifetime",
        "",
        f"  {'scenario':<38} {'tokens saved':>14} {'dollars saved':>14} {'%':>7}"
        f" {'time saved':>11}",
    ]
    for scenario in what_if.get("scenarios") or []:
        exact = scenario.get("exact", True)
        tokens = None if scenario["id"] == "prompt-cache" else scenario.get("tokens_saved")
        dollars = "—" if scenario["id"] == "concurrent-tools" else _usd(scenario.get("usd_saved"))
        lines.append(
            f"  {scenario['title']:<38} {_tokens(tokens, exact):>14}"
            f" {dollars:>14} {_percent(scenario.get('percent_usd')):>7}"
            f" {_seconds(scenario.get('seconds_saved')):>11}"
        )
        lines.extend(f"    {detail}" for detail in _details(scenario))
        lines.extend(f"    note: {note}" for note in scenario.get("notes") or [])
    top = what_if.get("top_savings") or []
    lines += ["", "  Largest savings:" if top else "  No fix would have saved anything computable."]
    lines += [f"  {n}. {entry['text']}" for n, entry in enumerate(top, start=1)]
    return "\n".join(lines) + "\n"


def _details(scenario: Mapping[str, Any]) -> list[str]:
    kind = scenario["id"]
    items = scenario.get("items") or []
    if kind == "cap-results":
        return [
            f"{item['tool']}: cap {item['cap'] if item['cap'] is not None else 'none'}"
            f" (median {item['median_result']:,}, largest {item['largest_result']:,}):"
            f" {_tokens(item['tokens_before'], item['exact'])} → "
            f"{_tokens(item['tokens_after'], item['exact'])} tokens, {_usd(item['usd_saved'])}"
            for item in items
        ]
    if kind == "batch-serial-calls":
        return [
            f"call {item['call']} ({', '.join(item['tools'])}) batched into call"
            f" {item['batched_into']}: {item['input_tokens']:,} tokens,"
            f" {_usd(item['usd_saved'])}, {_seconds(item['model_seconds'])}"
            for item in items
        ]
    if kind == "concurrent-tools":
        return [
            f"call {item['call']} ({len(item['tools'])} tools): "
            + (
                f"{_seconds(item['wall_s'])} → {_seconds(item['slowest_s'])}"
                if item["timings"] == "recorded"
                else "timings missing"
            )
            for item in items
        ]
    if kind == "prompt-cache":
        costs = scenario.get("prefix_cached_usd") or {}
        return [
            f"actual {_usd(scenario.get('actual_usd'))} · no caching"
            f" {_usd(scenario.get('uncached_usd'))} · prefix cached, 5-minute"
            f" {_usd(costs.get('5m'))}, 1-hour {_usd(costs.get('1h'))}",
            *(
                f"call {r['call']} writes the prefix again: {r['gap']} after call {r['after_call']}"
                for r in scenario.get("rewrites") or []
            ),
        ]
    if kind == "clear-old-results":
        return [
            f"{item['tool']} {item['id']} ({_tokens(item['result_tokens'], item['exact'])}"
            f" tokens, from call {item['result_call']}): cleared from call"
            f" {item['cleared_from_call']} in {item['requests_cleared']} request"
            f"{'s' if item['requests_cleared'] != 1 else ''},"
            f" {_tokens(item['tokens_saved'], item['exact'])} tokens"
            for item in items[:10]
        ] + ([f"… {len(items) - 10} more results"] if len(items) > 10 else [])
    if kind == "unused-tools":
        return [
            f"{item['tool']}: ≈{item['tokens']:,} tokens × {item['calls_carrying']} calls"
            for item in items
        ]
    return []
