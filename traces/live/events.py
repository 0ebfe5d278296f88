"""What changed in a live trace, stored as rows and told to viewers as numbered events.

After each batch the new calls, changed tool runs and line errors are written (by the
same row functions as an upload) and become `LiveEvent` rows, broadcast on commit; a
viewer that connects late reads the backlog from those rows. Events are data, never
markup: a call, tool run or finding in the report's own shapes (core.report_types), from
which the page's script builds the same rows as the page's templates.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import orjson
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from traces import models
from traces.conf import inspector_settings
from traces.core.analysis.ingest import TraceSession
from traces.core.analysis.pricing import PriceTable
from traces.core.analysis.rebuild import TraceBuilder
from traces.core.model import Call, ToolRun
from traces.core.model import Trace as CoreTrace
from traces.core.outputs.call_row import call_row_marks, usage_cost
from traces.core.outputs.report import call_facts, tool_run_facts
from traces.core.outputs.summary import outcome_of
from traces.core.report_types import (
    LiveCallAccountEntry,
    LiveCallEntry,
    LiveFindingEntry,
    LiveToolRunEntry,
)
from traces.live.broadcast import broadcast, may_listen
from traces.selectors.figures import trace_figures
from traces.services.prices import price_table_for
from traces.storage.row_writer import insert_rows
from traces.storage.rows import store_calls, store_line_errors, store_tool_runs

LiveEventData = (
    LiveCallEntry | LiveCallAccountEntry | LiveToolRunEntry | LiveFindingEntry | dict[str, Any]
)
"""An event's `data`: a call (and later its accounting), tool run or finding in the
report's own shapes (core.report_types), or the trace's state or held messages."""


@dataclass(frozen=True, slots=True)
class Marks:
    """How far the stored rows go: calls and line errors are appended, runs replaced."""

    calls: int = 0
    runs: tuple[ToolRun, ...] = ()
    errors: int = 0

    @classmethod
    def of(cls, session: TraceSession) -> Marks:
        builder = session.builder
        return cls(len(builder.calls), tuple(builder.tool_runs), len(builder.line_errors))


def store_changes(
    trace: models.Trace,
    session: TraceSession | None,
    before: Marks,
    core: CoreTrace,
) -> list[tuple[str, LiveEventData]]:
    """Write the calls, tool runs and line errors that are new since `before`; the events
    that tell viewers about them (data: the report's shapes, core.report_types); and the
    trace's counts (the report follows later)."""
    new_calls = core.calls[before.calls :]
    changed_runs = [
        (position, run)
        for position, run in enumerate(core.tool_runs, start=1)
        if position > len(before.runs)
        or (before.runs[position - 1] is not run and before.runs[position - 1] != run)
    ]
    errors = session.builder.line_errors[before.errors :] if session is not None else []
    store_calls(trace, new_calls)
    if changed_runs:
        # Positions past the stored ones are new rows; only earlier ones are replaced.
        replace = changed_runs[0][0] <= len(before.runs)
        store_tool_runs(trace, changed_runs, replace=replace)
    if errors:
        store_line_errors(trace, errors)
    for name, value in live_counts(core, trace.lines_total).items():
        setattr(trace, name, value)
    events: list[tuple[str, LiveEventData]] = []
    if new_calls:
        names = _tool_names(changed_runs)
        url = _call_url(trace)
        prices = price_table_for(trace.project_id)
        events += [
            ("call", live_call(call, names.get(call.index, []), url, prices)) for call in new_calls
        ]
    events += [("tool_run", live_tool_run(position, run)) for position, run in changed_runs]
    return events


def live_counts(core: CoreTrace, lines_total: int) -> dict[str, Any]:
    """The Trace row's counts and token sums, without the (later) report."""
    reported = [c.usage for c in core.calls if c.usage is not None]
    starts = [c.started_at for c in core.calls if c.started_at is not None]
    ends = [c.ended_at for c in core.calls if c.ended_at is not None]
    outcome = outcome_of(core)
    return {
        "lines_total": lines_total,
        "records_ingested": core.records_ingested,
        "calls_count": len(core.calls),
        "failed_calls": sum(1 for c in core.calls if c.status == "error"),
        "loops_count": len(core.loops),
        "tool_runs_count": len(core.tool_runs),
        "line_errors_count": len(core.line_errors),
        "input_tokens": sum(u.input_tokens for u in reported),
        "output_tokens": sum(u.output_tokens for u in reported),
        "cache_read_tokens": sum(u.cache_read_tokens for u in reported),
        "cache_write_tokens": sum(u.cache_write_tokens for u in reported),
        "started_at": min(starts) if starts else None,
        "ended_at": max(ends) if ends else None,
        "outcome_kind": outcome.kind,
        "outcome_text": outcome.text[:500],
    }


def save_events(trace: models.Trace, events: list[tuple[str, LiveEventData]]) -> None:
    """Number the events after the trace's last, store them, broadcast them on commit."""
    if not events:
        return
    first = trace.events_seq + 1
    trace_id = trace.pk
    rows = [(trace_id, seq, kind, payload) for seq, (kind, payload) in enumerate(events, first)]
    # Plain SQL (traces.storage.row_writer): the same values as bulk_create, without a model
    # instance and the ORM's preparation of each.
    insert_rows(models.LiveEvent, ["trace_id", "seq", "type", "payload"], rows)
    trace.events_seq = first + len(rows) - 1

    def send() -> None:
        if not may_listen(trace_id):
            return
        # Encoded once here, not once per viewer; one group send per batch (a layer
        # that crosses processes cuts it in a few, traces.live.broadcast).
        texts = [encode_event(seq, kind, payload) for _, seq, kind, payload in rows]
        broadcast(trace_id, first, texts)

    transaction.on_commit(send)


def event_message(seq: int, kind: str, payload: LiveEventData) -> dict[str, Any]:
    """The JSON a viewer receives: `{"type", "seq", "data"}`."""
    return {"type": kind, "seq": seq, "data": payload}


def encode_event(seq: int, kind: str, payload: LiveEventData) -> str:
    return orjson.dumps(event_message(seq, kind, payload)).decode()


def events_after(*, trace_id: Any, after: int, limit: int = 5000) -> list[dict[str, Any]]:
    """Stored events of a trace with seq > after, in order (a viewer's backlog)."""
    rows = models.LiveEvent.objects.filter(trace_id=trace_id, seq__gt=after).order_by("seq")
    return [event_message(r.seq, r.type, r.payload) for r in rows[:limit]]


def encoded_events_after(*, trace_id: Any, after: int, limit: int = 5000) -> list[tuple]:
    """The same as `events_after`, as broadcast: `(seq, JSON text)` pairs."""
    rows = models.LiveEvent.objects.filter(trace_id=trace_id, seq__gt=after).order_by("seq")
    return [(r.seq, encode_event(r.seq, r.type, r.payload)) for r in rows[:limit]]


def _tool_names(changed_runs: list[tuple[int, ToolRun]]) -> dict[int, list[str]]:
    names: dict[int, list[str]] = {}
    for _, run in changed_runs:
        if run.call is not None:
            names.setdefault(run.call, []).append(run.name or "?")
    return names


_INDEX = 987654321


def _call_url(trace: models.Trace) -> tuple[str, str]:
    """A call page's URL around its index (reversed once per batch, not once per call)."""
    before, _, after = reverse("traces:call", args=[trace.pk, _INDEX]).partition(str(_INDEX))
    return before, after


def live_call(
    call: Call, tool_names: list[str], url: tuple[str, str], prices: PriceTable
) -> LiveCallEntry:
    """A new call's event: the report's facts of the call, its row's marks as far as they
    are known before the report (traces.core.outputs.call_row), and its page. The page's
    script builds the row from it (static/js/live_rows.js), as the template does."""
    marks = call_row_marks(
        usage_reported=call.usage is not None,
        tool_names=tool_names,
        account=None,
        cost_usd=usage_cost(call, prices),
    )
    return {
        **call_facts(call),
        **marks,
        "base_call": call.base_call,
        "url": f"{url[0]}{call.index}{url[1]}",
    }


def live_tool_run(position: int, run: ToolRun) -> LiveToolRunEntry:
    """A new or changed tool run's event: the report's facts of the run, and its place."""
    return {**tool_run_facts(run), "position": position}


def account_events(
    previous: dict[str, Any], report: dict[str, Any]
) -> list[tuple[str, LiveEventData]]:
    """The marks of the calls that this report is the first to cover: their cost and,
    for a call that reported no usage, its estimated input, from the report's accounting
    (computed as for the page's first paint), for the rows made before it."""
    covered = len(previous.get("calls") or [])
    events: list[tuple[str, LiveEventData]] = []
    for entry in report.get("calls", [])[covered:]:
        marks = call_row_marks(
            usage_reported=entry["input_tokens"] is not None, tool_names=(), account=entry
        )
        account: LiveCallAccountEntry = {
            "index": entry["index"],
            "cost_usd": marks["cost_usd"],
            "estimated_input": marks["estimated_input"],
        }
        events.append(("call_account", account))
    return events


def _finding_key(finding: dict[str, Any]) -> tuple:
    return (finding["rule"], finding.get("call"), finding.get("tool_call_id"), finding.get("loop"))


def finding_events(
    previous: dict[str, Any], report: dict[str, Any]
) -> list[tuple[str, LiveEventData]]:
    """Findings the previous report did not have, or had in other words (a finding is
    known by its rule, call, tool call and loop; its message may change as the trace
    grows, "re-sent in 3 requests"), then those it had and this one has not, marked
    `"resolved": true` (LiveFindingEntry). A viewer replaces a finding it shows by the
    one with its key."""
    known = {_finding_key(f): f for f in previous.get("findings", [])}
    current = {_finding_key(f) for f in report.get("findings", [])}
    events: list[tuple[str, LiveEventData]] = [
        ("finding", f) for f in report.get("findings", []) if known.get(_finding_key(f)) != f
    ]
    events += [
        ("finding", {**f, "resolved": True}) for key, f in known.items() if key not in current
    ]
    return events


def held_payload(held: list[dict[str, Any]]) -> dict[str, Any]:
    """The `held` event: the last message of each loop that the adapter still holds,
    shown at once as possibly still growing; a viewer settles it when its loop's next
    line proves it complete, after LIVE_SETTLE_SECONDS without a line, or at close."""
    return {"messages": held, "settle_seconds": float(inspector_settings()["LIVE_SETTLE_SECONDS"])}


def held_messages(trace: models.Trace) -> list[dict[str, Any]]:
    """A live trace's held messages, each saying whether it may still grow: not once a
    later line of its loop completed it, nor once the trace has been quiet a moment."""
    if trace.state != models.Trace.State.LIVE:
        return []
    quiet = trace.live_activity_at is None or (
        timezone.now() - trace.live_activity_at
    ).total_seconds() >= float(inspector_settings()["LIVE_SETTLE_SECONDS"])
    return [
        {**message, "growing": not (message.get("complete") or quiet)}
        for message in (trace.report or {}).get("held", [])
    ]


RUNNING = MappingProxyType(
    {
        "kind": "running",
        "text": "Running: the loop is still being recorded; the outcome is decided when the "
        "trace closes.",
        "loop": None,
        "call": None,
    }
)
"""The outcome a live trace's report shows (a copy of it: `dict(RUNNING)`)."""


def state_payload(trace: models.Trace) -> dict[str, Any]:
    """The `state` event, sent after each stored report and at close: the trace's state
    and counts, and every summary figure of its page as data with the page's own text for
    each (traces.selectors.figures, which the page's first paint reads too), so a viewer
    shows what a reload would (static/js/live_figures.js)."""
    return {
        "state": trace.state,
        "lines": trace.lines_total,
        "calls": trace.calls_count,
        "tool_runs": trace.tool_runs_count,
        "findings": trace.flags_count,
        "outcome": {"kind": trace.outcome_kind, "text": trace.outcome_text},
        "cost_usd": (trace.report.get("totals") or {}).get("cost_usd"),
        "figures": trace_figures(trace),
    }


def empty_trace(format_name: str) -> CoreTrace:
    return TraceBuilder(format_name).snapshot(0, 0)
