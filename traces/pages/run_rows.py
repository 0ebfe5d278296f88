"""The tool-run rows the trace and call pages share, with what the report adds to them.

A `ToolRun` row holds the pairing; how it was paired and where the tool ran are kept in
the stored report only, so both pages read them from there through `annotate_runs`.
"""

from __future__ import annotations

from collections.abc import Callable
from types import MappingProxyType
from typing import Any

from traces import models
from traces.core.report_types import StoredReport, ToolRunEntry


def report_runs(trace: models.Trace) -> list[ToolRunEntry]:
    report: StoredReport = trace.report
    runs = report.get("tool_runs")
    return runs if isinstance(runs, list) else []


def annotate_runs(
    runs: list[models.ToolRun],
    report: StoredReport,
    entry_at: Callable[[int], Any] | None = None,
) -> None:
    """Give each row the report's pairing method (and its label when not by call id) and
    where the tool ran (an MCP server); rows and report entries share their order
    (position is 1-based). `entry_at(position)` gives the entries when the report holds
    none (the trace page of a long trace reads them from its window's parts)."""
    listed = report.get("tool_runs")
    entries: list[Any] = listed if isinstance(listed, list) else []
    for run in runs:
        if entry_at is not None:
            entry = entry_at(run.position)
        else:
            entry = entries[run.position - 1] if 0 < run.position <= len(entries) else {}
        entry = entry if isinstance(entry, dict) else {}
        run.pairing = entry.get("pairing") or "id"
        run.pairing_label = PAIRING_LABELS.get(run.pairing)
        run.transport = entry.get("transport") if isinstance(entry.get("transport"), dict) else None


PAIRING_LABELS = MappingProxyType(
    {
        "name-order": (
            "by name and order",
            "The format records no call ids: paired by tool name, in order, within a turn",
        ),
        "name-input": (
            "by name and arguments",
            "A tool span with no call id, matched to the call with the same tool name "
            "and arguments",
        ),
        "text": (
            "by position in text",
            "Calls written as text (Function Name / Function Input / "
            "Function Output), paired by position",
        ),
    }
)
"""How a tool run was paired when not by call id: a short label and its explanation."""
