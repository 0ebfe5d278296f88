"""Place MCP traffic on tool runs: a `tools/call` the file recorded is where a tool really ran.

Request logs record more than model calls: MCP JSON-RPC posts, telemetry exports, token
requests (`HttpTraffic`). They are all kept and shown; an MCP `tools/call` is also placed
on the tool run that asked for it (the latest run of that tool, by name and arguments,
with no execution yet), which it marks as run over MCP, with its `isError`.
"""

from __future__ import annotations

from traces.core.records import replace

from ..model import HttpTraffic, ToolRun
from .pairing import RESULT_TEXT_CHARS, ToolRuns

SEARCH_RUNS = 500
"""How many of the latest runs are searched for the one a `tools/call` executes."""


def place_traffic(runs: ToolRuns, traffic: HttpTraffic, ordinal: int) -> ToolRun | None:
    """Mark the run this traffic (the file's `ordinal`-th) executed; returns it, if any."""
    if traffic.tool_name is None:
        return None
    position = _run_for(runs.runs, traffic)
    if position is None:
        return None
    run = runs.runs[position]
    transport = {
        "kind": traffic.kind,
        "traffic": ordinal,
        "line": traffic.line,
        "session": traffic.session,
        "rpc_id": traffic.rpc_id,
        "is_error": bool(traffic.is_error),
    }
    run = replace(run, transport=transport, is_error=run.is_error or bool(traffic.is_error))
    if run.status == "pending" and traffic.result_text is not None:
        # The server's answer is the result, even if no later request carries it.
        run = replace(run, status="paired", result_text=traffic.result_text[:RESULT_TEXT_CHARS])
    runs.runs[position] = run
    return run


def _run_for(runs: list[ToolRun], traffic: HttpTraffic) -> int | None:
    """The most recent model-issued run of this tool not yet matched to an execution:
    one with the arguments sent, else one still waiting for its result."""
    fallback: int | None = None
    for position in range(len(runs) - 1, max(-1, len(runs) - SEARCH_RUNS), -1):
        run = runs[position]
        if run.name != traffic.tool_name or run.call is None or run.transport is not None:
            continue
        if run.status not in ("pending", "paired"):
            continue
        if run.input == traffic.tool_input:
            return position
        if fallback is None and run.status == "pending":
            fallback = position  # arguments re-encoded by the client: still waiting
    return fallback
