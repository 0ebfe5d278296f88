"""What the trace page shows of the diagram's window: its heading and its tool-run rows,
as data for the first paint and for a live page's redraw (diagram.json).

These depend on the window each reader chose (loop, start, size), so they are not in the
live "state" event every viewer shares: the page asks for its own window when that event
arrives (static/js/live_view.js), and static/js/live_figures.js fills the heading and
rebuilds the rows from this data, as text, the way the template draws them.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson
from django.utils.text import Truncator

from traces import models
from traces.core import formatting

PREVIEW_CHARS = 120


def window_heading(diagram: Any) -> str:
    """The diagram's window as its heading says it ("calls 1 to 60 of 214 in loop 3",
    with an en dash); empty without a diagram."""
    if diagram is None:
        return ""
    window = diagram.window
    total = formatting.count(window["total"])
    return f"calls {window['start']}–{window['end']} of {total} in loop {diagram.loop}"


def charts_note(diagram: Any, estimated: bool) -> str:
    """The charts' heading note: the loop they draw, and what hatched bars mean."""
    note = f"loop {diagram.loop}" if diagram is not None else ""
    return note + (" · hatched bars are tiktoken estimates" if estimated else "")


def what_if_note(loop: int | None) -> str:
    """The what-if panel's heading note: the loop its charts draw."""
    note = "each fix re-priced on this trace's own calls"
    return note + (f" · charts: loop {loop}" if loop else "")


def runs_note(tables: dict[str, Any]) -> str:
    """The tool-run table's heading note: how runs were paired, and which are listed."""
    trace: models.Trace = tables["trace"]
    shown = len(tables["tool_runs"])
    note = "paired by id"
    if tables["runs_not_by_id"]:
        note += ", or as marked where the format records no id"
    if tables["runs_windowed"] and trace.tool_runs_count > shown:
        of = f"{formatting.count(shown)} of {formatting.count(trace.tool_runs_count)}"
        note += f" · {of}: those of the calls shown"
    return note


def run_row(run: models.ToolRun) -> dict[str, Any]:
    """One tool run's row as data (after `annotate_runs`), with a signature that changes
    whenever anything the row shows does: a live page keeps a row whose signature it has."""
    transport = run.transport
    row = {
        "position": run.position,
        "name": run.name or "?",
        "batch_size": run.batch_size,
        "tool_call_id": run.tool_call_id,
        "transport": None
        if not transport
        else {
            "kind": str(transport.get("kind") or "").upper(),
            "title": f"Run on an MCP server: tools/call in session "
            f"{transport.get('session') or '?'}, JSON-RPC id {transport.get('rpc_id') or '?'}",
        },
        "call": run.call,
        "result_call": run.result_call,
        "status": run.status,
        "pairing_label": list(run.pairing_label) if run.pairing_label else None,
        "is_error": run.is_error,
        "error_inferred": None if run.is_error else run.error_inferred,
        "preview": Truncator(run.result_preview).chars(PREVIEW_CHARS),
    }
    row["signature"] = hashlib.sha1(orjson.dumps(row), usedforsecurity=False).hexdigest()[:16]
    return row


def sign_runs(runs: list[models.ToolRun]) -> list[dict[str, Any]]:
    """The rows of the shown runs; each run is given its `signature` for the template."""
    rows = [run_row(run) for run in runs]
    for run, row in zip(runs, rows, strict=True):
        run.signature = row["signature"]
    return rows


def window_figures(diagram: Any, tables: dict[str, Any]) -> dict[str, Any]:
    """The window's texts and tool-run rows: what the page prints and diagram.json sends."""
    return {
        "window_heading": window_heading(diagram),
        "runs_note": runs_note(tables),
        "charts_note": charts_note(diagram, tables["estimated"]),
        "what_if_note": what_if_note(diagram.loop if diagram is not None else None),
        "tool_run_rows": tables["tool_run_rows"],
    }
