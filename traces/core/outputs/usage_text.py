"""The usage summary as plain text for a terminal: one row per period, then where the
money went (by kind, by bucket), the findings' dollars and the top what-if savings."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..formatting import count, money

KIND_LABELS = {"uncached_input": "input (uncached)", "cache_read": "cache reads",
               "cache_write": "cache writes", "output": "output"}  # fmt: skip
BUCKET_LABELS = {"prefix": "prefix (system, tools, first message)",
                 "tool_results": "tool results re-sent", "replayed_output": "replayed output",
                 "other": "other input"}  # fmt: skip
TOP = 5


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    """Columns padded to their widest cell: the first to the left, numbers to the right."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        padded = zip(cells, widths, strict=True)
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(padded))

    return [line(header), *(line(row) for row in rows)]


def _figures(entry: Mapping[str, Any]) -> list[str]:
    return [count(entry["input_tokens"]), count(entry["output_tokens"]),
            count(entry["cache_write_tokens"]), count(entry["cache_read_tokens"]),
            count(entry["total_tokens"]), money(entry["cost_usd"])]  # fmt: skip


def usage_text(summary: Mapping[str, Any]) -> str:
    header = [summary["period"].removesuffix("ly").replace("dai", "day"),
              "input", "output", "cache write", "cache read", "total tokens", "cost"]  # fmt: skip
    rows: list[list[str]] = []
    for entry in summary["periods"]:
        rows.append([entry["period"], *_figures(entry)])
        for part in entry.get("breakdown", []):
            rows.append([f"  {part['model'] or '(no model)'}", *_figures(part)])
    totals = summary["totals"]
    rows.append(["total", *_figures(totals)])
    lines = [f"Usage by {header[0]} ({summary['timezone']} time), "
             f"{totals['sessions']:,} sessions", "", *_table(header, rows)]  # fmt: skip
    if totals["unpriced_calls"]:
        lines.append(f"{totals['unpriced_calls']:,} calls have no price: their cost is not counted")
    if totals["cost_usd"] is not None:
        lines += ["", "Spend by kind of token:"]
        lines += [f"  {KIND_LABELS[k]}: {money(v)}" for k, v in summary["by_kind"].items()]
        lines += ["", "Input spend by what it carried:"]
        lines += [f"  {BUCKET_LABELS[b]}: {money(v)}" for b, v in summary["by_bucket"].items()]
    if summary["findings"]:
        lines += ["", "Spend by finding:"]
        for f in summary["findings"][:TOP]:
            lines.append(f"  {f['rule']}: {money(f['cost_usd'])} "
                         f"({f['count']:,} findings in {f['sessions']:,} sessions)")  # fmt: skip
    if summary["savings"]:
        lines += ["", "Top what-if savings:"]
        for s in summary["savings"][:TOP]:
            saved = money(s["usd_saved"]) if s["usd_saved"] is not None else (
                f"{s['tokens_saved']:,} input tokens")  # fmt: skip
            lines.append(f"  {s['lever']}: would have saved {saved} in {s['sessions']:,} sessions")
    return "\n".join(lines) + "\n"
