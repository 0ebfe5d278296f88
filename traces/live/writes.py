"""Writes of live traces: create, append a batch of lines, close, and sweep the idle ones.

The HTTP API, the ingest websocket, `manage.py tail` and the capture receivers all call
`append_lines`, so a live trace takes the same path as an upload, a few lines at a
time: the core's `TraceSession` reads them with the same adapter, the rows are written
by the same functions as an upload's (`traces.storage.rows`), and the original bytes are kept
byte-identical (one zstd `SourceChunk` per accepted batch, in line order).

Offsets make appends idempotent: a batch says how many lines the client had sent before
it; lines already stored at those positions are acknowledged, not stored twice, and a
batch that would leave a gap is refused with the offset expected. Appends to one trace
are serialised by a lock on its row (`select_for_update`; on SQLite the IMMEDIATE
transaction mode serialises writers).

After each batch, the new calls and changed tool runs are stored and pushed to viewers
at once (traces.live.events); the full report follows in a queue task
(traces.live.worker). Closing (explicitly, or after `LIVE_IDLE_SECONDS` without a line)
finishes the session like an upload: calls still waiting become failed calls and tool
calls without a result become dangling. There is no background timer for the idle
timeout: it is checked when lines arrive for the trace, when a live trace is created or
a viewer connects (a sweep of all live traces), and by `manage.py close_idle_traces`.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import orjson
from django.db import transaction
from django.utils import timezone

from traces import models
from traces.access.rules import local_mode
from traces.conf import inspector_settings, limits
from traces.core.analysis.ingest import TraceSession, choose_format
from traces.core.gcpause import cycle_collector_paused
from traces.core.outputs.report import report_and_basis
from traces.core.reading.limits import InputRejected
from traces.core.reading.records import Record
from traces.core.reading.redact import merge_fields, redact
from traces.live import sessions
from traces.live.events import (
    LiveEventData,
    Marks,
    account_events,
    empty_trace,
    finding_events,
    held_payload,
    save_events,
    state_payload,
    store_changes,
)
from traces.live.reports import empty_report
from traces.live.sessions import (
    LiveEntry,
    locked_trace,
    parse_lines,
    split_body,
    terminated,
)
from traces.live.worker import request_refresh, request_refresh_of_new
from traces.services.ingest import redacts
from traces.services.prices import price_table_for
from traces.storage import originals
from traces.storage.report_parts import store_report_parts
from traces.storage.rows import store_rule_counts, summary_fields
from traces.storage.usage import store_usage_rows
from traces.stores import store

__all__ = ("split_body",)


class LiveError(Exception):
    """An append or close the live trace cannot take; the API maps each kind to a status."""


class OffsetGap(LiveError):
    """The batch starts beyond the stored lines: the client must resend from `expected`."""

    def __init__(self, expected: int) -> None:
        super().__init__(f"lines are missing: the next line expected is at offset {expected}")
        self.expected = expected


class TraceNotLive(LiveError):
    def __init__(self, state: str) -> None:
        super().__init__(f"the trace is {state}, not live: it takes no more lines")
        self.state = state


@dataclass(frozen=True, slots=True)
class AppendResult:
    total: int
    """Lines stored for the trace after this batch (the client's next offset)."""
    accepted: int
    """Lines of this batch stored now (the rest were already stored)."""


def _idle_seconds() -> float:
    return float(inspector_settings()["LIVE_IDLE_SECONDS"])


def create_live_trace(
    *,
    name: str = "",
    format_name: str | None = None,
    filename: str = "",
    project: models.Project | None = None,
    created_by: Any = None,
    capture_key: str = "",
) -> models.Trace:
    """A new, empty live trace. Raises InputRejected for an unknown format name. The
    endpoints that create one also ask for a sweep of idle traces (`live.idle`)."""
    choice = choose_format([], format_name) if format_name else None
    format_id = choice.name if choice else ""
    return models.Trace.objects.create(
        project=project or models.Project.default(),
        created_by=created_by,
        name=name[:300] or filename[:300] or "live trace",
        format=format_id,
        detection_reason=choice.reason if choice else "",
        source_filename=filename[:300],
        state=models.Trace.State.LIVE,
        live_activity_at=timezone.now(),
        report=orjson.loads(empty_report(format_id)),
        capture_key=capture_key[:200],
    )


def append_lines(
    *,
    trace_id: Any,
    offset: int | None,
    lines: Sequence[bytes],
    created: models.Trace | None = None,
) -> AppendResult:
    """Store the lines the client sent after its first `offset` lines, once each; with
    `offset=None`, after whatever is stored (a capture that is the trace's only writer
    and never resends: the recording proxy, the OTLP receiver).

    Raises OffsetGap, TraceNotLive, models.Trace.DoesNotExist, or InputRejected when the
    first readable lines are no known format or the trace would exceed the size limit.

    `created`: the trace's row, as `create_live_trace` returned it inside the caller's
    still open transaction (the OTLP receiver's): no other writer can see or lock it
    yet, so it is used as it is, not read again, and its report refresh is claimed with
    the append's writes.
    """
    if offset is not None and offset < 0:
        raise OffsetGap(0)
    entry = store(sessions.AppendSessions).entry(trace_id)
    with entry.lock, cycle_collector_paused():
        try:
            # A `created` trace's row is in the caller's transaction, whose own savepoint
            # undoes both if the append fails: no second savepoint for it.
            with transaction.atomic(savepoint=created is None):
                result = _append_locked(entry, trace_id, offset, lines, created)
        except BaseException:
            entry.reset()  # the session may hold lines the database does not
            raise
        if result is None:  # it had been idle too long: closed instead
            entry.reset()
            store(sessions.AppendSessions).forget(trace_id)
            raise TraceNotLive(models.Trace.State.CLOSED)
        return result


def close_live_trace(*, trace_id: Any) -> models.Trace:
    """Finish a live trace like an upload and mark it closed (idempotent)."""
    entry = store(sessions.AppendSessions).entry(trace_id)
    with entry.lock:
        try:
            with transaction.atomic():
                trace = locked_trace(trace_id)
                if trace.state == models.Trace.State.LIVE:
                    _close_locked(entry, trace)
        finally:
            entry.reset()
            store(sessions.AppendSessions).forget(trace_id)
            store(sessions.Snapshots).forget(trace_id)
    return trace


def sweep_idle() -> list[uuid.UUID]:
    """Close every live trace that has had no line for LIVE_IDLE_SECONDS; their ids."""
    cutoff = timezone.now() - timedelta(seconds=_idle_seconds())
    idle = list(
        models.Trace.objects.filter(
            state=models.Trace.State.LIVE, live_activity_at__lt=cutoff
        ).values_list("pk", flat=True)
    )
    for trace_id in idle:
        close_live_trace(trace_id=trace_id)
    return idle


def _idle(trace: models.Trace) -> bool:
    cutoff = timezone.now() - timedelta(seconds=_idle_seconds())
    return trace.live_activity_at is not None and trace.live_activity_at < cutoff


APPEND_FIELDS = (
    "format",
    "detection_reason",
    "source_bytes",
    "live_activity_at",
    "events_seq",
    "lines_total",
    "records_ingested",
    "calls_count",
    "failed_calls",
    "loops_count",
    "tool_runs_count",
    "line_errors_count",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "started_at",
    "ended_at",
    "outcome_kind",
    "outcome_text",
    "redacted",
)
"""What an append changes on the trace row: never the report, which can be large."""


def _append_locked(
    entry: LiveEntry,
    trace_id: Any,
    offset: int | None,
    lines: Sequence[bytes],
    created: models.Trace | None = None,
) -> AppendResult | None:
    """The append, under the row lock; None when the trace was idle too long and was
    closed instead (committed, then reported as not live)."""
    trace = created if created is not None else locked_trace(trace_id, with_report=False)
    if trace.state != models.Trace.State.LIVE:
        raise TraceNotLive(trace.state)
    if _idle(trace):
        _close_locked(entry, trace)
        return None
    total = trace.lines_total
    if offset is None:
        offset = total
    if offset > total:
        raise OffsetGap(total)
    fresh = [terminated(line) for line in lines[total - offset :]]
    # Only a shared server redacts, by its project's setting: a local one never reads the
    # project row (a query per append, unless `created` has it already).
    if fresh and not local_mode() and redacts(trace.project):
        cleaned = [redact(line) for line in fresh]
        fresh = [result.data for result in cleaned]
        trace.redacted = merge_fields(trace.redacted, *(result.fields for result in cleaned))
    trace.live_activity_at = timezone.now()
    if not fresh:
        trace.save(update_fields=["live_activity_at"])
        return AppendResult(total, 0)
    data = b"".join(fresh)
    max_bytes = limits().max_file_bytes
    if trace.source_bytes + len(data) > max_bytes:
        raise InputRejected(f"The live trace would pass the {max_bytes:,}-byte limit.")
    items = list(parse_lines(fresh, first_line=total + 1))
    format_was_known = bool(trace.format)
    if not format_was_known:
        values = [item.value for item in items if isinstance(item, Record)]
        if values:
            choice = choose_format(values)  # InputRejected when no adapter claims them
            trace.format, trace.detection_reason = choice.name, choice.reason[:500]
    originals.chunk_create(
        trace,
        seq=total,  # unique and in order: the lines stored before this chunk
        data=data,
        first_line=total + 1,
        line_count=len(fresh),
    )
    trace.lines_total = total + len(fresh)
    trace.source_bytes += len(data)
    events: list[tuple[str, LiveEventData]] = []
    if trace.format:
        session = entry.synced(trace, through=total, from_scratch=not format_was_known)
        before = Marks.of(session) if format_was_known else Marks()
        session.feed(items)
        entry.lines_fed = trace.lines_total
        snapshot = session.snapshot(trace.lines_total)
        events = store_changes(trace, session, before, snapshot)
        held = session.held()
        if held != entry.held:
            entry.held = held
            events.append(("held", held_payload(held)))
        lines = trace.lines_total
        snapshots = store(sessions.Snapshots)
        transaction.on_commit(lambda: snapshots.remember(trace_id, lines, snapshot, held))
    save_events(trace, events)
    trace.save(update_fields=APPEND_FIELDS)
    if created is not None:
        request_refresh_of_new(trace.pk)
    else:
        transaction.on_commit(lambda: request_refresh(trace.pk))
    return AppendResult(trace.lines_total, len(fresh))


def _close_locked(entry: LiveEntry, trace: models.Trace) -> None:
    """Finish the session (pending calls fail, waiting tool calls dangle), store what that
    changed and the final report, and tell viewers the trace is closed."""
    session: TraceSession | None = None
    before = Marks()
    core = empty_trace(trace.format)
    if trace.format:
        session = entry.synced(trace, through=trace.lines_total, from_scratch=False)
        before = Marks.of(session)
        core = session.finish(trace.lines_total)
    report, basis = report_and_basis(core, prices=price_table_for(trace.project_id))
    events = store_changes(trace, session, before, core)
    events += account_events(trace.report, report) + finding_events(trace.report, report)
    digest = hashlib.sha256()
    for data in originals.chunks_bytes(originals.trace_chunks(trace)):
        digest.update(data)
    trace.source_sha256 = digest.hexdigest()
    stored_lines = trace.lines_total
    trace.report = report
    trace.report_lines = stored_lines
    for name, value in summary_fields(core, report).items():
        setattr(trace, name, value)
    trace.lines_total = stored_lines  # every line sent, blank ones included
    trace.state = models.Trace.State.CLOSED
    events.append(("state", state_payload(trace)))
    save_events(trace, events)
    trace.save()
    store_rule_counts(trace, report)
    store_usage_rows(trace, report)
    store_report_parts(trace, report, basis=basis)  # a long closed session's moves read parts


def live_status(*, trace_id: Any) -> dict[str, Any]:
    """Where a client stands: stored lines (its next offset) and the state."""
    trace = models.Trace.objects.only("state", "lines_total").get(pk=trace_id)
    return {"id": str(trace.pk), "total": trace.lines_total, "state": trace.state}
