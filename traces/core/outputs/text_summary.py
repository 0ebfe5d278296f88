"""A plain-text summary of a report, for the terminal."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..formatting import count, plural


def render_summary(name: str, report: dict[str, Any]) -> str:
    totals = report["totals"]
    lines = report["lines"]
    total_in = totals["input_tokens"] + totals["cache_read_tokens"] + totals["cache_write_tokens"]
    out = [
        f"{name}  [{report['format']}]  {report['detection']}",
        f"  outcome   {report['outcome']['text']}",
        f"  calls     {count(totals['calls'])} in {plural(totals['loops'], 'loop')}, "
        f"{count(totals['failed_calls'])} failed",
        f"  tools     {plural(totals['tool_runs'], 'run')}"
        + "".join(
            f", {status} {count(number)}"
            for status, number in _count(r["status"] for r in report["tool_runs"]).items()
        ),
        f"  tokens    {total_in:,} in (cache read {totals['cache_read_tokens']:,}, "
        f"write {totals['cache_write_tokens']:,}), {totals['output_tokens']:,} out",
        f"  lines     {count(lines['total'])} read, {count(len(lines['errors']))} unreadable",
    ]
    for error in lines["errors"][:10]:
        out.append(f"    line {error['line']}: {error['message']}")
    if len(lines["errors"]) > 10:
        out.append(f"    … {count(len(lines['errors']) - 10)} more")
    savings = (report.get("what_if") or {}).get("top_savings") or []
    for number, entry in enumerate(savings, start=1):
        label = "what if " if number == 1 else ""
        out.append(f"  {label:<9} {number}. {entry['text']}")
    for score in report.get("scores", [])[:10]:
        out.append(f"  score     sample {score['sample']}, {score['scorer']}: {score['value']}")
    for note in report.get("notes", []):
        out.append(f"  note      {note}")
    return "\n".join(out) + "\n"


def _count(values: Iterable[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    return counts
