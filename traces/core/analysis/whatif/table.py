"""The what-if section as a plain-text table, for `manage.py whatif` and the terminal."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...formatting import count, duration, money, percent
from .params import LIFETIME_LABELS


def _tokens(value: Any, exact: bool = True) -> str:
    return count(value, exact=exact)


def _percent(value: Any) -> str:
    return percent(value, scale=1)  # the report keeps this one in percent already


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
        dollars = "—" if scenario["id"] == "concurrent-tools" else money(scenario.get("usd_saved"))
        lines.append(
            f"  {scenario['title']:<38} {_tokens(tokens, exact):>14}"
            f" {dollars:>14} {_percent(scenario.get('percent_usd')):>7}"
            f" {duration(scenario.get('seconds_saved')):>11}"
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
            f"{_tokens(item['tokens_after'], item['exact'])} tokens, {money(item['usd_saved'])}"
            for item in items
        ]
    if kind == "batch-serial-calls":
        return [
            f"call {item['call']} ({', '.join(item['tools'])}) batched into call"
            f" {item['batched_into']}: {item['input_tokens']:,} tokens,"
            f" {money(item['usd_saved'])}, {duration(item['model_seconds'])}"
            for item in items
        ]
    if kind == "concurrent-tools":
        return [
            f"call {item['call']} ({len(item['tools'])} tools): "
            + (
                f"{duration(item['wall_s'])} → {duration(item['slowest_s'])}"
                if item["timings"] == "recorded"
                else "timings missing"
            )
            for item in items
        ]
    if kind == "prompt-cache":
        costs = scenario.get("prefix_cached_usd") or {}
        return [
            f"actual {money(scenario.get('actual_usd'))} · no caching"
            f" {money(scenario.get('uncached_usd'))} · prefix cached, 5-minute"
            f" {money(costs.get('5m'))}, 1-hour {money(costs.get('1h'))}",
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
